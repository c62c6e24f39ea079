"""The document index: matching, dedup, replacement, staleness, cascade deletes, on both
backends of the search store (indexes.db's FTS5, and a team's PostgreSQL store as
SEARCH_DATABASE_URL names it: tests/support/postgres.py); the cases about SQLite's own file
and lookup run on indexes.db only."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from generalAgent.config.settings import Settings, load_settings
from generalAgent.documents import (
    Passage,
    cleanup_old_indexes,
    cleanup_old_indexes_for_file,
    compute_file_hash,
    create_index,
    get_index_stats,
    index_exists,
    open_index,
    search_in_index,
)
from generalAgent.documents.index import QueryError, SearchIndex
from generalAgent.search.query import build_match_query
from tests.support.documents import make_pdf
from tests.support.postgres import fresh_schema_url

# Cases about indexes.db itself (its file, its connections, lookup.py on its connection).
SQLITE_ONLY = {
    "test_two_processes_can_index_at_once",
    "test_a_new_database_opened_by_several_connections_at_once",
    "test_past_the_budget_only_rarer_terms_find_candidates_with_the_same_scores",
    "test_searching_an_indexed_file_writes_nothing",
    "test_changing_the_segmenter_reindexes",
}
# Cases about a team's store, which several machines share.
POSTGRESQL_ONLY = {
    "test_the_same_path_on_two_machines_is_two_documents_and_the_same_bytes_one",
    "test_a_path_recorded_before_machines_were_told_apart_is_taken_over",
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        name = metafunc.function.__name__
        backends = ["sqlite", "postgresql"]
        metafunc.parametrize(
            "backend",
            ["sqlite"] if name in SQLITE_ONLY else ["postgresql"] if name in POSTGRESQL_ONLY else backends,
        )


@pytest.fixture
def settings(data_dir: Path, backend: str) -> Iterator[Settings]:
    """The suite's settings, the index on the test's backend (SEARCH_DATABASE_URL: a fresh schema)."""
    urls = fresh_schema_url() if backend == "postgresql" else iter([None])
    for url in urls:
        yield load_settings(
            env_file=None,
            model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
            paths={"data_dir": data_dir, "search_database_url": url},
        )


REPORT = """# 2024 年度报告

第一季度营收增长百分之二十，主要来自海外市场。客户满意度调查显示，满意度连续三个季度提升。

## Baseline results

The baseline model of version 4.1 reached 81% accuracy. Our multi-agent setup improved on
every baseline. Running the evaluation twice gave the same numbers.

## 数据表

