"""The tools node: runs the calls of the last assistant message with the tools visible now.

A LangGraph `ToolNode` is built per set of visible tools (kept for the sets used last,
graph/tool_set_cache.py), so a call to a tool the model was not offered (not mentioned, or
a sub-agent asking for delegate_task) gets an error answer instead of running. Calls whose arguments were not valid JSON get an error
answer the model can correct. A served run's calls past its limits (graph/served.py) are
refused before anything else. Every result is capped so that one huge tool output cannot
flood the context.

The calls of a step run in one ToolNode pass, and each is judged by the one judge
(tools/judge.py) inside the ToolNode's `wrap_tool_call`, right before it runs, against the
files as the calls before it left them: a call first waits for every earlier call whose
footprint meets its own (the same file, or a command, which can touch anything:
`waits_for`), then holds the lock of the files it changes while it is judged and runs, so
no sibling changes them between the question's diff and the write. Calls on different
files, and reads, run side by side. A call that needs approval runs only with the user's
yes to what it does now; a no, a sub-agent's call that cannot ask, and a call outside the
run's `only_tools` (an editor's read-only mode, answered that the session is read-only)
are answered with an error. A call that needs a question nobody asked yet (a sibling put
the text it edits there, wrote the script it runs, or changed the file since the
question) does not run, nor does any later call that waits for it: the step ends with the
answers of the calls that ran, and the graph goes back to the approval step to ask
(graph/builder.py); the rest run after the answer, judged again then.

The user's PreToolUse hooks (hooks.py) run here, for every client, just before each call:
a hook that blocks answers the call with its own words as an error, and the call does not
run. PostToolUse hooks run on each result. What a hook says to the user (a timeout, a
failure) is a custom stream event `{"hook_notice": ...}`. Hooks of calls that run side by
side may run at the same time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from generalAgent.display import N_, Message
from generalAgent.graph.nodes.approval import (
    judge_of,
    pending_calls,
    recorded_decisions,
    report_hook_notices,
    run_pre_tool_use,
)
from generalAgent.graph.query_rendering import QueryRendering
from generalAgent.graph.served import run_limit_refusal, served_user
from generalAgent.graph.state import AgentState
from generalAgent.graph.tool_arguments import REFUSED
from generalAgent.graph.tool_set_cache import ToolSetCache
from generalAgent.tools.approval import ApprovalPolicy
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.errors import SHOWN_ERROR, ToolError
from generalAgent.tools.judge import ANY, Footprint, Judge, Recorded, waits_for
from generalAgent.tools.provenance import OWN_WORDS, read_untrusted_in
from generalAgent.tools.run_context import RunContext, SessionScope

BLOCKED_BY_HOOK = N_("{tool} was not run: a PreToolUse hook of the user blocked it.")
POST_HOOK_SAYS = "\n\n[A PostToolUse hook of the user says: {reason}]"
# A call that reached the judged ToolNode outside a step's batch: never run unjudged.
NOT_JUDGED = "this call was not judged (it reached the tools outside a tools step), so it was not run"


def cap_tool_result(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return (
        f"{text[:limit]}\n\n[Output cut: {len(text):,} characters, the first {limit:,} shown. "
        "Ask for a smaller part (an offset/limit, a narrower query, or a file under outputs/).]"
    )


def capped_result(result: Any, limit: int) -> Any:
    """A tool's answer with its text capped at `limit` characters (TOOL_RESULT_MAX_CHARS)."""
    if isinstance(result, ToolMessage) and isinstance(result.content, str):
        text = cap_tool_result(result.content, limit)
        if text is not result.content:
            return result.model_copy(update={"content": text})
    return result


