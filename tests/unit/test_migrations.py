"""Schema migrations: databases made by older code upgrade in place and keep their data.

tests/fixtures/release-0.1.0/ holds an indexes.db (an indexed Markdown file and a note)
and a sessions.db (one catalogued session of two turns) written by 0.1.0's own code.
tests/fixtures/before-version-tracks/ holds the SQL of the files the code wrote before each
package had its own version track (one `schema_migrations` list per file); the tests build
those files from it, without the code they test.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.index import SearchIndex
from generalAgent.graph.checkpoints import open_sqlite_checkpointer
from generalAgent.graph.turn import main_turn_input
from generalAgent.knowledge import KnowledgeStore, search_knowledge
from generalAgent.knowledge.schema import TRACK as KNOWLEDGE_TRACK
from generalAgent.migrations import TRACKS_MARK, Migration, Track, migrate, schema_versions, script
from generalAgent.search.connection import DatabaseError, connect
from generalAgent.search.schema import TRACK as INDEX_TRACK
from generalAgent.sessions import TRACK as CATALOG_TRACK
from generalAgent.sessions import SessionCatalog, SessionStoreError, Usage
from generalAgent.snapshots import TRACK as SNAPSHOTS_TRACK
from tests.support.agent import build_test_agent, thread
from tests.support.scripted_model import ScriptedChatModel, ai

RELEASE = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1.0"
BEFORE_TRACKS = Path(__file__).resolve().parents[1] / "fixtures" / "before-version-tracks"
SESSION = "20260101-0900-abcd"


@pytest.fixture
def old_data(settings: Settings) -> Settings:
    for name in ("indexes.db", "sessions.db"):
        shutil.copy(RELEASE / name, settings.paths.data_dir / name)
    return settings


def test_an_index_from_0_1_0_upgrades_in_place_and_stays_searchable(old_data: Settings) -> None:
    with KnowledgeStore(old_data.paths.indexes_db, old_data.documents) as store:
        assert schema_versions(store.conn) == {"index": INDEX_TRACK.version, "knowledge": 1}
        found = search_knowledge(store, "值班电话")
        assert [r.item.title for r in found.results] == ["值班电话"]
        assert "555-0199" in found.results[0].found.content
        added = store.add_knowledge(title="新笔记", content="升级之后写入的内容。")
        assert store.get_knowledge_item(added.id) is not None
    with SearchIndex(old_data.paths.indexes_db, old_data.documents) as index:
        document = index.conn.execute("SELECT item_id FROM documents").fetchone()[0]
        hits = index.search_item(document, "rollback 脚本")
        assert hits and "rollback" in hits[0].text
        assert index.language(document) == "zh"  # 0004 told the old document's language


def test_the_session_catalog_and_threads_of_0_1_0_are_still_usable(old_data: Settings) -> None:
    catalog = SessionCatalog(old_data.paths.sessions_db)
    session = catalog.get(SESSION)
    assert session is not None and session.title == "记住：项目代号是蓝鲸"
    assert session.usage == Usage(1200, 1024, 80, 1)
    catalog.record_turn(SESSION, "ignored", Usage(10, 0, 5, 1, reasoning_tokens=3))
    assert catalog.get(SESSION).turns == 2  # type: ignore[union-attr]
    assert catalog.get(SESSION).usage.reasoning_tokens == 3  # type: ignore[union-attr]  # the new column
    assert catalog.get(SESSION).approval_mode is None  # type: ignore[union-attr]  # no editor mode chosen
    catalog.close()

    saver = open_sqlite_checkpointer(old_data.paths.sessions_db)
    model = ScriptedChatModel(replies=[ai("蓝鲸")])
    _, graph = build_test_agent(old_data, model, saver)
    config = thread(SESSION)
    turn = main_turn_input("代号？", session_id=SESSION, max_loops=5)
    state = graph.invoke(turn, config)
    assert state["mentions"] == ["now"]  # 0.1.0 stored them as `mentioned_agents`: the graph carries them
    assert [m.text for m in state["messages"]][:2] == ["记住：项目代号是蓝鲸", "好的，项目代号是蓝鲸。"]
    assert "now" in model.requests[-1].tools
    saver.conn.close()


def built_before_the_tracks(path: Path, name: str) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript((BEFORE_TRACKS / name).read_text(encoding="utf-8"))
    conn.close()
    return path


def test_an_index_written_before_the_tracks_upgrades_in_place_and_keeps_its_data(settings: Settings) -> None:
    path = built_before_the_tracks(settings.paths.indexes_db, "indexes.sql")
    with SearchIndex(path, settings.documents) as index:  # documents first, as the tools open it
        assert schema_versions(index.conn) == {"index": INDEX_TRACK.version}  # adopted, then the rest run
        hits = index.search_item("doc-walrus", "Bering strait")
        assert hits and "walrus migration" in hits[0].text.lower()
        assert index.language("doc-walrus") == "en"
    with KnowledgeStore(path, settings.documents) as store:
        assert schema_versions(store.conn) == {"index": INDEX_TRACK.version, "knowledge": 1}
        found = search_knowledge(store, "rollback phone")
        assert [r.item.title for r in found.results] == ["On-call phone"]
        assert "555-0199" in found.results[0].found.content
        assert store.get_tags() == ["oncall", "phone"]
        assert store.builtin_sources() == {
            "guides/release.md": ("0123456789abcdef0123456789abcdef", "builtin-release")
        }
        assert store.get_knowledge_item("doc-walrus").content.startswith("Walrus migration")  # type: ignore[union-attr]
        added = store.add_knowledge(title="After", content="Written after the upgrade.", tags=["new"])
        assert store.get_knowledge_item(added.id).tags == ["new"]  # type: ignore[union-attr]
    legacy = sqlite3.connect(path)
    names = [row[0] for row in legacy.execute("SELECT name FROM schema_migrations ORDER BY name")]
    legacy.close()
    # The old names are kept, and one more that the code before the tracks does not know,
    # so it refuses the upgraded file ("written by a newer generalAgent") instead of misreading it.
    assert names == list(INDEX_TRACK.adopts) + [TRACKS_MARK]


def test_an_old_index_upgraded_by_several_connections_at_once_is_upgraded_once(settings: Settings) -> None:
    """Documents and the knowledge store opening the same old file together: each track is
    adopted or applied once, whoever comes first, and nobody fails."""
    path = built_before_the_tracks(settings.paths.indexes_db, "indexes.sql")
    start = threading.Barrier(6)
    failures: list[BaseException] = []

    def open_it(kind: type[SearchIndex] | type[KnowledgeStore]) -> None:
        start.wait()
        try:
            with kind(path, settings.documents) as opened:
                opened.conn.execute("SELECT COUNT(*) FROM items").fetchone()
        except BaseException as exc:  # noqa: BLE001 - any failure is the finding
            failures.append(exc)

    threads = [threading.Thread(target=open_it, args=(kind,)) for kind in (SearchIndex, KnowledgeStore) * 3]
    for thread_ in threads:
        thread_.start()
    for thread_ in threads:
        thread_.join()
    assert failures == []
    conn = sqlite3.connect(path)
    assert schema_versions(conn) == {"index": INDEX_TRACK.version, "knowledge": 1}
    assert conn.execute("SELECT COUNT(*) FROM item_tags").fetchone()[0] == 2
    conn.close()


def test_a_catalog_written_before_the_tracks_upgrades_in_place(settings: Settings) -> None:
    catalog = SessionCatalog(built_before_the_tracks(settings.paths.sessions_db, "sessions.sql"))
    session = catalog.get("20261120-0900-beef")
    assert session is not None and session.title == "Plan the release"
    assert session.usage == Usage(5000, 4096, 300, 4, reasoning_tokens=120)
    assert schema_versions(catalog._conn) == {"sessions": CATALOG_TRACK.version}
    catalog.close()


def test_documents_create_only_the_index_tables_and_the_knowledge_store_adds_its_own(
    settings: Settings,
) -> None:
    path = settings.paths.indexes_db
    with SearchIndex(path, settings.documents) as index:
        tables = {row[0] for row in index.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "items" in tables and "item_tags" not in tables and "builtin_sources" not in tables
        assert schema_versions(index.conn) == {"index": INDEX_TRACK.version}
    with KnowledgeStore(path, settings.documents) as store:
        assert store.get_tags() == []
        assert schema_versions(store.conn) == {
            "index": INDEX_TRACK.version,
            "knowledge": KNOWLEDGE_TRACK.version,
        }


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_track_from_a_newer_release_is_refused_and_the_file_left_untouched(settings: Settings) -> None:
    path = settings.paths.indexes_db
    with KnowledgeStore(path, settings.documents) as store:
        store.add_knowledge(title="Kept", content="This note must survive the refusal.")
        store.conn.execute("UPDATE schema_versions SET version = version + 1 WHERE track = 'knowledge'")
    before = file_digest(path)
    with pytest.raises(
        DatabaseError, match=r"newer generalAgent \(its knowledge schema is at version 2;.*upgrade"
    ):
        KnowledgeStore(path, settings.documents).conn  # noqa: B018 - opening is the test
    assert file_digest(path) == before
    # Documents do not know the knowledge track: the index is theirs, and it is up to date.
    with SearchIndex(path, settings.documents) as index:
        assert index.conn.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 1
        index.conn.execute("UPDATE schema_versions SET version = version + 1 WHERE track = 'index'")
    before = file_digest(path)
    known = INDEX_TRACK.version
    with pytest.raises(
        DatabaseError, match=f"its index schema is at version {known + 1}; this one knows up to {known}"
    ):
        connect(path)
    assert file_digest(path) == before

    catalog = SessionCatalog(settings.paths.sessions_db)
    catalog._conn.execute("UPDATE schema_versions SET version = 99 WHERE track = 'sessions'")
    catalog.close()
    with pytest.raises(SessionStoreError, match="newer generalAgent"):
        SessionCatalog(settings.paths.sessions_db)


def test_a_track_it_does_not_know_is_left_alone(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    mine = Track("mine", (Migration("0001_t", script("CREATE TABLE t (x INTEGER);")),))
    theirs = Track(
        "theirs", tuple(Migration(f"000{n}_u{n}", script(f"CREATE TABLE u{n} (x);")) for n in (1, 2))
    )
    assert migrate(conn, [theirs]) == ["0001_u1", "0002_u2"]
    conn.execute("UPDATE schema_versions SET version = 9 WHERE track = 'theirs'")
    assert migrate(conn, [mine]) == ["0001_t"]
    assert migrate(conn, [mine]) == []  # up to date: nothing runs
    assert schema_versions(conn) == {"theirs": 9, "mine": 1}


def test_a_migration_that_fails_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    good = Migration("0001_table", script("CREATE TABLE t (x INTEGER);"))
    broken = Migration("0002_broken", script("INSERT INTO t VALUES (1);\nSELECT * FROM no_such_table;"))
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, [Track("test", (good, broken))])
    assert schema_versions(conn) == {"test": 1}
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0  # the INSERT was rolled back
    fixed = Migration("0002_broken", script("INSERT INTO t VALUES (2);"))
    assert migrate(conn, [Track("test", (good, fixed))]) == ["0002_broken"]
    assert migrate(conn, [Track("test", (good, fixed))]) == []


def test_every_track_numbers_its_migrations_in_order() -> None:
    tracks = (INDEX_TRACK, KNOWLEDGE_TRACK, CATALOG_TRACK, SNAPSHOTS_TRACK)
    assert len({track.name for track in tracks}) == len(tracks)
    for track in tracks:
        for number, migration in enumerate(track.migrations, start=1):
            assert migration.name[:5] == f"{number:04d}_", migration.name
