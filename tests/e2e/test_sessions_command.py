"""`generalagent sessions` through the real CLI: listing, and deleting a session with its
checkpoints, its /rewind file versions and its workspace, leaving every other session whole."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e


def one_session(server: ScriptedOpenAIServer, env: dict[str, str], workdir: Path, note: str) -> str:
    """A saved `-p` session that wrote outputs/<note>.md in its workspace (the folder is untrusted)."""
    server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": f"outputs/{note}.md", "content": note})]),
        Reply(text=f"Wrote {note}."),
    )
    result = run_cli(["-p", f"write {note}", "--save", "--output-format", "json"], env, workdir)
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["session_id"])


def rows(database: Path, sql: str, *values: object) -> list[tuple]:
    with closing(sqlite3.connect(database)) as conn:
        return conn.execute(sql, values).fetchall()


def kept_of(data: Path, session: str) -> dict[str, int]:
    """What the data folder keeps of `session`, counted in each place."""
    return {
        "listed": len(rows(data / "sessions.db", "SELECT 1 FROM chat_sessions WHERE id = ?", session)),
        "checkpoints": len(
            rows(data / "sessions.db", "SELECT 1 FROM checkpoints WHERE thread_id = ?", session)
        ),
        "writes": len(rows(data / "sessions.db", "SELECT 1 FROM writes WHERE thread_id = ?", session)),
        "versions": len(rows(data / "snapshots.db", "SELECT 1 FROM file_writes WHERE session = ?", session)),
        "workspace": int((data / "workspaces" / session).exists()),
    }


def test_delete_removes_everything_kept_of_one_session_and_nothing_else(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    gone = one_session(openai_server, cli_env, workdir, "first")
    kept = one_session(openai_server, cli_env, workdir, "second")
    assert kept_of(data, gone) == {"listed": 1, "checkpoints": 1, "writes": 0, "versions": 1, "workspace": 1}
    before = kept_of(data, kept)

    listing = run_cli(["sessions"], cli_env, workdir)
    assert listing.returncode == 0 and gone in listing.stdout and "write first" in listing.stdout

    # No terminal to ask: nothing happens without --yes.
    refused = run_cli(["sessions", "delete", gone[:-2]], cli_env, workdir)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert kept_of(data, gone)["listed"] == 1

    deleted = run_cli(["sessions", "delete", gone, "--yes"], cli_env, workdir)
    assert deleted.returncode == 0, deleted.stderr
    assert "Deleted 1 session." in deleted.stdout
    assert kept_of(data, gone) == {"listed": 0, "checkpoints": 0, "writes": 0, "versions": 0, "workspace": 0}
    assert kept_of(data, kept) == before

    again = run_cli(["sessions", "delete", gone, "--yes"], cli_env, workdir)
    assert again.returncode == 2 and "No session id starts with" in again.stderr


def test_older_than_deletes_sessions_unused_for_that_long(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    old = one_session(openai_server, cli_env, workdir, "old")
    recent = one_session(openai_server, cli_env, workdir, "recent")
    with closing(sqlite3.connect(data / "sessions.db")) as conn, conn:
        conn.execute("UPDATE chat_sessions SET updated_at = ? WHERE id = ?", (time.time() - 40 * 86400, old))
    result = run_cli(["sessions", "delete", "--older-than", "30", "--yes"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert kept_of(data, old)["listed"] == 0 and kept_of(data, recent)["listed"] == 1
    nothing = run_cli(["sessions", "delete", "--older-than", "30", "--yes"], cli_env, workdir)
    assert nothing.returncode == 0 and "No session was last used that long ago." in nothing.stdout


def test_the_question_lists_what_goes_and_no_keeps_it(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    session = one_session(openai_server, cli_env, workdir, "asked")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "generalAgent", "sessions", "delete", session],
        env=cli_env,
        cwd=str(workdir),
        encoding="utf-8",
        timeout=60,
    )
    child.expect("1 file version for /rewind")
    child.expect(r"Delete 1 session and everything kept of it\? \[y/N\]")
    child.sendline("n")
    child.expect("Nothing deleted.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert kept_of(tmp_path / "data", session)["listed"] == 1


def test_a_store_that_cannot_be_used_is_one_clear_line_and_deletes_nothing(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    session = one_session(openai_server, cli_env, workdir, "stuck")
    (data / "snapshots.db").rename(data / "snapshots.moved")
    (data / "snapshots.db").mkdir()  # the file versions cannot be read
    unreadable = run_cli(["sessions", "delete", session, "--yes"], cli_env, workdir)
    assert unreadable.returncode == 1 and unreadable.stderr.strip() and "Traceback" not in unreadable.stderr
    assert rows(data / "sessions.db", "SELECT 1 FROM chat_sessions WHERE id = ?", session) == [(1,)]
    (data / "snapshots.db").rmdir()
    (data / "snapshots.moved").rename(data / "snapshots.db")
    # The conversation's store cannot be reached (nothing listens on port 1).
    offline = {**cli_env, "DATABASE_URL": "postgresql://agent@127.0.0.1:1/agent"}
    failed = run_cli(["sessions", "delete", session, "--yes"], offline, workdir)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert f"Session {session} could not be deleted" in failed.stderr and "run this again" in failed.stderr
    assert kept_of(data, session)["listed"] == 1
    assert run_cli(["sessions", "delete", session, "--yes"], cli_env, workdir).returncode == 0
    assert kept_of(data, session) == {
        "listed": 0,
        "checkpoints": 0,
        "writes": 0,
        "versions": 0,
        "workspace": 0,
    }
