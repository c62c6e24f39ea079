"""run_bash_command approval (interrupt / resume) and delegate_task isolation, in the real graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from generalAgent.config.settings import Settings
from generalAgent.graph.builder import build_graphs, build_parts
from generalAgent.tools.run_context import RunContext, SessionScope
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


def bash_turn(settings: Settings, text: str = "@run_bash_command list files") -> dict:
    return user_turn(
        text,
        settings,
        mentions=["run_bash_command"],
        session_id="w1",
    )


def interrupts(graph, config) -> list:
    return [i for task in graph.get_state(config).tasks for i in task.interrupts]


def approve_all(graph, answer: str) -> dict:
    """Resume the pending approval step with `answer` for every call it asks about."""
    pending = interrupts(graph, thread())
    return graph.invoke(
        Command(resume={i.id: {r["call_id"]: answer for r in i.value["requests"]} for i in pending}), thread()
    )


def test_mentioned_tool_is_callable_in_the_same_turn_and_asks_first(settings: Settings) -> None:
    model = ScriptedChatModel(
        replies=[
            ai("", tool_call("run_bash_command", {"command": "echo hello > outputs/x.txt; echo done"})),
            ai("Ran it."),
        ]
    )
    _, graph = build_test_agent(settings, model)
    graph.invoke(bash_turn(settings), thread())
    assert "run_bash_command" in model.requests[0].tools
    [pending] = interrupts(graph, thread())
    [request] = pending.value["requests"]
    assert request["tool"] == "run_bash_command" and request["args"]["command"].startswith("echo hello")
    assert not (settings.paths.workspaces_dir / "w1" / "outputs" / "x.txt").exists()  # not before approval
    state = approve_all(graph, "yes")
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.content == "exit status 0\ndone"
    assert (settings.paths.workspaces_dir / "w1" / "outputs" / "x.txt").read_text() == "hello\n"


def test_refusal_reaches_the_model_as_a_tool_message(settings: Settings) -> None:
    model = ScriptedChatModel(
        replies=[
            ai("", tool_call("run_bash_command", {"command": "rm -rf outputs"})),
            ai("OK, not running it."),
        ]
    )
    _, graph = build_test_agent(settings, model)
    graph.invoke(bash_turn(settings), thread())
    state = approve_all(graph, "no")
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.status == "error" and answer.content.startswith("Error: refused by the user")
    assert isinstance(model.requests[1].messages[-1], ToolMessage)


def test_keep_approves_the_rest_of_the_session_and_always_only_the_process(settings: Settings) -> None:
    model = ScriptedChatModel(
        replies=[
            ai("", tool_call("run_bash_command", {"command": "echo one"})),
            ai("first"),
            ai("", tool_call("run_bash_command", {"command": "echo two"})),
            ai("second"),
        ]
    )
    _, graph = build_test_agent(settings, model)
    graph.invoke(bash_turn(settings), thread())
    state = approve_all(graph, "always")
    assert not state.get("approved_tools")  # "always" is the process's memory, not the session's
    graph.invoke(user_turn("again", settings, session_id="w1"), thread())
    assert interrupts(graph, thread()), "a run without the process's approvals asks again"
    state = approve_all(graph, "keep")
    assert state["approved_tools"] == ["run_bash_command"]
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)][-1] == "exit status 0\ntwo"


def test_process_approvals_come_with_the_run_context(settings: Settings, tmp_path: Path) -> None:
    model = ScriptedChatModel(
        replies=[ai("", tool_call("run_bash_command", {"command": "echo ok"})), ai("done")]
    )
    _, graph = build_test_agent(settings, model)
    context = RunContext(scope=SessionScope("t1", tmp_path), approved=frozenset({"run_bash_command"}))
    state = graph.invoke(bash_turn(settings), thread(), context=context)
    assert interrupts(graph, thread()) == []
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == ["exit status 0\nok"]


def test_approvals_sent_as_plain_data_are_not_trusted(settings: Settings) -> None:
    """A LangGraph Server client may send any JSON as the run's context: approvals in it
    (or a made-up scope) count for nothing; the call is still asked about."""
    model = ScriptedChatModel(
        replies=[ai("", tool_call("run_bash_command", {"command": "echo ok"})), ai("done")]
    )
    _, graph = build_test_agent(settings, model)
    sent = {"approved": ["run_bash_command"], "scope": {"session_id": "t1"}, "only_tools": None}
    graph.invoke(bash_turn(settings), thread(), context=sent)
    asked = [request["tool"] for i in interrupts(graph, thread()) for request in i.value["requests"]]
    assert asked == ["run_bash_command"]


def test_without_a_mention_the_model_cannot_run_it(settings: Settings) -> None:
    model = ScriptedChatModel(
        replies=[ai("", tool_call("run_bash_command", {"command": "echo pwned"})), ai("hm")]
    )
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("do something", settings), thread())
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert "not a valid tool" in answer.content
    assert interrupts(graph, thread()) == []


def test_timeout_and_output_cap(settings: Settings) -> None:
    model = ScriptedChatModel(
        replies=[
            ai("", tool_call("run_bash_command", {"command": "sleep 5", "timeout": 1})),
            ai("slow"),
        ]
    )
    _, graph = build_test_agent(settings, model)
    graph.invoke(bash_turn(settings), thread())
    state = approve_all(graph, "yes")
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.content.startswith("Error: timed out after 1 s")


class DeletionRecordingSaver(InMemorySaver):
    """Keeps each deleted thread's last values, to show what the thread held."""

    def __init__(self) -> None:
        super().__init__()
        self.deleted: list[tuple[str, dict[str, Any]]] = []

    def delete_thread(self, thread_id: str) -> None:
        saved = self.get_tuple(thread(thread_id))
        self.deleted.append((thread_id, saved.checkpoint["channel_values"] if saved else {}))
        super().delete_thread(thread_id)


