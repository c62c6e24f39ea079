"""The search store's one interface on both backends: indexes.db (SQLite, FTS5) and
PostgreSQL (app-side FTS5 tokens in a tsvector, FTS5's BM25).

Every case runs on SQLite, and on PostgreSQL when GENERALAGENT_TEST_DATABASE_URL names a
server (`.ci/run` starts one; in CI the PostgreSQL cases fail instead of skipping
without it). Each PostgreSQL case gets a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import pytest

from generalAgent.config.settings import Settings
from generalAgent.migrations import NewerSchemaError
from generalAgent.search.store import (
    TERMINAL,
    SearchStore,
    SpaceError,
    SqliteSearchStore,
    StoredItem,
    Viewer,
    copy_store,
)
from tests.support.search_store import found, open_store, put, rows_of

ALICE = Viewer("alice", ("team",))
BOB = Viewer("bob", ("team",))
CAROL = Viewer("carol")  # in no team


def test_english_chinese_phrases_and_stems_are_found(store: SearchStore) -> None:
    put(store, "tar", ["The tar command creates archives of files.", "Possibly the oldest archiver."])
    put(store, "sales", ["客户满意度调查显示增长率明显提高。", "本季度营收稳定。"])
    put(store, "agents", ["A multi-agent system on version 4.1 of the protocol."])
    assert found(store, "archive") == ["tar"]  # Porter: "archives" and "archive" meet
    assert found(store, "possible oldest") == ["tar"]
    assert found(store, "增长率") == ["sales"]
    assert found(store, "营收") == ["sales"]
    assert found(store, "multi-agent 4.1") == ["agents"]
    assert found(store, "agent multi") == ["agents"]  # words apart: each one a term
    assert found(store, "4.2") == []  # a phrase: 4 and 1 must stand together
    hits = store.search("command creates", 10, TERMINAL)
    assert (hits[0].item_id, hits[0].page, hits[0].place) == ("tar", 1, "page 1")


def test_a_search_in_one_item_and_in_one_domain_stays_there(store: SearchStore) -> None:
    put(store, "one", ["walrus migration in the Bering strait"], domain="documents")
    put(store, "two", ["walrus colonies and their migration"], domain="notes")
    assert found(store, "walrus migration", item_id="one") == ["one"]
    assert found(store, "walrus", domain="notes") == ["two"]
    assert sorted(found(store, "walrus")) == ["one", "two"]
    assert found(store, "walrus", item_id="missing") == []


def test_a_chinese_character_jieba_never_cuts_out_is_found_by_the_scan(store: SearchStore) -> None:
    put(store, "table", ["请把结果整理成表格发给我。"])
    assert found(store, "表") == ["table"]


def test_a_question_worded_otherwise_finds_the_chunk_holding_most_of_its_characters(
    store: SearchStore,
) -> None:
    """No FTS5 term of "行距 设成 两倍" is a word of "双倍 … 行间距": the scan's words and
    characters find it, and a chunk sharing two characters is not shown (both backends)."""
    put(store, "spacing", ["如何设置双倍或者更大的行间距？使用命令设为倍数。"])
    put(store, "fonts", ["两个字库"])
    assert found(store, "怎么把行距设成两倍") == ["spacing"]


def test_with_vectors_the_chunk_the_scan_finds_keeps_its_seat(store: SearchStore) -> None:
    """The same question with vectors that rank five other chunks nearer: no FTS5 term
    matched, so the vectors alone answered and the scan's chunk was lost (unseen zh dev:
    3rd with keywords, not in the top ten with vectors); it keeps its seat in the top five."""
    spacing = put(store, "spacing", ["如何设置双倍或者更大的行间距？使用命令设为倍数。"])
    others = [put(store, f"other{n}", [f"第{n}章的正文"])[0] for n in range(6)]
    nearer = [[(rowid, 0.9 - n / 100) for n, rowid in enumerate(others)]]
    hits = store.find_chunks("怎么把行距设成两倍", 10, semantic=nearer)
    assert spacing[0] in [hit.rowid for hit in hits[:5]]
    assert [hit.rowid for hit in store.find_chunks("怎么把行距设成两倍", 10)] == spacing


def test_replacing_an_item_replaces_its_chunks_and_deleting_it_deletes_them(store: SearchStore) -> None:
    first = put(store, "note", ["apples and pears", "more apples"])
    assert len(first) == 2
    put(store, "note", ["only bananas now"])
    assert found(store, "apples") == []
    assert found(store, "bananas") == ["note"]
    assert [h.text for h in store.window("note", 0, 5)] == ["only bananas now"]
    assert store.delete_item("note", TERMINAL)
    assert found(store, "bananas") == []
    assert store.get_item("note", TERMINAL) is None
    assert not store.delete_item("note", TERMINAL)


def test_chunks_of_one_item_have_consecutive_rowids_and_a_window_reads_them_in_order(
    store: SearchStore,
) -> None:
    put(store, "a", ["alpha one", "alpha two"])
    rowids = put(store, "b", ["beta one", "beta two", "beta three"])
    assert rowids == list(range(rowids[0], rowids[0] + 3))
    assert store.item_rowid_range("b") == (rowids[0], rowids[-1])
    assert [h.text for h in store.window("b", 1, 9)] == ["beta two", "beta three"]


def test_a_user_never_sees_another_users_private_space(store: SearchStore) -> None:
    put(store, "alice-note", ["the launch code is walrus"], ALICE)
    put(store, "bob-note", ["bob keeps his walrus drawings here"], BOB)
    put(store, "team-doc", ["the walrus handbook for the whole team"], ALICE, space="team")
    assert sorted(found(store, "walrus", ALICE)) == ["alice-note", "team-doc"]
    assert sorted(found(store, "walrus", BOB)) == ["bob-note", "team-doc"]
    assert found(store, "walrus", CAROL) == []
    assert found(store, "launch code", BOB) == []
    assert store.get_item("alice-note", BOB) is None
    assert store.get_item("team-doc", BOB) is not None
    assert [i.id for i in store.list_items(BOB)] == ["bob-note", "team-doc"]
    assert not store.delete_item("alice-note", BOB)
    assert found(store, "launch code", ALICE) == ["alice-note"]
    assert found(store, "walrus", TERMINAL) == []  # the terminal's own space holds none of these


def test_nobody_writes_into_a_space_they_are_not_part_of(store: SearchStore) -> None:
    put(store, "alice-note", ["private walrus"], ALICE)
    with pytest.raises(SpaceError):
        put(store, "carol-team", ["sneaked in"], CAROL, space="team")
    with pytest.raises(SpaceError):  # Bob cannot overwrite Alice's note by its id
        put(store, "alice-note", ["overwritten"], BOB)
    with pytest.raises(SpaceError):  # nor write in Alice's name
        store.put_item(
            StoredItem(id="forged", domain="notes", title="f", content="f", owner="alice"),
            rows_of("forged", ["forged text"]),
            BOB,
        )
    assert found(store, "walrus", ALICE) == ["alice-note"]
    put(store, "shared", ["team walrus"], BOB, space="team")
    put(store, "shared", ["team walrus, edited by alice"], ALICE, space="team")
    assert [h.text for h in store.window("shared", 0, 0)] == ["team walrus, edited by alice"]


def unit(values: list[float]) -> bytes:
    norm = sum(v * v for v in values) ** 0.5
    return struct.pack(f"<{len(values)}f", *(v / norm for v in values))


def test_vectors_rank_by_cosine_within_what_the_viewer_sees(store: SearchStore) -> None:
    put(store, "north", ["north text"], ALICE, vectors=[unit([1, 0, 0])])
    put(store, "east", ["east text"], ALICE, space="team", vectors=[unit([0.8, 0.6, 0])])
    put(store, "bob", ["bob text"], BOB, vectors=[unit([1, 0.01, 0])])
    query = unit([1, 0, 0])
    ranked = store.nearest(query, "test-model", 5, ALICE)
    rowids = [rowid for rowid, _ in ranked]
    assert rowids == [store.item_rowid_range("north")[0], store.item_rowid_range("east")[0]]  # type: ignore[index]
    assert ranked[0][1] == pytest.approx(1.0, abs=1e-6)
    assert store.nearest(query, "other-model", 5, ALICE) == []
    assert [r for r, _ in store.nearest(query, "test-model", 5, ALICE, item_id="east")] == rowids[1:]


def test_plain_bm25_ranks_by_the_indexs_own_words_so_a_page_the_tuned_query_misses_is_shown(
    store: SearchStore,
) -> None:
    """jieba's precise mode cuts the question "在沙盒里运行不受信任的程序" into 在 / 沙 / 盒里 /
    ... and the tuned query joins the lone characters into the phrase "在 沙"; the page says
    "用沙盒隔离", where 沙 follows 用, so its only tuned terms are "不 受" and 信任, which
    eight pages about running programs hold as well: it came 9th (the bilingual set's tuning
    half: bm25s 2nd, ours past 10th). Plain BM25 takes the index's own words one by one, 沙
    among them, ranks the page first, and the fusion seats it in the top five (both backends)."""
    put(store, "sandbox", ["用沙盒隔离不受信任的应用。"])
    for n in range(8):
        page = f"第{n}节：运行不受信任的程序之前，先确认程序的来源；运行程序的命令见第{n}章。"
        put(store, f"run{n}", [page])
    assert "sandbox" in found(store, "在沙盒里运行不受信任的程序")[:5]


def corpus(items: int, chunks_per_item: int, seed: int = 7) -> dict[str, list[str]]:
    """Deterministic text in both languages with common and rare words: enough chunks for
    the large-index pruning (over CANDIDATE_BUDGET) to take place."""
    rng = random.Random(seed)
    english = [
        "file",
        "option",
        "system",
        "archive",
        "network",
        "user",
        "process",
        "memory",
        "command",
        "output",
    ]
    rare = ["walrus", "fjord", "quasar", "zeppelin", "obsidian"]
    chinese = ["文件", "系统", "网络", "用户", "进程", "内存", "命令", "输出", "海象", "峡湾"]
    result = {}
    for n in range(items):
        texts = []
        for _ in range(chunks_per_item):
            words = rng.choices(english, k=rng.randint(5, 40)) + rng.choices(chinese, k=rng.randint(0, 10))
            if rng.random() < 0.05:
                words.append(rng.choice(rare))
            texts.append(" ".join(words))
        result[f"item{n:03d}"] = texts
    return result


QUERIES = [
    "walrus",
    "file system",
    "archive network user",
    "文件系统",
    "网络 文件系统",  # a chunk holding 文件 without 系统 is scored on 网络 alone (FTS5)
    "海象 峡湾",
    "用户进程内存",
    "option output quasar",
    ["memory command", "内存 命令"],
    "zeppelin obsidian fjord",
]


@pytest.mark.parametrize("size", [(12, 20), (30, 40)], ids=["small", "pruned"])
def test_postgresql_ranks_as_sqlite_does(
    settings: Settings, request: pytest.FixtureRequest, size: tuple[int, int]
) -> None:
    """The same items in both backends give the same places in the same order with the
    same fused scores: the PostgreSQL BM25 is FTS5's, on FTS5's tokens. 1,200 chunks take
    the rare-term pruning path (lookup.CANDIDATE_BUDGET)."""
    lite = open_store("sqlite", settings, request)
    pg = open_store("postgresql", settings, request)
    try:
        for item_id, texts in corpus(*size).items():
            put(lite, item_id, texts, title=f"Title {item_id}")
        assert isinstance(lite, SqliteSearchStore)
        copy_store(lite.conn, pg)
        compare_rankings(lite, pg)
        # Deleting and replacing items keeps PostgreSQL's document frequencies and totals
        # (term_chunks, chunk_totals) what FTS5 counts.
        for store in (lite, pg):
            for item_id in ("item001", "item004", "item007"):
                assert store.delete_item(item_id, TERMINAL)
            put(store, "item002", ["walrus walrus fjord", "文件 海象"], title="Replaced")
        compare_rankings(lite, pg)
    finally:
        lite.close()
        pg.close()


def compare_rankings(lite: SearchStore, pg: SearchStore) -> None:
    for query in QUERIES:
        expected = lite.search(query, 10, TERMINAL)
        got = pg.search(query, 10, TERMINAL)
        assert expected, query
        assert [(h.rowid, h.folded) for h in got] == [(h.rowid, h.folded) for h in expected], query
        assert [h.score for h in got] == pytest.approx([h.score for h in expected]), query
        one = expected[0].item_id
        assert [h.rowid for h in pg.search(query, 5, TERMINAL, item_id=one)] == [
            h.rowid for h in lite.search(query, 5, TERMINAL, item_id=one)
        ], query


def test_the_postgresql_schema_is_versioned_and_a_newer_one_is_refused(
    settings: Settings, pg_schema: tuple[str, str]
) -> None:
    from generalAgent.search.postgres_schema import MIGRATIONS
    from generalAgent.search.postgres_store import PostgresSearchStore

    url, schema = pg_schema
    with PostgresSearchStore(url, settings.documents, schema=schema) as first:
        put(first, "kept", ["a note that must survive"])
        version = first.conn.execute("SELECT version FROM schema_versions WHERE track = 'index'").fetchone()[
            0
        ]
        assert version == len(MIGRATIONS)
    with PostgresSearchStore(url, settings.documents, schema=schema) as again:  # nothing applied twice
        assert found(again, "survive") == ["kept"]
        again.conn.execute("UPDATE schema_versions SET version = version + 1 WHERE track = 'index'")
    with pytest.raises(NewerSchemaError, match="newer release"):
        PostgresSearchStore(url, settings.documents, schema=schema)


def test_a_claim_on_a_pdfs_tables_holds_a_time_past_2038_on_postgresql(
    settings: Settings, pg_schema: tuple[str, str]
) -> None:
    """`tables_pending` holds the Unix time a reader of the tables began (documents/index.py):
    a 32-bit INTEGER column refused any time from 2038-01-19 on."""
    from generalAgent.search.postgres_store import PostgresSearchStore

    url, schema = pg_schema
    later = 4_102_444_800  # 2100-01-01
    with PostgresSearchStore(url, settings.documents, schema=schema) as store:
        put(store, "report", ["a page of text"])
        store.conn.execute(
            "INSERT INTO documents (file_hash, item_id, file_name, file_type, file_size, indexed_at,"
            " total_chunks, segmenter, language, tables_pending)"
            " VALUES ('h', 'report', 'report.pdf', 'pdf', 1, '0', 1, 'jieba', 'en', %s)",
            (later,),
        )
        row = store.conn.execute("SELECT tables_pending FROM documents WHERE file_hash = 'h'").fetchone()
        assert row[0] == later


def chunks_read(pg: Any, url: str, schema: str) -> int:
    """Rows of the store's `chunks` table PostgreSQL has read so far (scanned or fetched by
    an index), after `pg`'s connection flushed its statistics."""
    import psycopg

    pg.sql.execute("SELECT pg_stat_force_next_flush()")
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute(
            "SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0) FROM pg_stat_user_tables"
            " WHERE schemaname = %s AND relname = 'chunks'",
            (schema,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_store_of_schema_version_4_gets_its_item_terms_counted_by_the_migration(
    settings: Settings, pg_schema: tuple[str, str]
) -> None:
    """A team store written before item_terms (schema version 4) is counted when migration
    0005 adds them, and kept by the triggers from there on."""
    from unittest import mock

    import psycopg

    from generalAgent.search import postgres_schema
    from generalAgent.search.postgres_store import PostgresSearchStore

    url, schema = pg_schema
    with (
        mock.patch.object(postgres_schema, "MIGRATIONS", postgres_schema.MIGRATIONS[:4]),
        PostgresSearchStore(url, settings.documents, schema=schema) as old,
    ):
        put(old, "manual", ["plot legend axis", "plot the axis", "图例 位置"], title="Manual")
    with PostgresSearchStore(url, settings.documents, schema=schema) as store:
        put(store, "later", ["legend later"])
        assert sorted(found(store, "legend")) == ["later", "manual"]
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'SET search_path TO "{schema}"')
        recount = admin.execute(
            "SELECT item_id, word, count(*) FROM chunks, unnest(tsvector_to_array(terms)) AS word"
            " WHERE left(word, 1) IN ('a', 'b') GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
        kept = admin.execute("SELECT item_id, lexeme, chunks FROM item_terms ORDER BY 1, 2").fetchall()
    assert kept == recount and {row[0] for row in kept} == {"manual", "later"}
    assert ("manual", "aplot", 2) in kept


def test_the_terminal_store_opens_an_existing_indexes_db_with_its_items_as_its_own(
    settings: Settings, tmp_path: Path
) -> None:
    """Items written before spaces existed (owner and space '') belong to the terminal."""
    from generalAgent.knowledge import KnowledgeStore

    with KnowledgeStore(settings.paths.indexes_db, settings.documents) as knowledge:
        added = knowledge.add_knowledge(title="Walrus facts", content="Walruses live in the Arctic.")
    with SqliteSearchStore(settings.paths.indexes_db, settings.documents) as lite:
        assert found(lite, "walruses arctic") == [added.id]
        assert found(lite, "walruses arctic", ALICE) == []


def test_a_search_inside_one_document_reads_its_chunks_twice_at_most(
    settings: Settings, request: pytest.FixtureRequest
) -> None:
    """A search inside a 1,500-chunk document whose every chunk holds one of the question's
    words (the words of a manual's subject are in most of its pages) reads no more than
    twice the document's chunks from PostgreSQL, however many words the question has:
    once to count its words, once to score the chunks; nor any chunk of a document
    written after it. Counting each word by its own scan, then scoring each pruned
    expression by another, read them nearly 7 times (a 10th of the speed of SQLite's
    search in such a document); finding its last rowid walked back from the store's last
    chunk, and the viewer's filter joined its chunks to every item the viewer sees. The
    places are SQLite's."""

    lite = open_store("sqlite", settings, request)
    pg = open_store("postgresql", settings, request)
    url, schema = request.getfixturevalue("pg_schema")
    rng = random.Random(3)
    words = ["axis", "label", "legend", "colour", "border", "margin", "grid", "scale"]
    texts = [f"plot {' '.join(rng.sample(words, 3))} chunk{n}" for n in range(1_500)]
    try:
        for store in (lite, pg):
            put(store, "manual", texts, title="Manual")
            # Written after it, and as visible: neither its rowids nor its chunks are read.
            put(store, "other", [f"plot axis elsewhere {n}" for n in range(1_500)], title="Other")
        pg.sql.execute("ANALYZE")
        query = "plot axis label legend colour"

        pg.search(query, 5, TERMINAL, item_id="manual")  # the connection's first statements
        before = chunks_read(pg, url, schema)
        got = pg.search(query, 5, TERMINAL, item_id="manual")
        read = chunks_read(pg, url, schema) - before
        assert [h.rowid for h in got] == [h.rowid for h in lite.search(query, 5, TERMINAL, item_id="manual")]
        assert 0 < read <= 2 * len(texts) + 50, read
    finally:
        lite.close()
        pg.close()


def test_a_search_inside_one_document_reads_only_the_chunks_of_its_rarer_words(
    settings: Settings, request: pytest.FixtureRequest
) -> None:
    """In a 1,500-chunk document where one word of the question is in every chunk and the
    other in a few, PostgreSQL reads those few (through the GIN index), not the document:
    the words are counted from item_terms, kept per item by the store's triggers (through
    writes, a replacement and a deletion, as a recount finds them). Counting them read
    every chunk of the document, and the scoring walked its rowid range again. The
    places are SQLite's."""
    import psycopg

    lite = open_store("sqlite", settings, request)
    pg = open_store("postgresql", settings, request)
    url, schema = request.getfixturevalue("pg_schema")
    texts = [f"plot {'legend ' if n % 150 == 7 else ''}axis chunk{n}" for n in range(1_500)]
    try:
        for store in (lite, pg):
            put(store, "early", ["plot legend before"])
            put(store, "manual", texts, title="Manual")
            put(store, "other", [f"plot axis elsewhere {n}" for n in range(1_500)], title="Other")
            put(store, "early", ["plot legend replaced", "a second chunk"])
            put(store, "gone", ["plot legend gone"])
            store.delete_item("gone", TERMINAL)
        pg.sql.execute("ANALYZE")
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'SET search_path TO "{schema}"')
            recount = admin.execute(
                "SELECT item_id, word, count(*) FROM chunks, unnest(tsvector_to_array(terms)) AS word"
                " WHERE left(word, 1) IN ('a', 'b') GROUP BY 1, 2 ORDER BY 1, 2"
            ).fetchall()
            kept = admin.execute("SELECT item_id, lexeme, chunks FROM item_terms ORDER BY 1, 2").fetchall()
        assert kept == recount and any(row[0] == "manual" for row in kept)

        query = "plot legend"
        pg.search(query, 5, TERMINAL, item_id="manual")  # the connection's first statements
        before = chunks_read(pg, url, schema)
        got = pg.search(query, 5, TERMINAL, item_id="manual")
        read = chunks_read(pg, url, schema) - before
        assert [h.rowid for h in got] == [h.rowid for h in lite.search(query, 5, TERMINAL, item_id="manual")]
        assert len(got) == 5 and 0 < read <= 50, read
    finally:
        lite.close()
        pg.close()


class FixedVectors:
    """An embedder that gives every text the same vector (the query's, here)."""

    def __init__(self, model: str, blob: bytes) -> None:
        self.model, self.blob = model, blob

    def vectors(self, texts: list[str]) -> list[bytes]:
        return [self.blob for _ in texts]


def test_without_pgvector_the_store_scans_its_vectors_exactly(
    settings: Settings, request: pytest.FixtureRequest
) -> None:
    """The store uses pgvector exactly when the server offers it; without it a search of
    the whole store has no index to ask and scans the vectors (the warning past
    EXACT_SCAN_WARN is StoreCommon.nearest's)."""
    from generalAgent.search.postgres_store import PostgresSearchStore

    pg = open_store("postgresql", settings, request)
    assert isinstance(pg, PostgresSearchStore)
    try:
        offered = pg.sql.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        assert (pg.knn is not None) == (offered is not None)
        if pg.knn is None:
            put(pg, "north", ["north text"], vectors=[unit([1, 0, 0])])
            pg.settle_vectors("test-model")
            assert pg.whole_store_nearest(FixedVectors("test-model", unit([1, 0, 0])), "north", 5) is None
            ranked = pg.nearest_chunks(FixedVectors("test-model", unit([1, 0, 0])), ["north"])
            assert [r for r, _ in ranked[0]] == [pg.item_rowid_range("north")[0]]  # type: ignore[index]
    finally:
        pg.close()


def test_with_pgvector_a_whole_store_search_asks_its_hnsw_index(
    settings: Settings, pgvector_url: str
) -> None:
    """On a server with pgvector the store creates the extension, copies each model's
    vectors when a pass settles them, indexes them with HNSW (the search's plan uses the
    index) and answers as the exact scan does; vectors replaced by another model's leave
    the copy."""
    import uuid

    import psycopg

    from generalAgent.search.postgres_store import PostgresSearchStore

    schema = f"test_{uuid.uuid4().hex[:12]}"
    pg = PostgresSearchStore(pgvector_url, settings.documents, schema=schema)
    try:
        assert pg.knn is not None
        rng = random.Random(5)
        directions = [unit([rng.uniform(-1, 1) for _ in range(8)]) for _ in range(60)]
        for n, blob in enumerate(directions):
            put(pg, f"item{n:02d}", [f"text {n}"], vectors=[blob])
        query = directions[7]
        embedder = FixedVectors("test-model", query)
        assert pg.whole_store_nearest(embedder, "q", 5) is None  # no pass has settled them yet
        pg.settle_vectors("test-model")
        by_index = pg.whole_store_nearest(embedder, "q", 5)
        exact = pg.nearest(query, "test-model", 5, TERMINAL)
        assert by_index is not None
        assert [r for r, _ in by_index] == [r for r, _ in exact]
        assert by_index[0][1] == pytest.approx(1.0, abs=1e-5)
        assert pg.nearest_chunks(embedder, ["q"])[0][:5] == by_index
        statement = pg.knn.nearest_sql("test-model", 8).as_string(pg.conn)
        literal = "'[" + ",".join(["0.5"] * 8) + "]'"
        with pg.conn.transaction():
            pg.conn.execute("SET LOCAL enable_seqscan = off")  # 60 rows: a scan would be cheaper
            plan = pg.conn.execute(
                "EXPLAIN " + statement.replace("%s", literal, 2).replace("%s", "5")
            ).fetchall()
        text = " ".join(row[0] for row in plan)
        assert "Index Scan using knn_" in text, text
        # Another model's vectors replace these: the copy follows at the next settling.
        pg.sql.execute(
            "UPDATE chunk_vectors SET model = 'other-model' WHERE chunk_rowid = ?", [by_index[0][0]]
        )
        pg.settle_vectors("test-model")
        assert by_index[0][0] not in [r for r, _ in pg.whole_store_nearest(embedder, "q", 5) or []]
    finally:
        pg.close()
        with psycopg.connect(pgvector_url, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_pgvector_lives_outside_the_store_and_its_index_is_built_without_holding_writers(
    settings: Settings, pgvector_url: str
) -> None:
    """The extension is the database's (in `public`): dropping a store's schema leaves it,
    and the other stores' vectors, alone. An embedding pass's HNSW index is built after the
    copy's transaction, CONCURRENTLY: while a build waits (here for a transaction that holds
    the copy table, as a long build would take minutes), another replica's writer adds and
    replaces documents at once; the index is usable once the build ends. A search asks
    pgvector for at least as many candidates as it wants (hnsw.ef_search)."""
    import threading
    import time
    import uuid

    import psycopg

    from generalAgent.search.postgres_store import PostgresSearchStore

    schemas = [f"test_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    pg = PostgresSearchStore(pgvector_url, settings.documents, schema=schemas[0])
    other = PostgresSearchStore(pgvector_url, settings.documents, schema=schemas[1])
    blocker = psycopg.connect(pgvector_url)
    try:
        assert pg.knn is not None and pg.knn.schema == "public"
        rng = random.Random(9)
        directions = [unit([rng.uniform(-1, 1) for _ in range(8)]) for _ in range(80)]
        for n, blob in enumerate(directions):
            put(pg, f"item{n:02d}", [f"text {n}"], vectors=[blob])
        put(other, "kept", ["kept text"], vectors=[directions[0]])
        other.settle_vectors("test-model")
        pg.settle_vectors("test-model")  # the first model's index, and knn_chunks
        pg.sql.execute("UPDATE chunk_vectors SET model = 'model-b'")
        # A transaction that wrote to the copy table and stays open: an index build on that
        # table (CREATE INDEX, or CONCURRENTLY's wait for older writers) waits for it.
        blocker.execute(f'DELETE FROM "{schemas[0]}".knn_chunks WHERE false')
        settled = threading.Thread(target=pg.settle_vectors, args=("model-b",), daemon=True)
        settled.start()
        waiting = (
            "SELECT 1 FROM pg_stat_activity WHERE query ILIKE 'CREATE INDEX%%' AND wait_event_type = 'Lock'"
        )
        with psycopg.connect(pgvector_url, autocommit=True) as watcher:
            deadline = time.monotonic() + 60
            while watcher.execute(waiting).fetchone() is None:
                assert time.monotonic() < deadline, "the index build never started"
                time.sleep(0.05)
        writer = PostgresSearchStore(pgvector_url, settings.documents, schema=schemas[0])
        wrote = threading.Event()

        def write() -> None:
            put(writer, "item00", ["replaced text"])  # its chunk's copy goes by cascade
            put(writer, "newcomer", ["new text"])
            wrote.set()

        threading.Thread(target=write, daemon=True).start()
        assert wrote.wait(30), "a writer waited for the index build"
        assert settled.is_alive()
        assert not pg.knn.indexed(writer.conn, "model-b")  # searches scan until it is built
        blocker.rollback()
        settled.join(60)
        assert not settled.is_alive()
        writer.close()
        embedder = FixedVectors("model-b", directions[7])
        by_index = pg.whole_store_nearest(embedder, "q", 60)
        assert by_index is not None and len(by_index) == 60  # ef_search 40 would cap it at 40
        assert by_index[0][0] == pg.item_rowid_range("item07")[0]  # type: ignore[index]
        with psycopg.connect(pgvector_url, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schemas[0]}" CASCADE')
            assert admin.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        kept = other.whole_store_nearest(FixedVectors("test-model", directions[0]), "q", 5)
        assert kept is not None and len(kept) == 1
    finally:
        blocker.close()
        pg.close()
        other.close()
        with psycopg.connect(pgvector_url, autocommit=True) as admin:
            for schema in schemas:
                admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_a_large_new_batch_of_vectors_rebuilds_the_hnsw_index_after_the_copy(
    settings: Settings, pgvector_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More new vectors than REBUILD_AFTER and than are indexed: the index is dropped, the
    copy made, the index built again (valid, answering with the new vectors); fewer are
    inserted into the standing index."""
    import uuid

    import psycopg

    from generalAgent.search import postgres_store
    from generalAgent.search.postgres_store import PostgresSearchStore

    monkeypatch.setattr(postgres_store, "REBUILD_AFTER", 10)
    schema = f"test_{uuid.uuid4().hex[:12]}"
    pg = PostgresSearchStore(pgvector_url, settings.documents, schema=schema)
    try:
        assert pg.knn is not None
        rng = random.Random(11)
        directions = [unit([rng.uniform(-1, 1) for _ in range(8)]) for _ in range(40)]
        for n, blob in enumerate(directions[:5]):
            put(pg, f"item{n:02d}", [f"text {n}"], vectors=[blob])
        pg.settle_vectors("test-model")
        first = pg.conn.execute(
            "SELECT c.oid FROM pg_class c WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
            (pg.knn._index_name("test-model"),),
        ).fetchone()
        for n, blob in enumerate(directions[5:8], start=5):  # 3 new: inserted into the index
            put(pg, f"item{n:02d}", [f"text {n}"], vectors=[blob])
        pg.settle_vectors("test-model")
        kept = pg.conn.execute(
            "SELECT c.oid FROM pg_class c WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
            (pg.knn._index_name("test-model"),),
        ).fetchone()
        assert kept == first
        for n, blob in enumerate(directions[8:], start=8):  # 32 new: the index is made again
            put(pg, f"item{n:02d}", [f"text {n}"], vectors=[blob])
        pg.settle_vectors("test-model")
        rebuilt = pg.conn.execute(
            "SELECT c.oid FROM pg_class c WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
            (pg.knn._index_name("test-model"),),
        ).fetchone()
        assert rebuilt is not None and rebuilt != first
        assert pg.knn.indexed(pg.conn, "test-model")
        ranked = pg.whole_store_nearest(FixedVectors("test-model", directions[30]), "q", 40)
        assert ranked is not None and len(ranked) == 40
        assert ranked[0][0] == pg.item_rowid_range("item30")[0]  # type: ignore[index]
    finally:
        pg.close()
        with psycopg.connect(pgvector_url, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_a_phrasings_weight_counts_its_words_in_the_searched_items_only(store: SearchStore) -> None:
    """A question asked as its Chinese words and their English rendering, in the English
    documents of a store that also holds a Chinese note: the Chinese phrasing's words are
    all in the store but only its stray command name is among the documents, so it must
    weigh little there. Counted over the whole store it weighed as much as the English
    phrasing, and its one match (a page about dpkg) came first."""
    put(store, "note", ["重启 保留 临时 文件 的 目录 说明"], domain="notes")
    put(store, "stray", ["dpkg unpacks packages; dpkg configures them."], domain="documents")
    put(store, "answer", ["Keep temporary files across a reboot in /var/tmp."], domain="documents")
    query = ["重启 保留 临时 文件 dpkg", "keep temporary files across a reboot"]
    assert found(store, query, domain="documents")[0] == "answer"


@pytest.mark.parametrize(
    "query", ["终端 应用程序", "终端 应用程序 e-mail"], ids=["one-word", "with-a-phrase"]
)
def test_a_part_of_a_word_jieba_cuts_in_two_adds_nothing_where_the_other_part_is_missing(
    store: SearchStore, query: str
) -> None:
    """应用程序 is searched as "(应用程序) OR (应用 AND 程序)", and FTS5 counts no part of
    an AND that fails in a chunk: a chunk holding 终端 and 应用 but no 程序 is scored on 终端
    alone, below the chunk holding 终端 twice. PostgreSQL scored the lone 应用 too and put
    it first; the English question "keep a program running in a terminal after I
    disconnect", glossed 应用程序 ... 终端 over the Chinese Debian Reference, found its page
    on PostgreSQL only (bilingual tuning half, en-zh 0.72 against SQLite's 0.68). A phrase
    of two words ("e-mail") takes the store's other scoring path, in Python."""
    for n in range(12):
        put(store, f"filler{n}", [f"第{n}章介绍文件系统和网络配置的基本知识"])
    put(store, "part", ["终端的应用说明"])
    put(store, "twice", ["终端的终端说明"])
    assert found(store, query) == ["twice", "part"]
