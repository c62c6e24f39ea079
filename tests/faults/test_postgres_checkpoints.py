"""Checkpoints in a real PostgreSQL server on loopback (DATABASE_URL), across process restarts.

`.ci/run` starts a throw-away cluster and exports GENERALAGENT_TEST_DATABASE_URL; each test
gets a database of its own on it. Without that variable the tests skip, except in CI
(CI set), where they must run.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.faults.conftest import (
    assert_history_intact,
    assert_requests_valid,
    latest_session,
    stored_messages,
)
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.slow_page import SlowPage
from tests.support.terminal import ask, expect_prompt

fault = pytest.mark.fault
URL_ENV = "GENERALAGENT_TEST_DATABASE_URL"


@pytest.fixture
def database_url() -> Iterator[str]:
    """A fresh database on the test server, dropped afterwards."""
    server_url = os.environ.get(URL_ENV)
    if not server_url:
        if os.environ.get("CI"):
            pytest.fail(f"{URL_ENV} is not set: .ci/run starts PostgreSQL for these tests")
        pytest.skip(f"set {URL_ENV} to a PostgreSQL server (as .ci/run does) to run these tests")
    import psycopg

    name = f"generalagent_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(server_url)
    yield urlunsplit(parts._replace(path=f"/{name}"))
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def slow_page() -> Iterator[SlowPage]:
    page = SlowPage()
    yield page
    page.close()


def checkpoint_counts(database_url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id").fetchall()
    return {thread: count for thread, count in rows}


def checkpointed(database_url: str, text: str) -> bool:
    """A checkpoint's channel values hold `text` (LangGraph saves them in the background)."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        try:
            found = conn.execute(
                "SELECT 1 FROM checkpoint_blobs WHERE position(%s IN blob) > 0", (text.encode(),)
            )
        except psycopg.errors.UndefinedTable:  # not set up yet
            return False
        return found.fetchone() is not None