def build_tool_node(tools: Sequence[BaseTool], max_result_chars: int) -> ToolNode:
    """A ToolNode for these tools that answers failures with an error status and caps results
    (TOOL_RESULT_MAX_CHARS); it judges nothing (a graph of tools without approvals)."""

    def capped(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        try:
            result = execute(request)
        except ToolError as exc:  # _describe_tool_error leaves a tool's own error to this answer
            return tool_error_answer(request.tool_call, exc, max_result_chars)
        return capped_result(result, max_result_chars)

    return ToolNode(list(tools), handle_tool_errors=_describe_tool_error, wrap_tool_call=capped)


def build_judged_tool_node(tools: Sequence[BaseTool]) -> ToolNode:
    """The ToolNode of the tools node: each call goes through its step's `CallBatch`
    (judged, ordered, hooks, capped) inside `wrap_tool_call`; without a batch it does not run."""

    def judged(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        batch = getattr(request.state, "batch", None)
        if not isinstance(batch, CallBatch):
            raise ToolError(NOT_JUDGED)
        return batch.run(request, execute)

    async def not_on_a_loop(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        # A call waits for the ones before it on a threading.Event: on one event loop the
        # first wait would stop every call. The tools node runs the ToolNode with `invoke`.
        raise ToolError(NOT_JUDGED)

    return ToolNode(
        list(tools),
        handle_tool_errors=_describe_tool_error,
        wrap_tool_call=judged,
        awrap_tool_call=not_on_a_loop,
    )


def build_tools_node(
    visible_tools: Callable[[AgentState], list[BaseTool]],
    env: ToolEnvironment,
    policy: ApprovalPolicy,
    run_subagent: Callable[..., dict[str, Any]] | None = None,
    rendering: QueryRendering | None = None,
):
    """The tools node; `visible_tools` gives the tools a state may call (the ones the
    planner bound), so a call to any other is answered with an error, not run.
    `run_subagent` (graph/subagents.py) reaches delegate_task through the run's context;
    None in a sub-agent's graph, which never delegates. `rendering` (graph/query_rendering.py)
    reaches the search tools likewise, bound to the run's session."""
    tool_nodes = ToolSetCache(build_judged_tool_node)
    max_result_chars = env.settings.tools.tool_result_max_chars

    def tools(state: AgentState, config: RunnableConfig, runtime: Runtime[RunContext]) -> Any:
        context = env.node_context(runtime, state, config)
        if run_subagent is not None and context.run_subagent is None:
            context = replace(context, run_subagent=run_subagent)
        scope = context.scope
        assert scope is not None  # ToolEnvironment.node_context always gives one
        if rendering is not None and context.render_query is None:
            context = replace(context, render_query=rendering.for_session(scope))
        tool_node = tool_nodes.get(visible_tools(state))
        index, last, calls = pending_calls(state["messages"])
        if last is None:
            return {"messages": []}
        answered = {m.tool_call_id for m in state["messages"][index + 1 :] if isinstance(m, ToolMessage)}
        run = _CallRunner(tool_node, state, config, runtime.override(context=context), index)
        run.answer(
            ToolMessage(
                content=_invalid_call_answer(call),
                tool_call_id=call["id"],
                name=call.get("name") or "unknown",
                status="error",
            )
            for call in last.invalid_tool_calls
            if call.get("id") and call["id"] not in answered
        )
        limits = None
        if served_user(config) is not None:
            server = env.settings.server

            def limits(messages: Sequence[Any], running: int) -> str | None:
                return run_limit_refusal(messages, running, server)

        judge = judge_of(visible_tools, env, policy, state, context)
        run.calls(CallBatch(judge, calls, recorded_decisions(state), scope, limits, max_result_chars))
        return run.result()

    return tools


# How a call of a step ended: it ran, it was answered without running (refused, blocked
# by a hook, past a served limit), or it waits for a question (its own or an earlier
# call's); FAILED: it raised out of the ToolNode (the whole step fails).
RAN, ANSWERED, DEFERRED, FAILED = "ran", "answered", "deferred", "failed"


@dataclass(eq=False)
class _Slot:
    """One call of a step: the earlier calls it waits for, and how it ended."""

    call: Any
    footprint: Footprint  # as the files were when the step began
    waits: tuple[int, ...]
    done: threading.Event = field(default_factory=threading.Event)
    outcome: str = ""
    answers: list[ToolMessage] = field(default_factory=list)
    running: bool = False  # let through a served run's limits, not answered yet


class CallBatch:
    """The calls of one tools step as the ToolNode runs them side by side (module docstring).

    `run` is the ToolNode's `wrap_tool_call` for one call: it waits for the earlier calls
    its footprint meets (the ToolNode's pool takes calls in order and a call only waits for
    earlier ones, so the earliest unfinished call always has a worker), takes the locks of
    the files it changes as they resolve now (a name that a sibling's write turned into the
    same file as another's still meets it there), and under them applies the served limits,
    the judge, the PreToolUse hooks and the call. A call whose earlier call did not run
    waits too: it is left unanswered for the next step."""

    def __init__(
        self,
        judge: Judge,
        calls: Sequence[Any],
        recorded: Mapping[str, Recorded],
        scope: SessionScope,
        limits: Callable[[Sequence[Any], int], str | None] | None,
        max_result_chars: int,
    ) -> None:
        self.judge, self.recorded, self.scope, self.limits = judge, recorded, scope, limits
        self.max_result_chars = max_result_chars
        footprints = [judge.footprint(call) for call in calls]
        self.slots = [
            _Slot(call, footprint, waits)
            for call, footprint, waits in zip(calls, footprints, waits_for(footprints), strict=True)
        ]
        self._by_id = {str(slot.call["id"]): slot for slot in self.slots}
        self._mutex = threading.Lock()
        self._file_locks: dict[str, threading.Lock] = {}
        self._running = 0  # calls past the served limits not answered yet
        # What the step's calls see as their state: set by the runner before the pass.
        self.state: dict[str, Any] = {}

    def ended(self, outcome: str) -> set[str]:
        """The ids of the calls that ended so."""
        return {str(slot.call["id"]) for slot in self.slots if slot.outcome == outcome}

    def run(self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        slot = self._by_id.get(str(request.tool_call.get("id")))
        if slot is None:
            raise ToolError(NOT_JUDGED)
        outcome, answer = FAILED, None
        try:
            outcome, answer = self._run(slot, request, execute)
            return answer
        finally:
            with self._mutex:
                slot.outcome = outcome
                slot.answers = _tool_messages(answer) if outcome in (RAN, ANSWERED) else []
                if slot.running:
                    self._running -= 1
            slot.done.set()

    def _run(
        self, slot: _Slot, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]
    ) -> tuple[str, Any]:
        call = slot.call
        for earlier in slot.waits:
            before = self.slots[earlier]
            before.done.wait()
            if before.outcome not in (RAN, ANSWERED):
                return DEFERRED, _answer(call, "")  # left for the next step: never stored
        # The files it changes as they resolve now (a call that changes none takes no lock).
        changes = self.judge.footprint(call) if slot.footprint.changes - {ANY} else slot.footprint
        with self._files_locked(changes):
            refusal = self._past_limits(slot)
            if refusal is not None:
                return ANSWERED, _answer(call, refusal)
            # Judged now, after the calls before it ran: the files as this call finds them.
            verdict = self.judge.verdict(call, self.recorded.get(str(call["id"])))
            if verdict.kind == "ask":
                return DEFERRED, _answer(call, "")  # asked in the approval step, then run
            if verdict.kind == "refuse":
                return ANSWERED, _answer(call, verdict.refusal, verdict.said)
            blocked = _pre_tool_use(self.scope, call, self.scope.session_id)
            if blocked is not None:
                return ANSWERED, _answer(call, *blocked)
            try:
                result = execute(request.override(state=self._state_now()))
            except ToolError as exc:  # _describe_tool_error leaves a tool's own error to this answer
                result = tool_error_answer(call, exc, self.max_result_chars)
        result = capped_result(result, self.max_result_chars)
        return RAN, _post_tool_use(self.scope, result, call, self.scope.session_id)

    def _past_limits(self, slot: _Slot) -> str | None:
        """A served run's refusal for a call about to run (counting the calls running
        now), or None; a call let through counts as running until it is answered."""
        if self.limits is None:
            return None
        with self._mutex:
            refusal = self.limits([*self.state.get("messages", []), *self._answers()], self._running)
            if refusal is None:
                slot.running = True
                self._running += 1
        return refusal

    def _answers(self) -> list[ToolMessage]:
        return [message for slot in self.slots for message in slot.answers]

    def _state_now(self) -> dict[str, Any]:
        """The state a call runs with: the step's, with the answers of this step so far
        after it (what a text-storing tool checks for untrusted content, tools/provenance.py)."""
        with self._mutex:
            answers = self._answers()
            ran = [message for slot in self.slots if slot.outcome == RAN for message in slot.answers]
        state = {**self.state, "messages": [*self.state.get("messages", []), *answers]}
        if read_untrusted_in(ran):
            state["read_untrusted"] = True
        return state

    @contextmanager
    def _files_locked(self, footprint: Footprint) -> Iterator[None]:
        """Hold the locks of the files `footprint` changes (in one order: no two calls wait
        for each other's)."""
        with self._mutex:
            locks = [
                self._file_locks.setdefault(key, threading.Lock())
                for key in sorted(footprint.changes - {ANY})
            ]
        with ExitStack() as stack:
            for lock in locks:
                stack.enter_context(lock)
            yield


class _StepInput(dict[str, Any]):
    """The ToolNode's input for one step: the state its calls are parsed from, and the
    step's batch as an attribute (not a key a tool could read). ToolNode hands a dict
    input on unchanged as each request's `state`; the batch gives each call its own state."""

    batch: CallBatch


class _CallRunner:
    """Runs the calls of one tools step through the ToolNode in one pass and gathers the
    answers, each once; the calls left for a question stay unanswered."""

    def __init__(
        self, node: ToolNode, state: AgentState, config: RunnableConfig, runtime: Any, index: int
    ) -> None:
        self.node, self.state, self.config, self.index = node, state, config, index
        # The tools see this run's context (with the sub-agent runner) as `runtime.context`.
        self.runtime = runtime
        self.messages: list[Any] = []
        self.commands: list[Command] = []
        self.read_untrusted = False

    def answer(self, messages: Any, *, ran: bool = False) -> None:
        """Keep answers; those of calls that `ran` may carry content from outside."""
        for message in messages:
            self.messages.append(message)
            if ran and isinstance(message, ToolMessage) and (message.name or "") not in OWN_WORDS:
                self.read_untrusted = True

    def calls(self, batch: CallBatch) -> None:
        """Run the batch's calls (the ToolNode runs them side by side, the batch orders
        and judges them) and keep the answers of those that ended."""
        if not batch.slots:
            return
        messages = self.state["messages"]
        last = messages[self.index]
        # The ToolNode runs the calls of the last AI message: give it only these, and the
        # answers so far after it, as the history will hold them.
        state: dict[str, Any] = {
            **self.state,
            "messages": [
                *messages[: self.index],
                last.model_copy(update={"tool_calls": [slot.call for slot in batch.slots]}),
                *messages[self.index + 1 :],
                *self.messages,
            ],
        }
        batch.state = state
        step = _StepInput(state)
        step.batch = batch
        result = self.node.invoke(step, self.config, runtime=self.runtime)
        ran, deferred = batch.ended(RAN), batch.ended(DEFERRED)
        for item in result if isinstance(result, list) else [result]:
            if isinstance(item, Command):
                self.commands.append(item)
                update = item.update if isinstance(item.update, dict) else {}
                self.answer((m for m in update.get("messages", []) if isinstance(m, ToolMessage)), ran=True)
                continue
            answers = item.get("messages", []) if isinstance(item, dict) else [item]
            for message in answers:
                if getattr(message, "tool_call_id", None) not in deferred:
                    self.answer([message], ran=getattr(message, "tool_call_id", None) in ran)

    def result(self) -> Any:
        """The step's update: every answer once (answers a tool's Command carries stay in
        it), and the session's lasting mark when a call read content from outside."""
        carried = {
            id(m) for c in self.commands if isinstance(c.update, dict) for m in c.update.get("messages", [])
        }
        update: dict[str, Any] = {"messages": [m for m in self.messages if id(m) not in carried]}
        if self.read_untrusted and not self.state.get("read_untrusted"):
            update["read_untrusted"] = True
        if not self.commands:
            return update
        return [*self.commands, Command(update=update)]


def _answer(call: Any, text: str, said: Message | None = None) -> ToolMessage:
    """An error answer; `said`, the same sentence as data for the person (the UI language),
    kept in the artifact, which is never sent to the model."""
    artifact = {SHOWN_ERROR: said.to_data()} if said is not None else None
    return ToolMessage(
        content=text, tool_call_id=call["id"], name=call["name"], status="error", artifact=artifact
    )


def tool_error_answer(call: Any, exc: ToolError, limit: int) -> ToolMessage:
    """A tool's own error as its answer: the English for the model, its Message beside it."""
    return _answer(call, cap_tool_result(f"Error: {exc}", limit), exc.said)


def _tool_messages(answer: Any) -> list[ToolMessage]:
    """The ToolMessages in a call's answer (a message, a Command carrying them, or a list)."""
    if isinstance(answer, ToolMessage):
        return [answer]
    if isinstance(answer, Command):
        update = answer.update if isinstance(answer.update, dict) else {}
        return [m for m in update.get("messages", []) if isinstance(m, ToolMessage)]
    if isinstance(answer, list):
        return [m for item in answer for m in _tool_messages(item)]
    return []


def _pre_tool_use(scope: SessionScope, call: Any, session: str) -> tuple[str, Message | None] | None:
    """The answer of a PreToolUse hook that blocks this call (with our sentence as data for
    the person when the hook gave no reason of its own), or None when it may run."""
    outcome = run_pre_tool_use(scope, call, session)
    if not outcome.blocked:
        return None
    if outcome.reason:
        return outcome.reason, None
    said = Message(BLOCKED_BY_HOOK, {"tool": str(call["name"])})
    return f"Error: {said.english()}", said


def _post_tool_use(scope: SessionScope, result: Any, call: Any, session: str) -> Any:
    """Run the PostToolUse hooks of the session's folder on a call's answer; a hook that
    exits 2 adds its words to it (also to the answer a tool's Command carries)."""
    hooks = scope.hooks
    if not hooks.matching("PostToolUse", call["name"]):
        return result
    if isinstance(result, Command) and isinstance(result.update, dict):
        messages = [_post_tool_use(scope, m, call, session) for m in result.update.get("messages", [])]
        return replace(result, update={**result.update, "messages": messages})
    if not isinstance(result, ToolMessage) or result.tool_call_id != call["id"]:
        return result
    outcome = hooks.run(
        "PostToolUse",
        {
            "session_id": session,
            "tool_name": call["name"],
            "tool_input": call["args"],
            "tool_use_id": call["id"],
            "tool_response": result.content,
            "is_error": result.status == "error",
        },
        tool_name=call["name"],
        tracker=scope,
    )
    report_hook_notices(outcome)
    if outcome.blocked and outcome.reason and isinstance(result.content, str):
        result = result.model_copy(
            update={"content": result.content + POST_HOOK_SAYS.format(reason=outcome.reason)}
        )
    return result


def _invalid_call_answer(call: Any) -> str:
    error = str(call.get("error") or "parse error")
    if error.startswith(REFUSED):  # too large or too deep: the error names the setting
        return f"Error: {call.get('name') or 'tool'} {error}"
    return (
        f"Error: the arguments of this {call.get('name') or 'tool'} call are not valid "
        f"JSON ({error}). Call it again with valid JSON arguments."
    )


def _describe_tool_error(exc: Exception) -> str:
    """The answer to a call that failed: a tool's own ToolError says what to do; anything
    else (arguments the schema rejects, a bug) is named so the model can try differently."""
    if isinstance(exc, ToolError):
        # Raised on to `capped`, which answers with the error's Message kept beside the
        # English, so the terminal can show it in the UI language (tools/errors.py).
        raise exc
    if isinstance(exc, OSError) and exc.errno:  # a file that vanished or may not be read: in words
        raise ToolError.of(exc) from exc
    said = str(exc).strip().rstrip(".")
    if said.lower().endswith("try again"):  # LangChain's own message for arguments the schema rejects
        return f"Error: {type(exc).__name__}: {said}."
    return f"Error: {type(exc).__name__}: {said}. Fix the arguments and try again."