表格中列出了各地区的收入。Revenue by region is listed in the table below.
"""


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "report.md"
    path.write_text(REPORT, encoding="utf-8")
    return path


@pytest.fixture
def index(settings: Settings) -> Iterator[SearchIndex]:
    with open_index(settings) as index:
        yield index


def found(index: SearchIndex, path: Path, query: str) -> list[str]:
    return [hit.text for hit in index.search(path, query, 5)]


def test_case_insensitive_and_stemmed_english(index: SearchIndex, report: Path):
    index.index_file(report)
    for query in ["baseline", "BASELINE", "BaseLine", "baselines", "run", "evaluations"]:
        assert any("baseline model" in t for t in found(index, report, query)), query


def test_chinese_words_are_found(index: SearchIndex, report: Path):
    index.index_file(report)
    for query in ["营收增长", "客户满意度", "满意度", "海外市场", "营收"]:
        assert any("营收增长" in t for t in found(index, report, query)), query


def test_one_and_two_character_chinese_words(index: SearchIndex, report: Path):
    index.index_file(report)
    assert any("表格" in t for t in found(index, report, "表"))  # only inside 表格
    assert any("收入" in t for t in found(index, report, "收入"))


def test_decimals_identifiers_and_mixed_queries(index: SearchIndex, report: Path):
    index.index_file(report)
    assert any("version 4.1" in t for t in found(index, report, "4.1"))
    assert found(index, report, "4.2") == []
    assert any("multi-agent" in t for t in found(index, report, "multi-agent"))
    assert any("Revenue by region" in t for t in found(index, report, "revenue 收入"))


def test_all_terms_first_then_any_term(index: SearchIndex, report: Path):
    index.index_file(report)
    both = found(index, report, "baseline accuracy")
    assert len(both) == 1 and "81% accuracy" in both[0]
    anyone = found(index, report, "accuracy zebra")
    assert anyone and "81% accuracy" in anyone[0]
    assert found(index, report, "zebra giraffe") == []


def test_scores_are_positive_and_best_first(index: SearchIndex, report: Path):
    index.index_file(report)
    hits = index.search(report, "baseline revenue 营收", 5)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s >= 0 for s in scores)


MALFORMED = [
    '"',
    '""',
    "AND",
    "OR NOT",
    "NEAR(a, b)",
    "*",
    "base*",
    ":",
    "text:foo",
    "^x",
    "(((",
    ")",
    "{text}",
    "🙂🙂",
    "x" * 10_000,
    "营收" * 3_000,
    "\x00",
    "-",
    "'; DROP",
]


@pytest.mark.parametrize("query", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_queries_never_raise(index: SearchIndex, report: Path, query: str):
    index.index_file(report)
    assert isinstance(index.search(report, query, 5), list)


@hypothesis_settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=200))
def test_arbitrary_unicode_queries_never_raise(index: SearchIndex, report: Path, query: str):
    index.index_file(report)
    assert isinstance(index.search(report, query, 5), list)


def test_regex_greps_the_full_text(index: SearchIndex, report: Path):
    index.index_file(report)
    hits = index.search(report, r"\d+% accuracy", 5, regex=True)
    assert len(hits) == 1 and "81% accuracy" in hits[0].text
    with pytest.raises(QueryError, match="invalid regular expression"):
        index.search(report, "([", 5, regex=True)


def test_same_bytes_at_two_paths_are_one_document(index: SearchIndex, report: Path, tmp_path: Path):
    copy = tmp_path / "copy.md"
    shutil.copy(report, copy)
    first = index.index_file(report)
    second = index.index_file(copy)
    assert second.reused and second.item_id == first.item_id
    assert index.stats()["total_files"] == 1
    assert found(index, copy, "baseline")


def test_a_new_version_at_the_same_path_replaces_the_old(index: SearchIndex, report: Path):
    old = index.index_file(report)
    report.write_text("Completely new content about zebras.", encoding="utf-8")
    new = index.index_file(report)
    assert new.file_hash != old.file_hash
    assert index.stats()["total_files"] == 1
    assert index.document(old.file_hash) is None
    assert found(index, report, "zebras")


def test_the_same_path_on_two_machines_is_two_documents_and_the_same_bytes_one(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Two machines share the team's store, not their disks: a file at a path one machine
    indexed says nothing of the file at that path on another, even with the same size and
    modification time, and neither replaces the other; the same bytes from two machines
    (and two paths) are one document, identified by their SHA-256."""
    import generalAgent.documents.index as index_module

    report = tmp_path / "report.md"
    report.write_text("The walrus report, first quarter.", encoding="utf-8")
    stamp = report.stat().st_mtime_ns
    monkeypatch.setattr(index_module, "machine_name", lambda: "laptop-a/1")
    with open_index(settings) as on_a:
        first = on_a.index_file(report)
    assert first.file_hash == hashlib.sha256(report.read_bytes()).hexdigest()
    # Machine B has another file at the same path, of the same size and time.
    report.write_text("The zebras report, first quarter.", encoding="utf-8")
    os.utime(report, ns=(stamp, stamp))
    monkeypatch.setattr(index_module, "machine_name", lambda: "laptop-b/2")
    with open_index(settings) as on_b:
        second = on_b.index_file(report)
        assert not second.reused and second.file_hash != first.file_hash
        assert on_b.stats()["total_files"] == 2
        assert found(on_b, report, "zebra") and not found(on_b, report, "walrus")
        # The first machine's document stays: its file is still there, on its disk.
        assert on_b.document(first.file_hash) is not None
        copy = tmp_path / "elsewhere.md"
        shutil.copy(report, copy)
    monkeypatch.setattr(index_module, "machine_name", lambda: "laptop-a/1")
    with open_index(settings) as on_a:
        # A's record of the path: its bytes, not B's, without re-reading the file.
        assert on_a.file_hash(report) == first.file_hash
        same = on_a.index_file(copy)  # B's bytes, on A under another name
        assert same.reused and same.item_id == second.item_id
        assert on_a.stats()["total_files"] == 2