def test_postgres_keeps_only_the_latest_checkpoint_and_its_blobs(settings, database_url: str) -> None:
    """Storage linear in the conversation: after many turns one checkpoint per thread, one
    blob per channel, and an older database (every checkpoint kept) pruned when opened."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    from generalAgent.graph.checkpoints import close_checkpointer, open_postgres_checkpointer
    from tests.support.agent import build_test_agent, thread, user_turn
    from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

    def answers(request):
        asked = request.messages[-1].type == "human" and request.messages[-1].text.startswith(
            ("old", "question")
        )
        return ai("", tool_call("now")) if asked else ai("done")

    with psycopg.connect(database_url, autocommit=True) as conn:
        legacy = PostgresSaver(conn)
        legacy.setup()
        _, graph = build_test_agent(settings, ScriptedChatModel(responder=answers), legacy)
        for i in range(5):
            graph.invoke(user_turn(f"old {i}", settings), thread("legacy"))
    assert checkpoint_counts(database_url)["legacy"] > 5

    saver = open_postgres_checkpointer(database_url)
    assert checkpoint_counts(database_url) == {"legacy": 1}
    _, graph = build_test_agent(settings, ScriptedChatModel(responder=answers), saver)
    for i in range(12):
        graph.invoke(user_turn(f"question {i}", settings), thread("long"))
    assert checkpoint_counts(database_url) == {"legacy": 1, "long": 1}
    state = graph.get_state(thread("long")).values
    assert len(state["messages"]) == 48
    with psycopg.connect(database_url) as conn:
        blobs = conn.execute(
            "SELECT channel, count(*) FROM checkpoint_blobs WHERE thread_id = 'long' GROUP BY channel"
        ).fetchall()
        writes = conn.execute("SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'long'").fetchone()
    assert blobs and all(count == 1 for _, count in blobs)
    assert writes[0] <= 4
    close_checkpointer(saver)


def checkpoint_threads(database_url: str) -> set[str]:
    import psycopg

    with psycopg.connect(database_url) as conn:
        return {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}


@fault(
    area="deployment",
    fault="DATABASE_URL set: a conversation with a tool call, the process ends, a new process resumes it (-p --resume)",
    outcome="The resumed request carries the earlier turns read back from PostgreSQL; the thread is in PostgreSQL, not in sessions.db; the history there is intact; `sessions delete` removes it from PostgreSQL.",
)
def test_conversation_resumes_from_postgres(
    openai_server: ScriptedOpenAIServer,
    workdir: Path,
    cli_env: dict[str, str],
    data_dir: Path,
    database_url: str,
) -> None:
    env = {**cli_env, "DATABASE_URL": database_url}
    openai_server.add(
        Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})]),
        Reply(text="Noted: the code word is heron."),
        Reply(text="The code word was heron."),
    )
    first = run_cli(["-p", "Remember the code word heron."], env, workdir)
    assert first.returncode == 0, first.stderr
    second = run_cli(["-p", "What was the code word?", "--resume"], env, workdir)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "The code word was heron.\n"
    resumed = openai_server.chat_requests[-1]
    assert [m["role"] for m in resumed.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert resumed.messages[1]["content"] == "Remember the code word heron."
    session = latest_session(data_dir)
    assert session in checkpoint_threads(database_url)
    messages = stored_messages(data_dir, session, database_url=database_url)
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai", "human", "ai"]
    assert_history_intact(messages)
    import sqlite3

    with sqlite3.connect(data_dir / "sessions.db") as local:
        tables = {row[0] for row in local.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "checkpoints" not in tables
    assert checkpoint_counts(database_url) == {session: 1}  # older checkpoints are pruned
    assert_requests_valid(openai_server)
    deleted = run_cli(["sessions", "delete", session, "--yes"], env, workdir)
    assert deleted.returncode == 0, deleted.stderr
    import psycopg

    with psycopg.connect(database_url) as conn:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            assert conn.execute(
                f"SELECT count(*) FROM {table} WHERE thread_id = %s", (session,)
            ).fetchone() == (0,)
    assert run_cli(["sessions", "--all"], env, workdir).stdout.strip() == "No saved sessions yet."


@fault(
    area="deployment",
    fault="DATABASE_URL set: the chat is killed (SIGKILL) while a tool runs, then --resume",
    outcome="The call left open in PostgreSQL is answered 'Not run' before the new message; the conversation continues with a valid history.",
)
def test_killed_mid_tool_resumes_from_postgres(
    openai_server: ScriptedOpenAIServer,
    spawn_chat,
    cli_env: dict[str, str],
    data_dir: Path,
    database_url: str,
    slow_page: SlowPage,
) -> None:
    env = {**cli_env, "DATABASE_URL": database_url, "FETCH_ALLOW_PRIVATE": "true"}
    fetch = ToolCall("fetch_web", {"url": slow_page.url})
    openai_server.add(
        Reply(text="Ready."),
        Reply(tool_calls=[fetch]),
        Reply(text="The fetch never finished."),
    )
    child = spawn_chat(env=env)
    expect_prompt(child)
    ask(child, "hello", "Ready")
    expect_prompt(child)
    child.sendline(f"fetch the slow page at {slow_page.url}")  # a host the user names: no question
    assert slow_page.requested.wait(60)
    deadline = time.monotonic() + 60  # the tool runs; wait until the model's call is checkpointed
    while not checkpointed(database_url, fetch.id):
        assert time.monotonic() < deadline, "the model's call was never checkpointed"
        time.sleep(0.05)
    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)

    resumed = spawn_chat("-c", env=env)  # the latest session of this folder, without the picker
    expect_prompt(resumed)
    ask(resumed, "did it work?", "never finished")
    expect_prompt(resumed)
    resumed.sendeof()
    resumed.expect(pexpect.EOF)
    request = openai_server.chat_requests[-1]
    assert [m["role"] for m in request.messages][-4:] == ["user", "assistant", "tool", "user"]
    assert request.messages[-2]["content"].startswith("Not run: the previous session stopped")
    assert_history_intact(stored_messages(data_dir, database_url=database_url))
    assert_requests_valid(openai_server)


@fault(
    area="deployment",
    fault="DATABASE_URL points at a server that is down (with a password in the URL)",
    outcome="-p stops with one line naming host, port, database and user (never the password) and what to do; exit 2; doctor marks checkpoints ✗.",
)
def test_unreachable_postgres_is_one_clear_line(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    env = {**cli_env, "DATABASE_URL": "postgresql://agent:hunter2-secret@127.0.0.1:9/agentdb"}
    result = run_cli(["-p", "hello"], env, workdir)
    shown = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 2, shown
    assert "Cannot connect to PostgreSQL at 127.0.0.1:9/agentdb as agent (DATABASE_URL)" in shown
    assert "unset DATABASE_URL" in shown
    doctor = run_cli(["doctor", "--offline"], env, workdir)
    shown += doctor.stdout + doctor.stderr
    assert doctor.returncode == 1 and "✗ checkpoints" in doctor.stdout
    assert "hunter2-secret" not in shown and "Traceback" not in shown
    assert openai_server.chat_requests == []
