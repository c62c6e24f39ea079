"""Checkpoint storage stays linear: only each thread's latest checkpoint is kept, in real SQLite.

What must keep working on the pruned store: a new process resuming the thread, an approval
pending across a restart, /retry after a failed model call, and an older database (every
checkpoint kept) that is pruned and compacted the first time it is opened.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from generalAgent.config.settings import Settings
from generalAgent.graph.checkpoints import (
    AUTO_VACUUM_INCREMENTAL,
    describe_database_url,
    open_sqlite_checkpointer,
)
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


def checkpoint_rows(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id").fetchall()
    return dict(rows)


def write_rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM writes").fetchone()[0]


def tool_turns(n: int) -> ScriptedChatModel:
    replies = []
    for i in range(n):
        replies += [ai("", tool_call("now", {"timezone": "UTC"})), ai(f"answer {i}")]
    return ScriptedChatModel(replies=replies)


def test_only_the_latest_checkpoint_of_each_thread_is_kept(settings: Settings) -> None:
    path = settings.paths.sessions_db
    saver = open_sqlite_checkpointer(path)
    _, graph = build_test_agent(settings, tool_turns(6), saver)
    for i in range(3):
        graph.invoke(user_turn(f"question {i}", settings), thread("a"))
        graph.invoke(user_turn(f"question {i}", settings), thread("b"))
    assert checkpoint_rows(path) == {"a": 1, "b": 1}
    assert len(graph.get_state(thread("a")).values["messages"]) == 12
    saver.conn.close()


def test_a_new_process_resumes_the_pruned_thread(settings: Settings) -> None:
    path = settings.paths.sessions_db
    _, graph = build_test_agent(settings, tool_turns(2), open_sqlite_checkpointer(path))
    graph.invoke(user_turn("remember 42", settings), thread("s"))
    graph.invoke(user_turn("and 43", settings), thread("s"))

    model = ScriptedChatModel(replies=[ai("42 and 43")])
    _, reopened = build_test_agent(settings, model, open_sqlite_checkpointer(path))
    state = reopened.invoke(user_turn("what did I say?", settings), thread("s"))
    sent = [m.text for m in model.requests[0].messages[1:]]
    assert sent[0] == "remember 42" and "and 43" in sent
    assert state["messages"][-1].text == "42 and 43"
    assert checkpoint_rows(path) == {"s": 1}


def test_a_pending_approval_survives_pruning_and_a_restart(settings: Settings) -> None:
    path = settings.paths.sessions_db
    model = ScriptedChatModel(replies=[ai("", tool_call("run_bash_command", {"command": "echo hi"}))])
    _, graph = build_test_agent(settings, model, open_sqlite_checkpointer(path))
    graph.invoke(user_turn("@run_bash_command say hi", settings, mentions=["run_bash_command"]), thread())
    assert checkpoint_rows(path) == {"t1": 1}

    resumed_model = ScriptedChatModel(replies=[ai("It said hi.")])
    _, reopened = build_test_agent(settings, resumed_model, open_sqlite_checkpointer(path))
    pending = [i for task in reopened.get_state(thread()).tasks for i in task.interrupts]
    (request,) = pending[0].value["requests"]
    assert request["args"] == {"command": "echo hi"}
    state = reopened.invoke(Command(resume={pending[0].id: {request["call_id"]: "yes"}}), thread())
    assert "hi" in state["messages"][-2].text
    assert state["messages"][-1].text == "It said hi."


def test_retry_after_a_failed_model_call_resumes_from_the_latest_checkpoint(settings: Settings) -> None:
    path = settings.paths.sessions_db
    calls = {"n": 0}

    def flaky(request):
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("the endpoint went away")
        return ai("", tool_call("now")) if calls["n"] == 1 else ai("done")

    _, graph = build_test_agent(settings, ScriptedChatModel(responder=flaky), open_sqlite_checkpointer(path))
    with pytest.raises(ConnectionError):
        graph.invoke(user_turn("what time is it?", settings), thread())
    assert graph.get_state(thread()).next == ("planner",)
    state = graph.invoke(None, thread())  # what /retry does
    assert state["messages"][-1].text == "done"
    assert [type(m).__name__ for m in state["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert checkpoint_rows(path) == {"t1": 1}


def test_an_older_database_is_pruned_and_shrinks_on_first_open(settings: Settings) -> None:
    path = settings.paths.sessions_db
    conn = sqlite3.connect(path, check_same_thread=False)
    legacy = SqliteSaver(conn)  # how sessions.db was written before: every checkpoint kept
    legacy.setup()
    padding = "x" * 4000  # make each checkpoint's copy of the history weigh something
    model = ScriptedChatModel(responder=lambda request: ai(f"noted {padding}"))
    _, graph = build_test_agent(settings, model, legacy)
    for i in range(30):
        graph.invoke(user_turn(f"fact {i}", settings), thread("old"))
    conn.close()
    before = path.stat().st_size
    assert checkpoint_rows(path)["old"] > 30

    saver = open_sqlite_checkpointer(path)
    assert checkpoint_rows(path) == {"old": 1}
    assert saver.conn.execute("PRAGMA auto_vacuum").fetchone()[0] == AUTO_VACUUM_INCREMENTAL
    assert path.stat().st_size < before / 4
    assert saver.report.pruned_checkpoints > 30 and "sessions.db" in saver.report.summary()
    model = ScriptedChatModel(replies=[ai("29 facts")])
    _, reopened = build_test_agent(settings, model, saver)
    state = reopened.invoke(user_turn("how many?", settings), thread("old"))
    assert len(state["messages"]) == 62
    assert open_sqlite_checkpointer(path).report.summary() == ""  # done once


def test_late_writes_of_an_older_step_do_not_accumulate(settings: Settings) -> None:
    path = settings.paths.sessions_db
    saver = open_sqlite_checkpointer(path)
    _, graph = build_test_agent(settings, tool_turns(20), saver)
    for i in range(20):
        graph.invoke(user_turn(f"question {i}", settings), thread())
    # Unpruned, 20 such turns leave 399 write rows. Pruned, what is left belongs to the last
    # steps: their late writes land after the last save (usually 4 rows or fewer; more
    # under load, when several steps' writes are still in flight), and the next save
    # deletes them. The bound is one turn's worth: anything that accumulates passes it.
    assert write_rows(path) <= 20


def traced_statements(saver) -> list[str]:
    """The statements the saver's connection runs from now on (their first five words)."""
    seen: list[str] = []
    saver.conn.set_trace_callback(lambda statement: seen.append(" ".join(statement.split()[:5])))
    return seen


