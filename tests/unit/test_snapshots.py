"""File snapshots for /rewind: every write of the file tools keeps what the file held first."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from generalAgent.config.settings import Settings
from generalAgent.migrations import Track, migrate
from generalAgent.snapshots import MIGRATIONS, TRACK, FileWrite, SnapshotStore, digest, restore_plan
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.run_context import RunContext, SessionScope
from tests.support.tools import run_tool, workspace_root


def store_of(settings: Settings) -> SnapshotStore:
    return SnapshotStore.in_data_dir(settings.paths.data_dir)


def in_turn(turn: int, name: str, args: dict) -> dict:
    """A state whose history holds `turn` earlier messages of the user's, then the call."""
    history = [m for i in range(turn) for m in (HumanMessage(f"message {i}"), AIMessage("done"))]
    call = {"id": "call_1", "name": name, "args": args, "type": "tool_call"}
    return {"messages": [*history, HumanMessage("now"), AIMessage(content="", tool_calls=[call])]}


def test_write_and_edit_keep_the_content_before_them_by_turn(settings: Settings) -> None:
    env = ToolEnvironment(settings=settings)
    root = workspace_root(settings)
    text, _ = run_tool(settings, "write_file", {"path": "outputs/plan.md", "content": "v1\n"}, env=env)
    assert text.startswith("Wrote")
    edit = {"path": "outputs/plan.md", "old_string": "v1", "new_string": "v2"}
    run_tool(settings, "edit_file", edit, state=in_turn(1, "edit_file", edit), env=env)
    run_tool(settings, "write_file", {"path": "temp/scratch.txt", "content": "x"}, env=env)
    writes = store_of(settings).writes_since("s1", 0)
    real = str((root / "outputs" / "plan.md").resolve())
    # Turn 0 created it (nothing before); the edit ran in the turn of the second message (1).
    # temp/ is scratch: not kept.
    assert [(w.turn, w.path, w.before, w.after) for w in writes] == [
        (0, real, None, digest(b"v1\n")),
        (1, real, digest(b"v1\n"), digest(b"v2\n")),
    ]
    assert writes[0].before_mode is None  # created
    assert writes[1].before_mode == (root / "outputs" / "plan.md").stat().st_mode & 0o777
    assert store_of(settings).content(digest(b"v1\n")) == b"v1\n"
    assert [w.turn for w in store_of(settings).writes_since("s1", 1)] == [1]


def test_a_failed_write_keeps_nothing(settings: Settings) -> None:
    root = workspace_root(settings)
    (root / "outputs" / "folder").mkdir()
    text, _ = run_tool(settings, "write_file", {"path": "outputs/folder", "content": "x"})
    assert "is a folder" in text
    text, _ = run_tool(settings, "write_file", {"path": "outputs/bad.txt", "content": "\ud800"})
    assert text.startswith("Error") and not (root / "outputs" / "bad.txt").exists()
    assert store_of(settings).writes_since("s1", 0) == []


def test_a_sub_agent_writes_in_the_turn_that_delegated(settings: Settings, tmp_path: Path) -> None:
    env = ToolEnvironment(settings=settings)
    # The sub-agent runs in the context of the session that delegated (graph/subagents.py).
    context = RunContext(scope=SessionScope("s1", tmp_path))
    main = {"path": "outputs/a.md", "content": "main"}
    run_tool(settings, "write_file", main, state=in_turn(1, "write_file", main), env=env, context=context)
    sub = {"parent_context": "main", "workspace_id": "s1"}
    run_tool(
        settings,
        "write_file",
        {"path": "outputs/b.md", "content": "sub"},
        state=sub,
        env=env,
        session="subagent-1",
        context=context,
    )
    assert [(w.turn, Path(w.path).name) for w in store_of(settings).writes_since("s1", 0)] == [
        (1, "a.md"),
        (1, "b.md"),
    ]