def test_a_path_recorded_before_machines_were_told_apart_is_taken_over(settings: Settings, report: Path):
    """A path the store recorded before 0004 (no machine, an MD5 identity) is taken over
    by the first machine that indexes it again: its old version goes, not searched twice."""
    with open_index(settings) as index:
        index.index_file(report)
        index.db.execute("DELETE FROM document_paths")
        legacy = hashlib.md5(report.read_bytes(), usedforsecurity=False).hexdigest()
        index.db.execute("UPDATE documents SET file_hash = ?", (legacy,))
        stat = report.stat()
        index.db.execute(
            "INSERT INTO document_paths (machine, path, file_hash, file_size, mtime_ns) VALUES ('', ?, ?, ?, ?)",
            (str(report.resolve()), legacy, stat.st_size, stat.st_mtime_ns),
        )
        again = index.index_file(report)
        assert not again.reused and again.file_hash != legacy
        assert index.document(legacy) is None
        assert index.stats()["total_files"] == 1
        assert found(index, report, "baseline")


def test_old_version_kept_while_another_path_still_shows_it(index: SearchIndex, report: Path, tmp_path: Path):
    copy = tmp_path / "copy.md"
    shutil.copy(report, copy)
    old = index.index_file(report)
    index.index_file(copy)
    report.write_text("Version two.", encoding="utf-8")
    index.index_file(report)
    assert index.document(old.file_hash) is not None  # copy.md still has those bytes
    assert index.stats()["total_files"] == 2


def test_stale_index_is_rebuilt(settings: Settings, report: Path):
    with open_index(settings) as index:
        first = index.index_file(report)
        old = (datetime.now(UTC) - timedelta(hours=25)).isoformat(timespec="seconds")
        with index.store.transaction() as db:
            db.execute("UPDATE documents SET indexed_at = ?", (old,))
        assert not index.is_fresh(report)
        again = index.index_file(report)
        assert not again.reused and again.item_id == first.item_id
        assert index.is_fresh(report)


def test_changing_the_segmenter_reindexes(data_dir: Path, report: Path):
    jieba = load_settings(env_file=None, paths={"data_dir": data_dir})
    plain = load_settings(env_file=None, paths={"data_dir": data_dir}, documents={"use_jieba": False})
    create_index(report, jieba)
    assert not index_exists(report, plain)
    create_index(report, plain)
    assert [h.chunk_index for h in search_in_index(report, "营收增长", 5, plain)] == [0]


def test_deleting_a_document_leaves_no_chunk_or_fts_row(index: SearchIndex, report: Path):
    document = index.index_file(report)
    conn = index.db
    assert conn.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0] == document.total_chunks
    cleanup_count = index.cleanup_for_file(report, keep_hash="something-else")
    assert cleanup_count == 1
    for table in ("items", "documents", "document_paths", "chunks", "chunks_fts"):
        assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table


def test_chunks_of_a_document_have_consecutive_rowids(index: SearchIndex, tmp_path: Path):
    for n in range(3):
        path = tmp_path / f"doc{n}.md"
        path.write_text("\n\n".join(f"Paragraph {n}.{i} " + "word " * 60 for i in range(10)))
        index.index_file(path)
    rows = index.db.execute("SELECT item_id, rowid, chunk_index FROM chunks ORDER BY rowid").fetchall()
    by_item: dict[str, list[tuple[int, int]]] = {}
    for item_id, rowid, chunk_index in rows:
        by_item.setdefault(item_id, []).append((rowid, chunk_index))
    for pairs in by_item.values():
        rowids = [r for r, _ in pairs]
        assert rowids == list(range(rowids[0], rowids[0] + len(rowids)))
        assert [i for _, i in pairs] == list(range(len(pairs)))


