"""Runs one user turn through the graph and reports it to a view, whatever happens.

Shared by the interactive chat and `-p`: streams tokens, tool calls and sub-agent
progress to the view, has it answer the graph's approval step (cli/approvals.py), sums the
usage the provider reported, and turns failures into one line. After Ctrl-C the stored
history is repaired so the next request is valid: calls that never finished get an
answer saying they were cancelled, and a partly streamed answer is kept as such (the
graph repairs any call still open itself, graph/history.py).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableSet
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langgraph.types import Command

from generalAgent.agent.events import (
    ApprovalRequest,
    MessageEnd,
    ReasoningChunk,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnEvent,
    UsageReport,
    event_from_custom,
)
from generalAgent.graph.cancellation import TurnCancelled
from generalAgent.graph.history import INTERRUPTED_NOTE, last_call_answers, settle_unfinished_step
from generalAgent.graph.model_retries import listening_for_retries
from generalAgent.i18n import _, ngettext
from generalAgent.providers.reasoning import REASONING_KEY
from generalAgent.sessions import Usage
from generalAgent.tools.approval import ALWAYS, KEEP, YES
from generalAgent.tools.errors import shown_error
from generalAgent.tools.run_context import RunContext, SessionScope

LOGGER = logging.getLogger(__name__)
ANSWER_NODES = frozenset({"planner", "finalize"})
CANCELLED_TOOL = "Cancelled: the user pressed Ctrl-C before this tool finished; it may not have run."


# Answers one call's approval question: "yes", "always", "keep" or "no" (tools/approval.py).
Approver = Callable[[ApprovalRequest], str]


def answer_approval(
    payload: Any, approve: Approver, remembered: MutableSet[str]
) -> dict[str, dict[str, str]]:
    """The answers to one approval pause, by call id (see the module docstring), each with
    the digest of the question it answers (`shown`): the graph runs the call only while it
    would still do what was shown. A write to the folder's configuration is asked every
    time and approved for that call only."""
    requests = payload.get("requests", []) if isinstance(payload, dict) else []
    answers: dict[str, dict[str, str]] = {}
    for number, request in enumerate(requests, start=1):
        tool = str(request.get("tool", ""))
        configuration = bool(request.get("configuration"))
        if tool in remembered and not configuration:
            answer = ALWAYS
        else:
            answer = approve(ApprovalRequest.from_question(request, number, len(requests)))
        if configuration and answer in (ALWAYS, KEEP):
            answer = YES
        elif answer in (ALWAYS, KEEP):
            remembered.add(tool)
        answers[request["call_id"]] = {"decision": answer, "shown": str(request.get("shown") or "")}
    return answers


class TurnView(Protocol):
    """What a front end gives a turn: it is handed every event (agent/events.py) in the
    order the turn made them, asked each approval question, and closed at the end."""

    def on_event(self, event: TurnEvent) -> None: ...
    def approve(self, request: ApprovalRequest) -> str: ...
    def close(self) -> None: ...


@dataclass
class TurnResult:
    answer: str = ""
    reasoning: list[str] = field(default_factory=list)  # what the model thought, per call
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    cancelled: bool = False
    # Tokens of the last request and its answer, as the provider reported them: how full the
    # context was (the gauge). Sub-agents' calls are not counted: their context is their own.
    context_tokens: int = 0

    _thinking: bool = field(default=False, repr=False)  # a model call's reasoning is streaming

    @property
    def ok(self) -> bool:
        return self.error is None and not self.cancelled

    def add_reasoning(self, piece: str) -> None:
        if not self._thinking:
            self.reasoning.append("")
            self._thinking = True
        self.reasoning[-1] += piece

    def end_model_call(self) -> None:
        self._thinking = False


class ErrorDescriber(Protocol):
    def __call__(self, exc: BaseException) -> str | None: ...


def run_turn(
    graph: Any,
    config: dict[str, Any],
    graph_input: Mapping[str, Any] | Command | None,
    view: TurnView,
    describe_error: ErrorDescriber,
    on_cancel: Callable[[], Any] | None = None,
    approved: MutableSet[str] | None = None,
    context: RunContext | None = None,
) -> TurnResult:
    """Run until the graph ends; `graph_input=None` resumes (e.g. /retry after an error).

    `on_cancel` runs the moment Ctrl-C is pressed (the chat stops commands tools started);
    when it returns True, Ctrl-C only stopped a part of the turn (a summary being written)
    and the turn goes on. `approved` holds the tools the user approved "always" in this
    process; their calls run without asking, and every new "always" is added to it.
    `context`: the session's run context (tools/run_context.py); without one, a session
    scope of its own for the thread, in the current folder, without hooks.
    """
    result = TurnResult()
    partial: list[str] = []
    pending: Any = graph_input
    remembered: MutableSet[str] = approved if approved is not None else set()
    # Fixed for the turn: a resumed approval step must see the approvals it saw when it
    # paused, or it would not ask for (and record) the answers. A tool approved "always"
    # during the turn is answered from `remembered` when the step asks again.
    if context is None:
        thread = str(config.get("configurable", {}).get("thread_id") or "default")
        context = RunContext(scope=SessionScope(thread, Path.cwd()))
    run_context = replace(context, approved=context.approved | frozenset(remembered))
    try:
        with _cancel_on_sigint(on_cancel), reporting_retries(view):
            while True:
                interrupts = yield_from_stream(graph, config, run_context, pending, view, result, partial)
                if not interrupts:
                    break
                answers = {
                    item.id: answer_approval(item.value, view.approve, remembered) for item in interrupts
                }
                pending = Command(resume=answers)
    except (KeyboardInterrupt, TurnCancelled):
        result.cancelled = True
        repair_after_cancel(graph, config, "".join(partial))
    except Exception as exc:  # the model, the network or a bug: never a traceback
        described = describe_error(exc)
        if described is None:
            LOGGER.exception("turn failed")
            described = f"Unexpected error: {type(exc).__name__}: {exc}"
        result.error = described
    view.close()
    return result


@contextmanager
def reporting_retries(view: TurnView) -> Iterator[None]:
    """While a turn runs, the client's retries of its own requests reach its view as
    `RetryNotice`s (graph/model_retries.py says how); another turn's, running at the same
    time, reach that one's. The same custom event a served run streams, read the same way."""

    def show(data: dict[str, Any]) -> None:
        notice = event_from_custom(data)
        if notice is not None:
            view.on_event(notice)

    with listening_for_retries(show):
        yield