def test_a_checkpoint_is_saved_and_pruned_in_one_commit(settings: Settings) -> None:
    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    _, graph = build_test_agent(settings, tool_turns(2), saver)
    graph.invoke(user_turn("question 0", settings), thread("a"))
    seen = traced_statements(saver)
    graph.invoke(user_turn("question 1", settings), thread("a"))
    saver.conn.set_trace_callback(None)
    transactions: list[list[str]] = []
    for statement in seen:
        if statement.startswith("BEGIN"):
            transactions.append([])
        elif not statement.startswith(("COMMIT", "SELECT", "PRAGMA")) and transactions:
            transactions[-1].append(statement)
    saves = [t for t in transactions if any(s.startswith("INSERT OR REPLACE INTO checkpoints") for s in t)]
    assert saves
    for statements in saves:  # the save and both deletions, committed together
        assert [s.split()[0] for s in statements] == ["INSERT", "DELETE", "DELETE"]
    assert seen.count("COMMIT") == len(transactions)
    assert checkpoint_rows(settings.paths.sessions_db) == {"a": 1}
    saver.conn.close()


def test_a_step_whose_calls_need_no_approval_adds_no_approval_checkpoint(settings: Settings) -> None:
    """planner → tools directly: the turn saves input, planner, tools, planner (and the
    step before the first node), not an approval step that only records "not needed"."""
    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    _, graph = build_test_agent(settings, tool_turns(1), saver)
    seen = traced_statements(saver)
    graph.invoke(user_turn("what time is it?", settings), thread("a"))
    saver.conn.set_trace_callback(None)
    saves = sum(s.startswith("INSERT OR REPLACE INTO checkpoints") for s in seen)
    assert saves == 5
    sources = [m.content for m in graph.get_state(thread("a")).values["messages"]]
    assert sources[-1] == "answer 0" and len(sources) == 4  # the tool ran and was answered
    saver.conn.close()