@pytest.mark.smoke
def test_the_convenience_api(settings: Settings, report: Path, tmp_path: Path):
    assert not index_exists(report, settings)
    assert search_in_index(report, "baseline", 5, settings) == []  # not indexed yet
    document = create_index(report, settings)
    assert index_exists(report, settings)
    hits = search_in_index(report, "baseline", 5, settings)
    assert hits and isinstance(hits[0], Passage)
    assert hits[0].place == "§ Baseline results"
    assert hits[0].heading == "Baseline results"
    # Several phrasings of one question: one matching nothing does not take the others' hits.
    listed = search_in_index(report, ["基线结果", "baseline"], 5, settings)
    assert [h.chunk_id for h in listed] == [h.chunk_id for h in hits]
    stats = get_index_stats(settings)
    assert stats["total_files"] == 1 and stats["total_chunks"] == document.total_chunks
    if settings.paths.search_database_url is None:
        assert stats["db_path"] == str(settings.paths.indexes_db)
    else:
        assert stats["db_path"].startswith("PostgreSQL") and not settings.paths.indexes_db.exists()
    # The identity of the bytes: MD5 in indexes.db, SHA-256 in a team's store.
    algorithm = "md5" if settings.paths.search_database_url is None else "sha256"
    assert compute_file_hash(report, algorithm=algorithm) == document.file_hash
    kept = cleanup_old_indexes_for_file(report, keep_hash=document.file_hash, settings=settings)
    assert kept == 0
    assert cleanup_old_indexes(days=30, settings=settings) == 0


def test_cleanup_old_indexes_removes_documents_older_than_n_days(settings: Settings, report: Path):
    create_index(report, settings)
    with open_index(settings) as index, index.store.transaction() as db:
        db.execute("UPDATE documents SET indexed_at = '2000-01-01T00:00:00+00:00'")
    assert cleanup_old_indexes(days=30, settings=settings) == 1
    assert get_index_stats(settings)["total_chunks"] == 0


def test_pdf_hits_carry_their_page(index: SearchIndex, tmp_path: Path):
    pdf = make_pdf(tmp_path / "paper.pdf", [["Introduction text."], ["The baseline is here."]])
    index.index_file(pdf)
    assert [h.page for h in index.search(pdf, "baseline", 5)] == [2]


def test_two_processes_can_index_at_once(settings: Settings, tmp_path: Path):
    """WAL and the busy timeout: a second writer waits instead of failing."""
    from concurrent.futures import ThreadPoolExecutor

    paths = []
    for n in range(6):
        path = tmp_path / f"f{n}.md"
        path.write_text(f"document {n} " + "text " * 500)
        paths.append(path)

    def work(path: Path) -> int:
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            return index.index_file(path).total_chunks

    with ThreadPoolExecutor(max_workers=3) as pool:
        assert all(n > 0 for n in pool.map(work, paths))
    assert get_index_stats(settings)["total_files"] == 6