def test_the_plan_restores_deletes_and_leaves_conflicts_alone() -> None:
    writes = [
        FileWrite(2, "/w/edited", "h0", "h1"),
        FileWrite(3, "/w/edited", "h1", "h2"),
        FileWrite(2, "/w/created", None, "c1"),
        FileWrite(2, "/w/touched", "t0", "t1"),
        FileWrite(3, "/w/same", "s0", "s1"),
    ]
    current = {"/w/edited": "h2", "/w/created": "c1", "/w/touched": "user", "/w/same": "s0"}
    plan = {step.path: (step.action, step.content_sha256) for step in restore_plan(writes, current)}
    assert plan == {
        "/w/edited": ("restore", "h0"),  # back to what the first undone write found
        "/w/created": ("delete", None),
        "/w/touched": ("conflict", "t0"),  # the user changed it after the agent: not overwritten
        "/w/same": ("unchanged", "s0"),
    }
    assert restore_plan(writes, {})[1].action == "unchanged"  # created, then removed: as it was then


def test_a_file_removed_since_is_written_back_with_its_mode() -> None:
    writes = [FileWrite(2, "/w/private", "p0", "p1", 0o600), FileWrite(3, "/w/private", "p1", "p2", 0o600)]
    (step,) = restore_plan(writes, {})  # a command removed it: nothing of anyone's to overwrite
    assert (step.action, step.content_sha256, step.mode) == ("restore", "p0", 0o600)
    (changed,) = restore_plan(writes, {"/w/private": "user"})
    assert changed.action == "conflict"


def test_pruning_keeps_only_what_can_still_be_gone_back_to(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "snapshots.db")
    store.record("s", 0, tmp_path / "a", b"old a", b"new a")
    store.record("s", 1, tmp_path / "a", b"new a", b"newer a")
    store.record("t", 0, tmp_path / "b", b"old a", b"b")  # the same content, kept once
    assert store.stored_bytes() == len(b"old a") + len(b"new a")
    store.drop_since("s", 1)
    assert store.stored_bytes() == len(b"old a") and len(store.writes_since("s", 0)) == 1
    store.forget_session("s")
    assert store.stored_bytes() == len(b"old a")  # still the before of session t's write
    store.forget_session("t")
    assert store.stored_bytes() == 0 and store.writes_since("t", 0) == []


def test_parallel_writes_to_a_new_store_are_all_kept(tmp_path: Path) -> None:
    """The calls of one message write on their own threads; the first to reach a new
    snapshots.db switches it to WAL while another's switch can meet "database is locked",
    which SQLite does not wait out on its own. That write's snapshot was lost (about one
    attempt in thirty here), so /rewind left behind a file the message had created."""
    for attempt in range(100):
        store = SnapshotStore(tmp_path / f"{attempt}" / "snapshots.db")
        start = threading.Barrier(4)

        def write(k: int, store: SnapshotStore = store, start: threading.Barrier = start) -> None:
            start.wait()
            store.record("s", 0, tmp_path / f"f{k}", None, b"x")

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(write, range(4)))
        assert len(store.writes_since("s", 0)) == 4


def test_a_store_that_cannot_be_written_costs_the_snapshot_not_the_write(settings: Settings) -> None:
    settings.paths.data_dir.mkdir(parents=True, exist_ok=True)
    (settings.paths.data_dir / "snapshots.db").mkdir()  # not a database: every open fails
    root = workspace_root(settings)
    text, _ = run_tool(settings, "write_file", {"path": "outputs/kept.md", "content": "written"})
    assert text.startswith("Wrote") and (root / "outputs" / "kept.md").read_text() == "written"


def test_a_store_of_the_last_release_gains_modes_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "snapshots.db"
    with closing(sqlite3.connect(path)) as conn:  # as the last release left it: migration 0001 only
        migrate(conn, (Track("snapshots", MIGRATIONS[:1], adopts=TRACK.adopts),))
        conn.execute(
            "INSERT INTO file_writes (session, turn, path, before_sha256, after_sha256, written_at)"
            " VALUES ('s1', 0, '/w/a', 'h0', 'h1', 0)"
        )
        conn.commit()
    store = SnapshotStore(path)
    assert store.writes_since("s1", 0) == [FileWrite(0, "/w/a", "h0", "h1", None)]
    store.record("s1", 1, Path("/w/a"), b"x", b"y", 0o600)
    assert store.writes_since("s1", 1)[0].before_mode == 0o600
