"""The knowledge store: items, tags, chunks, cascade deletes, adjacency, built-in import."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.index import SearchIndex
from generalAgent.knowledge import KnowledgeChunk, KnowledgeError, KnowledgeItem, KnowledgeStore
from generalAgent.knowledge.builtin import import_builtin_knowledge, parse_page

# Files are indexed into indexes.db only, and the chunkless-item probe that follows other
# connections' writes by rowid is SQLite's: these cases run there.
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


def integrity_error(store: KnowledgeStore) -> type[Exception]:
    if store.database_url:
        import psycopg

        return psycopg.IntegrityError
    return sqlite3.IntegrityError


LONG = "\n\n".join(f"Paragraph {i}: " + "words about the release process. " * 8 for i in range(12))


def test_add_and_get_round_trip_through_the_database(store: KnowledgeStore):
    tags = ["release", " ops ", "release"]
    item = store.add_knowledge("Checklist", LONG, domain="ops", category="process", tags=tags)
    again = store.get_knowledge_item(item.id)
    assert again == item
    assert again.tags == ["ops", "release"]
    assert KnowledgeItem.from_dict(again.to_dict()) == again


def test_chunks_are_ordered_and_cover_the_content(store: KnowledgeStore):
    item = store.add_knowledge("Release checklist", LONG)
    chunks = store.get_chunks_for_item(item.id)
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert len(chunks) > 3
    assert all(item.content[c.start_position : c.end_position] == c.content for c in chunks)
    assert store.get_chunk_by_id(chunks[2].id) == chunks[2]
    assert store.get_chunk_by_id("nope") is None


def test_adjacency_at_the_first_middle_and_last_chunk(store: KnowledgeStore):
    item = store.add_knowledge("Release checklist", LONG)
    chunks = store.get_chunks_for_item(item.id)
    assert store.get_adjacent_chunks(item.id, 0) == (None, chunks[1])
    assert store.get_adjacent_chunks(item.id, 2) == (chunks[1], chunks[3])
    last = len(chunks) - 1
    assert store.get_adjacent_chunks(item.id, last) == (chunks[last - 1], None)


def test_save_chunks_replaces_all_chunks(store: KnowledgeStore):
    item = store.add_knowledge("Note", LONG)
    new = [
        KnowledgeChunk(item.id, 1, "second part", metadata={"page": 2, "source": "x"}),
        KnowledgeChunk(item.id, 0, "first part", heading="Intro"),
    ]
    store.save_chunks(item.id, new)
    assert store.get_chunks_for_item(item.id) == sorted(new, key=lambda c: c.chunk_index)
    assert store.db.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0] == 2


def test_deleting_an_item_deletes_its_tags_chunks_and_fts_rows(store: KnowledgeStore):
    keep = store.add_knowledge("Keep", "Other text stays.", tags=["a"])
    item = store.add_knowledge("Gone", LONG, tags=["a", "b"])
    assert store.delete_knowledge(item.id)
    assert not store.delete_knowledge(item.id)
    conn = store.db
    for table in ("items", "item_tags", "chunks", "chunks_fts"):
        assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == (
            1 if table not in ("chunks", "chunks_fts") else store.count_chunks(keep.id)
        ), table
    with pytest.raises(integrity_error(store)):
        conn.execute(
            "INSERT INTO chunks (id, item_id, chunk_index, start_position, end_position)"
            " VALUES ('x', 'no-such-item', 0, 0, 1)"
        )


def test_update_rechunks_in_place(store: KnowledgeStore):
    item = store.add_knowledge("Note", "old words here")
    updated = store.update_knowledge(item.id, content="brand new text", tags=["x"])
    assert updated is not None and updated.id == item.id
    chunks = store.get_chunks_for_item(item.id)
    assert [c.content for c in chunks] == ["brand new text"]
    assert store.get_knowledge_item(item.id).tags == ["x"]
    assert store.update_knowledge("missing", title="x") is None


def test_list_filters_and_paging(store: KnowledgeStore):
    for n in range(5):
        store.add_knowledge(
            f"Item {n}",
            f"text {n}",
            domain="a" if n % 2 else "b",
            category="even" if n % 2 == 0 else "odd",
            tags=[f"t{n}"],
        )
    assert len(store.list_knowledge()) == 5
    assert {i.domain for i in store.list_knowledge(domain="a")} == {"a"}
    assert {i.title for i in store.list_knowledge(tags=["t1", "t4"])} == {"Item 1", "Item 4"}
    first, second = store.list_knowledge(limit=2), store.list_knowledge(limit=2, offset=2)
    assert not {i.id for i in first} & {i.id for i in second}
    assert store.get_domains() == ["a", "b"]
    assert store.get_categories("a") == ["odd"]
    assert store.get_tags("b") == ["t0", "t2", "t4"]
    assert store.count_knowledge("a") == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"title": "", "content": "x"}, "needs a title"),
        ({"title": "t", "content": "   "}, "content is empty"),
        ({"title": "t", "content": "x", "domain": "documents"}, "holds indexed files"),
        ({"title": "t", "content": "x", "tags": [f"t{i}" for i in range(60)]}, "Too many tags"),
    ],
)
def test_bad_items_are_refused_with_a_reason(store: KnowledgeStore, kwargs, message):
    with pytest.raises(KnowledgeError, match=message):
        store.add_knowledge(**kwargs)


@SQLITE_ONLY
def test_indexed_documents_are_items_of_domain_documents(
    store: KnowledgeStore, settings: Settings, tmp_path: Path
):
    path = tmp_path / "guide.md"
    path.write_text("# Guide\n\nThe guide text.", encoding="utf-8")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        document = index.index_file(path)
    item = store.get_knowledge_item(document.item_id)
    assert item is not None and item.domain == "documents" and item.title == "guide.md"
    with pytest.raises(KnowledgeError, match="indexed file"):
        store.update_knowledge(item.id, content="changed")
    assert store.update_knowledge(item.id, tags=["manual"]).tags == ["manual"]
    assert store.delete_knowledge(item.id)
    assert store.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0


def test_items_without_chunks_are_chunked_on_demand(store: KnowledgeStore):
    item = store.add_knowledge("Note", LONG)
    store.db.execute("DELETE FROM chunks WHERE item_id = ?", (item.id,))
    assert store.count_chunks(item.id) == 0
    assert store.chunkless_items() == [item.id]
    assert len(store.ensure_chunks(item.id)) > 3


def test_builtin_knowledge_is_imported_once_and_follows_changes(store: KnowledgeStore, tmp_path: Path):
    root = tmp_path / "knowledge"
    (root / "ops").mkdir(parents=True)
    page = root / "ops" / "release.md"
    page.write_text("---\ntitle: Release\ntags: [release]\n---\n# Steps\n\nTag, build, ship.")
    (root / "ops" / "empty.md").write_text("")
    first = import_builtin_knowledge(store, root)
    assert first.added == ["ops/release.md"] and first.failed == ["ops/empty.md: the page is empty"]
    item = store.list_knowledge(domain="ops")[0]
    assert (item.title, item.tags, item.source) == ("Release", ["release"], "builtin")
    assert not import_builtin_knowledge(store, root).added  # unchanged: nothing re-imported
    page.write_text("# Release\n\nTag, build, test, ship.")
    assert import_builtin_knowledge(store, root).updated == ["ops/release.md"]
    assert store.get_knowledge_item(item.id).content.endswith("test, ship.")
    page.unlink()
    assert import_builtin_knowledge(store, root).removed == ["ops/release.md"]
    assert store.get_knowledge_item(item.id) is None


def test_an_unreadable_builtin_page_is_named_in_the_ui_language(store: KnowledgeStore, tmp_path: Path):
    from generalAgent import i18n

    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "diagram.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    report = import_builtin_knowledge(store, tmp_path)
    english = "ops/diagram.md: diagram.md is a binary file, not text; supported are PDF, DOCX, XLSX, PPTX, "
    assert report.failed[0].startswith(english) and english in report.summary()
    i18n.use_language("zh")
    try:
        assert "\n  ops/diagram.md: diagram.md 是二进制文件，不是文本；" in report.summary(i18n._)
    finally:
        i18n.use_language("en")


def test_parse_page_titles():
    assert parse_page("# Heading\n\nbody", "d", "file-name").title == "Heading"
    assert parse_page("body only", "d", "file-name").title == "file name"


@SQLITE_ONLY
def test_an_item_another_connection_writes_without_chunks_is_still_noticed(store: KnowledgeStore):
    store.add_knowledge("Note", LONG)
    assert store.chunkless_items() == []  # the first look scans every item
    other = sqlite3.connect(store.db_path)
    with other:
        other.execute(
            "INSERT INTO items (id, domain, title, content, created_at, updated_at)"
            " VALUES ('raw', 'general', 'Raw', 'written by an older release', 'x', 'x')"
        )
    other.close()
    assert store.chunkless_items() == ["raw"]  # only the new rowids are looked at
    store.ensure_chunks("raw")
    assert store.chunkless_items() == []
    newest = store.add_knowledge("Newest", LONG)
    store.delete_knowledge(newest.id)  # its rowid may now be reused by the next item
    store.conn.execute(
        "INSERT INTO items (id, domain, title, content, created_at, updated_at)"
        " VALUES ('reused', 'general', 'Reused', 'another raw item', 'x', 'x')"
    )
    assert store.chunkless_items() == ["reused"]


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_lost_database_connection_is_a_store_error_with_a_message(store: KnowledgeStore, pg_schema):
    import psycopg

    from generalAgent.knowledge import STORE_ERRORS, search_knowledge

    store.add_knowledge("Note", "walrus notes")
    pid = store.db.execute("SELECT pg_backend_pid()").fetchone()[0]
    with psycopg.connect(pg_schema[0], autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    for call in (lambda: search_knowledge(store, "walrus"), lambda: store.add_knowledge("Other", "text")):
        with pytest.raises(STORE_ERRORS, match="The search database failed"):
            call()


def test_two_processes_importing_the_same_new_builtin_file_make_one_item(
    backend: str, settings: Settings, request: pytest.FixtureRequest
):
    from tests.unit.knowledge.conftest import knowledge_store

    with (
        knowledge_store(backend, settings, request) as first,
        knowledge_store(backend, settings, request) as second,
    ):
        page = "# Release\n\nTag, build, ship."
        # Both read the records before either wrote (two replicas starting together).
        assert first.builtin_sources() == second.builtin_sources() == {}
        for store in (first, second):
            store.save_builtin("ops/release.md", "hash", parse_page(page, "ops", "release"), None)
        assert [i.title for i in first.list_knowledge(domain="ops")] == ["Release"]
        [(_, item_id)] = second.builtin_sources().values()
        assert first.get_knowledge_item(item_id) is not None
