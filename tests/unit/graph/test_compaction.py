"""Compaction at the cut, /compact and /clear, through the real graph with a scripted model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from generalAgent.cli.render import compaction_text
from generalAgent.config.settings import Settings, load_settings
from generalAgent.graph.history import SUMMARY_TAG
from generalAgent.graph.turn import context_request_input
from generalAgent.tools.run_context import RunContext, SessionScope
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import Request, ScriptedChatModel, ai, tool_call


def short_history(settings: Settings, **governance: Any) -> Settings:
    return load_settings(
        env_file=None,
        paths={"data_dir": settings.paths.data_dir},
        governance={"max_message_history": 10, **governance},
    )


def is_summary_request(request: Request) -> bool:
    first = request.messages[0]
    return not request.tools and isinstance(first, SystemMessage) and "running summary" in first.text


class Session:
    """A scripted model that answers each question with a tool call and an answer, and
    summarises by keeping every line the user asked to remember (an extractive summariser)."""

    def __init__(self, fail_summaries: bool = False, on_summary: Any = None) -> None:
        self.fail_summaries = fail_summaries
        self.on_summary = on_summary
        self.model = ScriptedChatModel(responder=self.respond)

    def respond(self, request: Request) -> AIMessage:
        if is_summary_request(request):
            if self.on_summary is not None:
                self.on_summary()
            if self.fail_summaries:
                raise ConnectionError("endpoint down")
            text = request.messages[1].text
            kept = [line for line in text.splitlines() if "remember" in line.lower() or line.startswith("- ")]
            return ai("\n".join(f"- {line.removeprefix('- ')}" for line in kept) or "- nothing to keep")
        last = request.messages[-1]
        if isinstance(last, HumanMessage) and "Turn" in last.text.split("\n")[0]:
            return ai("", tool_call("now", {"timezone": "UTC"}))
        return ai("Noted.")

    @property
    def planner_requests(self) -> list[Request]:
        return [r for r in self.model.requests if not is_summary_request(r)]

    @property
    def summary_requests(self) -> list[Request]:
        return [r for r in self.model.requests if is_summary_request(r)]


def run_turns(
    graph: Any, settings: Settings, texts: list[str], scope: SessionScope | None = None
) -> list[dict]:
    """The turns, in one session's run context (`scope`: the test's, to cancel from)."""
    context = RunContext(scope=scope or SessionScope("s", Path.cwd()))
    events = []
    for text in texts:
        for mode, data in graph.stream(
            user_turn(text, settings), thread(), context=context, stream_mode=["custom", "updates"]
        ):
            if mode == "custom" and "compaction" in data:
                events.append(data["compaction"])
    return events


def test_a_cut_summarises_the_dropped_turns_and_the_summary_leads_every_later_request(
    settings: Settings,
) -> None:
    settings = short_history(settings)
    session = Session()
    _, graph = build_test_agent(settings, session.model)
    texts = ["Turn 1: remember the code word heron."] + [f"Turn {i}: go on." for i in range(2, 9)]
    events = run_turns(graph, settings, texts)

    done = [e for e in events if e["state"] == "done"]
    assert done and all(e["messages"] > 0 for e in done)
    assert compaction_text(done[0]).startswith(f"compacted {done[0]['messages']} messages into a ")
    summary_request = session.summary_requests[0]
    assert summary_request.tools == []  # sent without tools
    assert "heron" in summary_request.messages[1].text
    state = graph.get_state(thread()).values
    assert "heron" in state["summary"]["text"]
    last = session.planner_requests[-1].messages
    assert isinstance(last[0], SystemMessage)
    assert last[1].text.startswith(f"<{SUMMARY_TAG}>") and "heron" in last[1].text
    assert isinstance(last[1], AIMessage) and "nothing in them is a request" in last[1].text
    assert "Turn 1:" not in " ".join(m.text for m in last[2:])  # the turn itself left the context
    assert len(state["messages"]) == 8 * 4  # the stored conversation keeps everything


def test_the_previous_summary_is_folded_into_the_next(settings: Settings) -> None:
    settings = short_history(settings)
    session = Session()
    _, graph = build_test_agent(settings, session.model)
    texts = ["Turn 1: remember the code word heron."] + [f"Turn {i}: go on." for i in range(2, 14)]
    texts[6] = "Turn 7: remember the budget is 4,200 EUR."
    run_turns(graph, settings, texts)
    assert len(session.summary_requests) >= 2
    second = session.summary_requests[1].messages[1].text
    assert "heron" in second.split("</previous_summary>")[0]  # the first summary goes in again
    summary = graph.get_state(thread()).values["summary"]["text"]
    assert "heron" in summary and "4,200 EUR" in summary


def test_a_failed_summary_falls_back_to_the_plain_cut_and_says_so(settings: Settings) -> None:
    settings = short_history(settings)
    session = Session(fail_summaries=True)
    _, graph = build_test_agent(settings, session.model)
    events = run_turns(graph, settings, [f"Turn {i}: go on." for i in range(1, 7)])
    plain = [e for e in events if e["state"] == "plain"]
    assert plain and "failed" in plain[0]["reason"]
    assert "without a summary" in compaction_text(plain[0])
    state = graph.get_state(thread()).values
    assert state["messages"][-1].text == "Noted."  # the turn still got its answer
    assert state["summary"]["text"] == "" and state["summary"]["unsummarised"] > 0
    assert len(session.planner_requests[-1].messages) <= 11


def test_ctrl_c_while_summarising_skips_the_summary_and_the_turn_goes_on(settings: Settings) -> None:
    settings = short_history(settings)
    scope = SessionScope("s", Path.cwd())

    def press_ctrl_c() -> None:
        assert scope.cancel()  # what the chat's Ctrl-C handler does: True, the turn goes on
        time.sleep(0.5)  # the summary would come later; the node does not wait for it

    session = Session(on_summary=press_ctrl_c)
    _parts, graph = build_test_agent(settings, session.model)
    events = run_turns(graph, settings, [f"Turn {i}: go on." for i in range(1, 7)], scope)
    skipped = [e for e in events if e["state"] == "plain"]
    assert skipped and skipped[0]["reason"] == "skipped with Ctrl-C"
    assert graph.get_state(thread()).values["messages"][-1].text == "Noted."
    assert not scope.cancelled.is_set()  # the turn itself was never cancelled
    assert not scope.summarising.is_set()  # nothing is being summarised now


def test_compaction_off_cuts_plainly_without_a_model_call(settings: Settings) -> None:
    settings = short_history(settings, compact_history=False)
    session = Session()
    _, graph = build_test_agent(settings, session.model)
    events = run_turns(graph, settings, [f"Turn {i}: go on." for i in range(1, 7)])
    assert session.summary_requests == []
    assert events and all(e["state"] == "plain" for e in events)


def test_compact_command_summarises_everything_with_a_focus_and_answers_nothing(settings: Settings) -> None:
    session = Session()
    _, graph = build_test_agent(settings, session.model)
    run_turns(graph, settings, ["Turn 1: remember the code word heron.", "Turn 2: go on."])
    calls = len(session.model.requests)
    events = [
        data["compaction"]
        for mode, data in graph.stream(
            context_request_input("compact", focus="the code word"), thread(), stream_mode=["custom"]
        )
        if "compaction" in data
    ]
    assert [e["state"] for e in events] == ["started", "done"] and events[-1]["messages"] == 8
    assert len(session.model.requests) == calls + 1  # the summary call, no answer
    assert "Above all, keep what concerns: the code word" in session.summary_requests[-1].messages[0].text
    state = graph.get_state(thread()).values
    assert state["summary"]["through"] == state["messages"][-1].id and state["context_request"] is None
    run_turns(graph, settings, ["What was the code word?"])
    sent = session.planner_requests[-1].messages
    assert [type(m) for m in sent] == [
        SystemMessage,
        AIMessage,
        HumanMessage,
    ]  # the summary: not the user's voice
    assert "heron" in sent[1].text and sent[2].text.startswith("What was the code word?")


def test_clear_starts_a_fresh_context_and_keeps_uploads_and_todos(settings: Settings) -> None:
    session = Session()
    _, graph = build_test_agent(settings, session.model)
    upload = {"name": "a.pdf", "path": "uploads/a.pdf", "type": "pdf", "size": 10}
    graph.invoke(user_turn("Turn 1: read #a.pdf", settings, uploads=[upload]), thread())
    graph.update_state(thread(), {"todos": [{"content": "x", "status": "pending", "priority": "high"}]})
    events = [
        d["compaction"]
        for _, d in graph.stream(context_request_input("clear"), thread(), stream_mode=["custom"])
    ]
    assert events == [{"state": "cleared", "messages": 4}]
    assert session.summary_requests == []
    run_turns(graph, settings, ["hello again"])
    sent = session.planner_requests[-1].messages
    assert len(sent) == 2 and sent[1].text.startswith("hello again")
    assert "uploads/a.pdf" in sent[1].text and "Todo list" in sent[1].text  # reminders name them again


def test_a_sub_agent_compacts_the_same_way_and_the_parent_hears_of_it(settings: Settings) -> None:
    settings = short_history(settings)

    listings = {"n": 0}
    usage = {"input_tokens": 120, "output_tokens": 12, "total_tokens": 132}

    def respond(request: Request) -> AIMessage:
        if is_summary_request(request):
            return ai("- the sub-agent listed the workspace many times", usage=usage)
        is_sub = request.messages[0].text.startswith("You are a sub-agent")
        if is_sub:
            listings["n"] += 1
            depth = listings["n"]  # a new call every time (a repeated one would end the turn)
            return (
                ai("", tool_call("list_workspace_files", {"depth": depth}))
                if listings["n"] <= 8
                else ai("Done listing.")
            )
        if request.messages[-1].type == "tool":
            return ai("The sub-agent is done.")
        return ai(
            "", tool_call("delegate_task", {"task": "List the workspace eight times.", "agent": "agent"})
        )

    model = ScriptedChatModel(responder=respond)
    _, graph = build_test_agent(settings, model)
    turn = user_turn("@agent list it", settings, mentions=["agent"], session_id="w1")
    custom = [data for mode, data in graph.stream(turn, thread(), stream_mode=["custom"])]
    compactions = [e["compaction"] for e in custom if e.get("subagent") and "compaction" in e]
    assert any(compaction_text(c).startswith("compacted ") for c in compactions)
    assert any(e.get("usage") for e in custom if e.get("subagent"))
    assert graph.get_state(thread()).values["messages"][-1].text == "The sub-agent is done."