def test_delegation_is_isolated(settings: Settings) -> None:
    def respond(request):
        is_sub = request.messages[0].content.startswith("You are a sub-agent")
        last = request.messages[-1]
        if is_sub:
            if isinstance(last, HumanMessage) and last.content.startswith("Count the files"):
                return ai("", tool_call("list_workspace_files", {}))
            return ai("There are 0 uploaded files. SUB-ONLY-DETAIL")
        if isinstance(last, ToolMessage):
            return ai("The sub-agent says there are none.")
        return ai("", tool_call("delegate_task", {"task": "Count the files in uploads/ and report."}))

    model = ScriptedChatModel(responder=respond)
    saver = DeletionRecordingSaver()
    graphs = build_graphs(build_parts(settings, model=model), saver)
    graph = graphs.main
    turn = user_turn(
        "@agent how many uploads?",
        settings,
        mentions=["agent"],
        session_id="w1",
    )
    custom = [
        data
        for mode, data in graph.stream(turn, thread(), stream_mode=["custom", "updates"])
        if mode == "custom"
    ]
    parent = graph.get_state(thread()).values["messages"]
    result = json.loads(next(m for m in parent if isinstance(m, ToolMessage)).content)
    assert (
        result["ok"] is True
        and result["context_id"].startswith("subagent-")
        and len(result["context_id"]) == 17
    )
    assert result["loops"] == 2
    assert len(parent) == 4  # question, delegate call, its result, answer: nothing else of the sub-agent
    sub_requests = [r for r in model.requests if r.messages[0].content.startswith("You are a sub-agent")]
    parent_requests = [
        r for r in model.requests if not r.messages[0].content.startswith("You are a sub-agent")
    ]
    assert sub_requests and all("delegate_task" not in r.tools for r in sub_requests)
    assert [m.content for m in sub_requests[0].messages[1:]] == ["Count the files in uploads/ and report."]
    for request in parent_requests:
        sent = json.dumps([str(m.content) for m in request.messages], ensure_ascii=False)
        assert "list_workspace_files" not in sent  # the sub-agent's tool traffic never reaches the parent
    # The sub-agent's thread held its own state (keys only its graph has) while it worked,
    # and is gone once it answered; the parent's stays.
    ((deleted, values),) = saver.deleted
    assert deleted == result["context_id"] == values["context_id"]
    assert values["parent_context"] == "main" and values["workspace_id"] == "w1"
    assert saver.get_tuple(thread(deleted)) is None and saver.get_tuple(thread()) is not None
    assert any(e.get("text", "").startswith("⚙ list_workspace_files") for e in custom)
