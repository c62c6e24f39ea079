"""The compiled graph with a scripted model: routing, tools, loop budget, checkpoints."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from generalAgent.config.settings import Settings, load_settings
from generalAgent.graph.checkpoints import open_sqlite_checkpointer
from generalAgent.graph.history import call_ids
from generalAgent.graph.state import model_calls_this_turn
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


def assert_valid_history(messages: list) -> None:
    """Every call is answered by the tool messages right after it; no orphan answers."""
    index = 0
    while index < len(messages):
        ids = call_ids(messages[index])
        answers = []
        index += 1
        while index < len(messages) and isinstance(messages[index], ToolMessage):
            answers.append(messages[index].tool_call_id)
            index += 1
        assert sorted(answers) == sorted(ids)


def test_plain_answer_is_one_model_call(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("Hello")])
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("hi", settings), thread())
    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage]
    assert model_calls_this_turn(state["messages"]) == 1  # derived, not stored
    assert "loops" not in state
    assert len(model.requests) == 1
    request = model.requests[0]
    assert isinstance(request.messages[0], SystemMessage)
    assert "now" in request.tools and "fetch_web" in request.tools
    assert "run_bash_command" not in request.tools and "delegate_task" not in request.tools


def test_tool_call_runs_and_result_reaches_the_model(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("", tool_call("now", {"timezone": "UTC"})), ai("It is late.")])
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("what time is it?", settings), thread())
    tool_message = state["messages"][2]
    assert isinstance(tool_message, ToolMessage)
    assert "UTC" in tool_message.content
    assert state["messages"][-1].content == "It is late."
    second_request = model.requests[1].messages
    assert isinstance(second_request[-1], ToolMessage)
    assert_valid_history(state["messages"])


def test_loop_budget_ends_in_finalize_without_tools(settings: Settings) -> None:
    settings = load_settings(
        env_file=None, paths={"data_dir": settings.paths.data_dir}, governance={"max_loops": 3}
    )

    def always_calls_tools(request):
        if not request.tools:  # finalize binds no tools
            return ai("Here is what I found so far.")
        zone = ("UTC", "Asia/Shanghai", "Europe/Berlin")[len(request.messages) % 3]
        return ai("", tool_call("now", {"timezone": zone}))  # a new call each time: the budget ends it

    model = ScriptedChatModel(responder=always_calls_tools)
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("loop forever", settings), thread())
    assert len(model.requests) == 4  # three planner calls, then finalize
    assert model.requests[-1].tools == []
    assert "steps of this turn" in model.requests[-1].messages[-1].content
    assert state["messages"][-1].content == "Here is what I found so far."
    skipped = [m for m in state["messages"] if isinstance(m, ToolMessage) and m.content.startswith("Not run")]
    assert len(skipped) == 1
    assert_valid_history(state["messages"])


def test_invalid_json_arguments_get_an_answer_the_model_can_fix(settings: Settings) -> None:
    broken = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "id": "bad1",
                "name": "now",
                "args": "{timezone: UTC",
                "error": "bad json",
                "type": "invalid_tool_call",
            }
        ],
    )
    model = ScriptedChatModel(replies=[broken, ai("Fixed.")])
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("time?", settings), thread())
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.tool_call_id == "bad1"
    assert "not valid JSON" in answer.content
    assert state["messages"][-1].content == "Fixed."


def test_call_to_a_tool_not_offered_is_refused(settings: Settings) -> None:
    model = ScriptedChatModel(
        replies=[ai("", tool_call("run_bash_command", {"command": "rm -rf /"})), ai("ok")]
    )
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("do it", settings), thread())
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.status == "error"
    assert "run_bash_command" in answer.content
    assert "not a valid tool" in answer.content


def test_huge_tool_result_is_capped(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from generalAgent.tools.builtin import now as now_module

    monkeypatch.setattr(now_module, "current_time", lambda timezone="UTC": "x" * 5_000_000)
    model = ScriptedChatModel(replies=[ai("", tool_call("now")), ai("done")])
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("big", settings), thread())
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert len(answer.content) < settings.tools.tool_result_max_chars + 300
    assert "Output cut: 5,000,000 characters" in answer.content


def test_new_fields_are_cleared_and_history_fields_kept(settings: Settings) -> None:
    upload = {"name": "a.pdf", "path": "uploads/a.pdf", "type": "pdf", "size": 10}
    model = ScriptedChatModel(replies=[ai("seen"), ai("again")])
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(
        user_turn(
            "read #a.pdf",
            settings,
            uploads=[upload],
            mentions=["agent"],
        ),
        thread(),
    )
    assert state["new_uploaded_files"] == [] and state["new_mentions"] == []
    assert state["uploaded_files"] == [upload] and state["mentions"] == ["agent"]
    assert "uploads/a.pdf" in model.requests[0].messages[-1].content
    state = graph.invoke(user_turn("and now?", settings), thread())
    assert "uploads/a.pdf" not in json.dumps([m.content for m in model.requests[1].messages[-1:]])


def test_state_survives_a_new_process(settings: Settings) -> None:
    path = settings.paths.sessions_db
    _, graph = build_test_agent(
        settings, ScriptedChatModel(replies=[ai("first answer")]), open_sqlite_checkpointer(path)
    )
    graph.invoke(user_turn("remember 42", settings), thread("s1"))

    model = ScriptedChatModel(replies=[ai("you said 42")])
    _, reopened = build_test_agent(settings, model, open_sqlite_checkpointer(path))
    state = reopened.invoke(user_turn("what did I say?", settings), thread("s1"))
    assert [m.content for m in state["messages"]] == [
        "remember 42",
        "first answer",
        "what did I say?",
        "you said 42",
    ]
    sent = [m.content for m in model.requests[0].messages[1:]]
    assert sent[:2] == ["remember 42", "first answer"]


def test_a_state_without_max_loops_still_ends(settings: Settings) -> None:
    """A run started without the CLI's fields (e.g. from LangGraph Server) obeys MAX_LOOPS."""
    settings = load_settings(
        env_file=None, paths={"data_dir": settings.paths.data_dir}, governance={"max_loops": 2}
    )
    model = ScriptedChatModel(
        responder=lambda request: ai("", tool_call("now")) if request.tools else ai("forced")
    )
    _, graph = build_test_agent(settings, model)
    state = graph.invoke({"messages": [HumanMessage(content="loop")]}, thread())
    assert state["messages"][-1].content == "forced"
    assert len(model.requests) == 3
    # The next turn starts counting from zero again, without the CLI resetting anything.
    state = graph.invoke({"messages": [HumanMessage(content="again")]}, thread())
    assert len(model.requests) == 6 and state["messages"][-1].content == "forced"


def test_a_swapped_file_argument_name_runs_on_the_first_try(settings: Settings) -> None:
    """search_file with `path`, read_file with `file_path`: both run, no "Field required"."""
    uploads = settings.paths.workspaces_dir / "t1" / "uploads"
    uploads.mkdir(parents=True)
    (uploads / "notes.md").write_text("# Notes\n\nThe launch moved to March.\n", encoding="utf-8")
    model = ScriptedChatModel(
        replies=[
            ai(
                "",
                tool_call("search_file", {"path": "uploads/notes.md", "query": "launch"}, "s"),
                tool_call("read_file", {"file_path": "uploads/notes.md"}, "r"),
            ),
            ai("March."),
        ]
    )
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("when is the launch?", settings), thread())
    assert len(model.requests) == 2
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    for answer in answers.values():
        assert answer.status != "error" and "launch moved to March" in answer.content
    call_message = state["messages"][1]
    assert [c["args"] for c in call_message.tool_calls] == [
        {"file_path": "uploads/notes.md", "query": "launch"},
        {"path": "uploads/notes.md"},
    ]
    assert_valid_history(state["messages"])
