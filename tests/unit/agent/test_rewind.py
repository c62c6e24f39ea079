"""/rewind's conversation part on the real graph and the pruning SQLite checkpointer."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from generalAgent.agent.rewind import rewound_update, summary_after, todos_before, user_turns
from generalAgent.config.settings import Settings
from generalAgent.graph.checkpoints import open_sqlite_checkpointer
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import Request, ScriptedChatModel, ai, tool_call

WORDS = ("alpha", "bravo", "charlie", "delta")


def todos(*names: str) -> dict:
    return {"todos": [{"content": n, "status": "pending", "priority": "medium"} for n in names]}


def respond(request: Request) -> AIMessage:
    """Each question's first call writes a todo list named after it; then an answer.
    (Reminders come as extra user messages after a tool result: the question is the last
    user message that starts with one of WORDS.)"""
    messages = request.messages
    index = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and question_word(m))
    if any(isinstance(m, ToolMessage) for m in messages[index:]):
        return ai("answered")
    return ai("", tool_call("todo_write", todos(f"{question_word(messages[index])} step")))


def question_word(message: HumanMessage) -> str:
    first = str(message.content).split(maxsplit=1)[:1]
    return first[0] if first and first[0] in WORDS else ""


def test_going_back_rewrites_history_summary_and_todos_and_the_next_request_is_clean(
    settings: Settings,
) -> None:
    model = ScriptedChatModel(responder=respond)
    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    _parts, graph = build_test_agent(settings, model, saver)
    config = thread()
    for text in ("alpha question", "bravo question", "charlie question"):
        graph.invoke(user_turn(text, settings), config)
    state = graph.get_state(config).values
    messages = state["messages"]
    assert state["todos"][0]["content"] == "charlie step"
    # A cut made in the third turn, summarising the first two: it speaks for dropped turns.
    summary = {"text": "alpha and bravo happened", "through": messages[5].id, "messages": 6, "tokens": 5}
    graph.update_state(config, {"summary": summary}, as_node="finalize")

    turns = user_turns(graph.get_state(config).values["messages"])
    assert [t.text for t in turns] == ["alpha question", "bravo question", "charlie question"]
    values = graph.get_state(config).values
    graph.update_state(config, rewound_update(values["messages"], values, turns[1]), as_node="finalize")

    after = graph.get_state(config)
    assert [m.content for m in after.values["messages"] if isinstance(m, HumanMessage)] == ["alpha question"]
    assert after.values["summary"] is None and after.values["todos"][0]["content"] == "alpha step"
    assert after.next == ()
    rows = saver.conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    assert rows == 1  # a fork of the latest checkpoint; the older ones are pruned as usual

    graph.invoke(user_turn("delta question", settings), config)
    sent = json.dumps([str(m.content) for m in model.requests[-2].messages], ensure_ascii=False)
    assert "alpha question" in sent and "delta question" in sent
    for trace in ("bravo", "charlie", "alpha and bravo happened"):
        assert trace not in sent
    reminder = str(model.requests[-2].messages[-1].content)
    assert "alpha step" in reminder and "charlie step" not in reminder  # the todo reminder


def test_a_summary_from_before_the_point_stays_and_todos_stay_without_a_later_todo_write() -> None:
    history = [
        HumanMessage("one", id="h1"),
        AIMessage("a", id="a1"),
        HumanMessage("two", id="h2"),
        AIMessage("b", id="a2"),
        HumanMessage("three", id="h3"),
        AIMessage("c", id="a3"),
    ]
    turns = user_turns(history)
    summary = {"text": "one happened", "through": "a1"}
    assert summary_after(history, summary, turns[1]) == summary
    assert summary_after(history, summary, turns[0]) is None
    current = [{"content": "keep me", "status": "pending", "priority": "low"}]
    assert todos_before(history, current, turns[1]) == current


def test_todos_taken_back_are_marked_untrusted_when_their_turn_read_outside_content() -> None:
    call = tool_call("todo_write", todos("from the page"))
    later = tool_call("todo_write", todos("later"))
    history = [
        HumanMessage("read the page", id="h1"),
        AIMessage("", id="a1", tool_calls=[tool_call("fetch_web", {"url": "https://example.com"}, "f1")]),
        ToolMessage("page text", tool_call_id="f1", name="fetch_web", id="t1"),
        AIMessage("", id="a2", tool_calls=[call]),
        ToolMessage("saved", tool_call_id=call["id"], name="todo_write", id="t2"),
        HumanMessage("next", id="h2"),
        AIMessage("", id="a3", tool_calls=[later]),
        ToolMessage("saved", tool_call_id=later["id"], name="todo_write", id="t3"),
    ]
    restored = todos_before(history, [], user_turns(history)[1])
    assert restored == [
        {"content": "from the page", "status": "pending", "priority": "medium", "untrusted": True}
    ]