@contextmanager
def _cancel_on_sigint(on_cancel: Callable[[], Any] | None) -> Iterator[None]:
    """Ctrl-C runs `on_cancel` at once, then interrupts as usual (unless it returned True).

    LangGraph lets running tool calls finish before the interrupt surfaces, so stopping
    their work (killing commands, flagging sub-agents) must happen in the handler itself.
    """
    if on_cancel is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if on_cancel() is True:
            return
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def yield_from_stream(
    graph: Any,
    config: dict[str, Any],
    context: RunContext,
    graph_input: Any,
    view: TurnView,
    result: TurnResult,
    partial: list[str],
) -> list[Any]:
    """Consume one `graph.stream` run; returns the interrupts it stopped at (if any)."""
    stream = graph.stream(graph_input, config, context=context, stream_mode=["messages", "updates", "custom"])
    return report_stream(stream, view, result, partial)


def report_stream(
    stream: Iterable[tuple[str, Any]], view: TurnView, result: TurnResult, partial: list[str]
) -> list[Any]:
    """Hand a view the events of one run's (mode, data) parts, as LangGraph streams them
    with the messages, updates and custom modes: here from the local graph, in
    agent/remote.py from a LangGraph Server's stream turned back into messages. Returns the
    interrupts the run stopped at (if any)."""
    interrupts: list[Any] = []
    for mode, data in stream:
        if mode == "messages":
            chunk, metadata = data
            if metadata.get("langgraph_node") in ANSWER_NODES and isinstance(chunk, AIMessageChunk):
                thought = chunk.additional_kwargs.get(REASONING_KEY)
                if isinstance(thought, str) and thought:
                    result.add_reasoning(thought)
                    view.on_event(ReasoningChunk(thought))
                text = chunk.text if isinstance(chunk.text, str) else ""
                if text:
                    partial.append(text)
                    view.on_event(TextChunk(text))
        elif mode == "custom":
            event = event_from_custom(data)  # typed once, here (agent/events.py)
            if isinstance(event, UsageReport):
                result.usage = result.usage + event.usage  # a sub-agent's calls, a summary's
            elif event is not None:
                view.on_event(event)
        elif mode == "updates":
            for node, update in data.items():
                if node == "__interrupt__":
                    interrupts.extend(update)
                    continue
                for message in _messages_of(update):
                    _report_message(node, message, view, result, partial)
    return interrupts


