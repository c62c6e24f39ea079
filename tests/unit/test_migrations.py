"""Schema migrations: databases made by release 0.1.0 upgrade in place and keep their data.

tests/fixtures/release-0.1.0/ holds an indexes.db (an indexed Markdown file and a note)
and a sessions.db (one catalogued session of two turns) written by 0.1.0's own code.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.index import SearchIndex
from generalAgent.graph.checkpoints import open_sqlite_checkpointer
from generalAgent.graph.turn import main_turn_input, renamed_state
from generalAgent.knowledge import KnowledgeStore, search_knowledge
from generalAgent.migrations import Migration, applied_migrations, migrate, script
from generalAgent.search.connection import DatabaseError
from generalAgent.search.schema import MIGRATIONS as INDEX_MIGRATIONS
from generalAgent.sessions import MIGRATIONS as CATALOG_MIGRATIONS
from generalAgent.sessions import SessionCatalog, SessionStoreError, Usage
from tests.support.agent import build_test_agent, thread
from tests.support.scripted_model import ScriptedChatModel, ai

RELEASE = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1.0"
SESSION = "20260101-0900-abcd"


@pytest.fixture
def old_data(settings: Settings) -> Settings:
    for name in ("indexes.db", "sessions.db"):
        shutil.copy(RELEASE / name, settings.paths.data_dir / name)
    return settings


def test_an_index_from_0_1_0_upgrades_in_place_and_stays_searchable(old_data: Settings) -> None:
    with KnowledgeStore(old_data.paths.indexes_db, old_data.documents) as store:
        assert applied_migrations(store.conn) == [m.name for m in INDEX_MIGRATIONS]
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
    catalog.close()

    saver = open_sqlite_checkpointer(old_data.paths.sessions_db)
    model = ScriptedChatModel(replies=[ai("蓝鲸")])
    _, graph = build_test_agent(old_data, model, saver)
    config = thread(SESSION)
    carried = renamed_state(graph, config)
    assert carried == {"mentions": ["now"]}  # 0.1.0 stored them as `mentioned_agents`
    turn = main_turn_input("代号？", session_id=SESSION, max_loops=5, carried_over=carried)
    state = graph.invoke(turn, config)
    assert [m.text for m in state["messages"]][:2] == ["记住：项目代号是蓝鲸", "好的，项目代号是蓝鲸。"]
    assert "now" in model.requests[-1].tools
    saver.conn.close()


def test_a_database_from_a_newer_release_is_refused_with_a_clear_line(settings: Settings) -> None:
    path = settings.paths.indexes_db
    with SearchIndex(path, settings.documents) as index:
        index.conn.execute("INSERT INTO schema_migrations VALUES ('9999_from_the_future', 0)")
    with pytest.raises(DatabaseError, match="newer generalAgent .*9999_from_the_future.*upgrade"):
        SearchIndex(path, settings.documents).conn  # noqa: B018 - opening is the test
    catalog = SessionCatalog(settings.paths.sessions_db)
    catalog._conn.execute("INSERT INTO schema_migrations VALUES ('9999_from_the_future', 0)")
    catalog.close()
    with pytest.raises(SessionStoreError, match="newer generalAgent"):
        SessionCatalog(settings.paths.sessions_db)


def test_a_migration_that_fails_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    good = Migration("0001_table", script("CREATE TABLE t (x INTEGER);"))
    broken = Migration("0002_broken", script("INSERT INTO t VALUES (1);\nSELECT * FROM no_such_table;"))
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, [good, broken])
    assert applied_migrations(conn) == ["0001_table"]
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0  # the INSERT was rolled back
    fixed = Migration("0002_broken", script("INSERT INTO t VALUES (2);"))
    assert migrate(conn, [good, fixed]) == ["0002_broken"]
    assert migrate(conn, [good, fixed]) == []


def test_every_list_has_unique_ordered_names() -> None:
    for migrations in (INDEX_MIGRATIONS, CATALOG_MIGRATIONS):
        names = [m.name for m in migrations]
        assert names == sorted(set(names))
        assert all(name[:4].isdigit() and name[4] == "_" for name in names)