def test_the_sessions_database_runs_wal_with_synchronous_normal(settings: Settings) -> None:
    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    assert saver.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert saver.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    saver.conn.close()


def test_saved_checkpoints_are_byte_for_byte_what_langgraph_writes(settings: Settings) -> None:
    """Messages are packed once per thread (MessagePacker), yet each stored checkpoint is
    exactly the bytes LangGraph's own serializer makes of it, through tool turns, a repair
    that rewrites the whole list and a second thread between them."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from generalAgent.graph.checkpoints import MessagePacker

    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    assert MessagePacker.applies_to(saver.serde)
    _, graph = build_test_agent(settings, tool_turns(6), saver)
    plain = JsonPlusSerializer()
    for number in range(3):
        for name in ("a", "b"):
            graph.invoke(user_turn(f"turn {number} of {name}", settings), thread(name))
            stored = saver.conn.execute(
                "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ?", (name,)
            ).fetchone()
            checkpoint = plain.loads_typed(stored)
            assert plain.dumps_typed(checkpoint) == stored
            assert [m.content for m in checkpoint["channel_values"]["messages"]][
                -1
            ] == f"answer {number * 2 + (name == 'b')}"


def test_a_changed_message_is_packed_again() -> None:
    """A message object is reused only while it is the very same object: a new message
    under a reused id (an edit, a repair) is packed anew."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from generalAgent.graph.checkpoints import MessagePacker

    packer, plain = MessagePacker(), JsonPlusSerializer()
    messages = [HumanMessage("hi", id="1"), AIMessage("first answer", id="2")]
    checkpoint = {"v": 4, "id": "x", "channel_values": {"messages": messages}, "channel_versions": {}}
    assert packer.dumps(("t", ""), checkpoint) == plain.dumps_typed(checkpoint)
    messages[1] = AIMessage("edited answer", id="2")
    assert packer.dumps(("t", ""), checkpoint) == plain.dumps_typed(checkpoint)
    assert "edited answer" in str(plain.loads_typed(packer.dumps(("t", ""), checkpoint)))
    # A message without an id is saved with the step's input; LangGraph's reducer then
    # gives it an id in place, and the next save must carry the id.
    question = HumanMessage("next question")
    checkpoint["channel_values"]["__start__"] = {"messages": [question]}
    assert packer.dumps(("t", ""), checkpoint) == plain.dumps_typed(checkpoint)
    question.id = "3"
    messages.append(question)
    assert packer.dumps(("t", ""), checkpoint) == plain.dumps_typed(checkpoint)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://ana:s3cret@db.example:5433/agent", "db.example:5433/agent as ana"),
        # libpq lists several hosts in one URL; urllib cannot read a port out of that
        ("postgresql://ana:s3cret@h1:5432,h2:5433/agent", "h1:5432,h2:5433/agent as ana"),
        ("postgresql://%E7%94%A8%E6%88%B7:p%40ss@[::1]:5432/%E4%BC%9A%E8%AF%9D", "[::1]:5432/会话 as 用户"),
        ("postgresql:///agent?host=/var/run/postgresql", "/var/run/postgresql/agent"),
        ("postgresql:///agent", "localhost/agent"),
        ("postgresql://db", "db/(default database)"),
        ("host=db dbname=agent password=s3cret", "the server in DATABASE_URL"),
    ],
)
def test_a_database_url_is_described_without_its_password(url: str, shown: str) -> None:
    assert describe_database_url(url) == shown
    assert "s3cret" not in describe_database_url(url) and "p@ss" not in describe_database_url(url)