def _report_message(
    node: str, message: BaseMessage, view: TurnView, result: TurnResult, partial: list[str]
) -> None:
    if isinstance(message, AIMessage):
        result.usage = result.usage + Usage.from_metadata(message.usage_metadata)
        if message.usage_metadata:
            reported = message.usage_metadata
            result.context_tokens = int(reported.get("input_tokens") or 0) + int(
                reported.get("output_tokens") or 0
            )
        result.end_model_call()
        partial.clear()
        view.on_event(MessageEnd())
        for call in message.tool_calls:
            view.on_event(ToolStart(call.get("id") or "", call["name"], call.get("args") or {}))
        for invalid in message.invalid_tool_calls:
            view.on_event(
                ToolStart(
                    invalid.get("id") or "",
                    invalid.get("name") or "?",
                    {"<invalid JSON>": invalid.get("args") or ""},
                )
            )
        if not message.tool_calls and not message.invalid_tool_calls and node in ANSWER_NODES:
            result.answer = message.text if isinstance(message.text, str) else str(message.content)
    elif isinstance(message, ToolMessage):
        content = message.text if isinstance(message.text, str) else str(message.content)
        failed = message.status == "error"
        shown = shown_error(content, message.artifact, _, ngettext) if failed else None
        view.on_event(ToolEnd(message.tool_call_id, message.name or "tool", content, failed, shown))


def _messages_of(update: Any) -> Iterator[BaseMessage]:
    """Messages in a node's update, which is a dict or (with Commands) a list of them."""
    updates = update if isinstance(update, list) else [update]
    for item in updates:
        if isinstance(item, Command):
            item = item.update
        if isinstance(item, dict):
            yield from (m for m in item.get("messages", []) if isinstance(m, BaseMessage))


def discard_last_turn(graph: Any, config: dict[str, Any]) -> None:
    """Remove the last turn from the stored history: the user's message and all that followed
    (a cancelled partial answer, cancelled tool calls), so /retry can send the message again
    as if the cancelled attempt had never been made."""
    messages = list(graph.get_state(config).values.get("messages", []))
    last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=None)
    if last_human is None:
        return
    removed = [RemoveMessage(id=m.id) for m in messages[last_human:] if m.id]
    graph.update_state(config, {"messages": removed}, as_node="finalize")


def repair_after_cancel(graph: Any, config: dict[str, Any], partial_text: str) -> None:
    """Make the stored history valid again after Ctrl-C, keeping what the user saw.

    What the stopped step finished is stored (`settle_unfinished_step`); calls still open
    get a "cancelled" answer, so the model hears that the user stopped them (the graph's
    own repair, which would say "stopped", then has nothing left to do); a partly streamed
    answer is stored, marked as interrupted.
    """
    try:
        settle_unfinished_step(graph, config)
        messages = graph.get_state(config).values.get("messages", [])
        closing = last_call_answers(messages, CANCELLED_TOOL)
        if closing:
            graph.update_state(config, {"messages": closing}, as_node="tools")
        elif partial_text.strip():
            note = AIMessage(content=f"{partial_text}\n\n{INTERRUPTED_NOTE}")
            graph.update_state(config, {"messages": [note]}, as_node="finalize")
    except KeyboardInterrupt:
        # A second Ctrl-C while repairing: the graph's repair step answers what is left open.
        LOGGER.warning("second Ctrl-C while repairing the history after a cancel")