def test_a_new_database_opened_by_several_connections_at_once(tmp_path: Path):
    """SQLite does not wait on the busy timeout to switch a new file to WAL; connect() does."""
    import threading

    from generalAgent.search.connection import connect

    failures: list[Exception] = []

    def open_and_close(path: Path, start: threading.Barrier) -> None:
        start.wait()
        try:
            connect(path).close()
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            failures.append(exc)

    for round_ in range(40):
        path = tmp_path / f"r{round_}" / "indexes.db"
        start = threading.Barrier(3)
        threads = [threading.Thread(target=open_and_close, args=(path, start)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []


def test_past_the_budget_only_rarer_terms_find_candidates_with_the_same_scores(
    index: SearchIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """On a large index FTS5 ranks only chunks holding a rarer term; their scores stay exact."""
    import generalAgent.search.lookup as lookup_module

    paragraphs = [f"common filler number {i}." for i in range(300)]
    paragraphs[100] = "common rare walrus."
    paragraphs[200] = "rare walrus only."
    path = tmp_path / "many.md"
    path.write_text("\n\n".join(p + " " + "pad " * 70 for p in paragraphs), encoding="utf-8")
    index.index_file(path)
    assert index.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] > 50
    query = "common walrus zebra"
    everything = lookup_module.find_chunks(index.conn, query, index.segmenter, 3)

    monkeypatch.setattr(lookup_module, "CANDIDATE_BUDGET", 5)
    terms = build_match_query(query, index.segmenter).terms
    rare, common = lookup_module._rare_and_common(index.conn, terms)
    assert (rare, common) == (['{text title} : "walrus"'], ['{text title} : "common"'])
    pruned = lookup_module.find_chunks(index.conn, query, index.segmenter, 3)
    assert [("walrus" in h.text) for h in pruned] == [True, True]
    assert "common rare walrus" in pruned[0].text  # both words: ranked first
    assert [h.rowid for h in pruned] == [h.rowid for h in everything[:2]]
    assert [h.score for h in pruned] == pytest.approx([h.score for h in everything[:2]])
    assert lookup_module.find_chunks(index.conn, "common filler zebra", index.segmenter, 3)


def test_every_hit_names_its_place(settings: Settings, tmp_path: Path):
    from tests.support.documents import make_pptx, make_xlsx

    rows = [["Region", "Revenue"]] + [[f"region{i}", i * 10] for i in range(30)]
    sheet = make_xlsx(tmp_path / "sales.xlsx", {"Q3": rows})
    deck = make_pptx(tmp_path / "deck.pptx", [("Plan", "Ship in May", ""), ("Budget", "Costs fall", "")])
    notes = tmp_path / "notes.md"
    notes.write_text(
        "# Setup\n\nInstall the tool.\n\n# Pricing\n\nThe plan costs 9 euros.\n", encoding="utf-8"
    )
    with open_index(settings) as index:
        places = {}
        for path, query in ((sheet, "region25"), (deck, "costs fall"), (notes, "euros")):
            document = index.index_file(path)
            places[path.name] = index.search_item(document.item_id, query, 1)[0].place
    assert places == {"sales.xlsx": "sheet Q3, rows 22–31", "deck.pptx": "slide 2", "notes.md": "§ Pricing"}


def test_an_unchanged_file_is_not_read_again_and_a_touched_one_is(settings: Settings, tmp_path: Path):
    path = tmp_path / "notes.md"
    path.write_text("The launch moves to March.\n", encoding="utf-8")
    with open_index(settings) as index:
        first = index.index_file(path)
        stat = path.stat()
        # Same size, same modification time: the recorded hash stands, the bytes are not read.
        path.write_text("The launch moves to April.\n", encoding="utf-8")
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert index.file_hash(path) == first.file_hash
        assert index.index_file(path).reused
        # A new modification time: the file is hashed again and its new text indexed.
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert (
            index.file_hash(path)
            == compute_file_hash(path, algorithm=index.hash_algorithm)
            != first.file_hash
        )
        assert not index.index_file(path).reused
        assert "April" in index.search(path, "launch", 1)[0].text


def test_searching_an_indexed_file_writes_nothing(settings: Settings, report: Path):
    from generalAgent.documents.search import search_document

    search_document(settings.paths.indexes_db, settings.documents, report, "baseline")
    before = settings.paths.indexes_db.stat().st_mtime_ns, _wal_size(settings.paths.indexes_db)
    for query in ("baseline", "results", "营收"):
        search_document(settings.paths.indexes_db, settings.documents, report, query)
    assert (settings.paths.indexes_db.stat().st_mtime_ns, _wal_size(settings.paths.indexes_db)) == before


def _wal_size(db: Path) -> int:
    wal = Path(f"{db}-wal")
    return wal.stat().st_size if wal.exists() else 0
