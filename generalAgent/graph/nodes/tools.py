"""The tools node: runs the calls of the last assistant message with the tools visible now.

A LangGraph `ToolNode` is built per set of visible tools (and cached), so a call to a tool
the model was not offered (not mentioned, or a sub-agent asking for delegate_task) gets
an error answer instead of running. Calls whose arguments were not valid JSON get an error
answer the model can correct. A served run's calls past its limits (graph/served.py) are
refused before anything else. Every result is capped so that one huge tool output cannot
flood the context.

Each call is judged by the one judge (tools/judge.py) right before it runs, in the order
the model sent them, against the files as the calls before it left them: a call that needs
approval runs only with the user's yes to what it does now; a no, a sub-agent's call that
cannot ask, and a call outside the run's `only_tools` (an editor's read-only mode, answered
that the session is read-only) are answered with an error. A call that needs a question
nobody asked yet (a sibling put the text it edits there, wrote the script it runs, or
changed the file since the question) ends the step: the calls before it are answered and
stored, and the graph goes back to the approval step to ask (graph/builder.py); the rest
run after the answer. Calls whose judgement no sibling can change (reads, searches, tools
approved by name) run side by side; the others one at a time.

The user's PreToolUse hooks (hooks.py) run here, for every client, just before each call:
a hook that blocks answers the call with its own words as an error, and the call does not
run. PostToolUse hooks run on each result. What a hook says to the user (a timeout, a
failure) is a custom stream event `{"hook_notice": ...}`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from generalAgent.display import Message
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
from generalAgent.tools.approval import ApprovalPolicy
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.errors import SHOWN_ERROR, ToolError
from generalAgent.tools.provenance import OWN_WORDS
from generalAgent.tools.run_context import RunContext, SessionScope

BLOCKED_BY_HOOK = "Error: {tool} was not run: a PreToolUse hook of the user blocked it."
POST_HOOK_SAYS = "\n\n[A PostToolUse hook of the user says: {reason}]"


def cap_tool_result(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return (
        f"{text[:limit]}\n\n[Output cut: {len(text):,} characters, the first {limit:,} shown. "
        "Ask for a smaller part (an offset/limit, a narrower query, or a file under outputs/).]"
    )


def build_tool_node(tools: Sequence[BaseTool], max_result_chars: int) -> ToolNode:
    """A ToolNode for these tools that answers failures with an error status and caps results
    (TOOL_RESULT_MAX_CHARS)."""

    def capped(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        try:
            result = execute(request)
        except ToolError as exc:  # _describe_tool_error leaves a tool's own error to this answer
            call = request.tool_call
            return ToolMessage(
                content=cap_tool_result(f"Error: {exc}", max_result_chars),
                name=call["name"],
                tool_call_id=call["id"],
                status="error",
                artifact={SHOWN_ERROR: exc.said.to_data()},  # for the person, never sent to the model
            )
        if isinstance(result, ToolMessage) and isinstance(result.content, str):
            text = cap_tool_result(result.content, max_result_chars)
            if text is not result.content:
                return result.model_copy(update={"content": text})
        return result

    return ToolNode(list(tools), handle_tool_errors=_describe_tool_error, wrap_tool_call=capped)


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
    tool_nodes: dict[tuple[str, ...], ToolNode] = {}
    max_result_chars = env.settings.tools.tool_result_max_chars

    def tools(state: AgentState, config: RunnableConfig, runtime: Runtime[RunContext]) -> Any:
        context = env.node_context(runtime, state, config)
        if run_subagent is not None and context.run_subagent is None:
            context = replace(context, run_subagent=run_subagent)
        scope = context.scope
        assert scope is not None  # ToolEnvironment.node_context always gives one
        if rendering is not None and context.render_query is None:
            context = replace(context, render_query=rendering.for_session(scope))
        visible = visible_tools(state)
        key = tuple(t.name for t in visible)
        if key not in tool_nodes:
            tool_nodes[key] = build_tool_node(visible, max_result_chars)
        index, last, calls = pending_calls(state["messages"])
        if last is None:
            return {"messages": []}
        answered = {m.tool_call_id for m in state["messages"][index + 1 :] if isinstance(m, ToolMessage)}
        run = _CallRunner(tool_nodes[key], scope, state, config, runtime.override(context=context), index)
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
        judge = judge_of(visible_tools, env, policy, state, context)
        recorded = recorded_decisions(state)
        together: list[Any] = []  # calls no sibling can change the judgement of, run side by side
        served = served_user(config) is not None
        for call in calls:
            # A served run's limits come first: past them nothing runs, approved or not.
            limit = (
                run_limit_refusal([*state["messages"], *run.messages], len(together), env.settings.server)
                if served
                else None
            )
            if limit is not None:
                run.refuse(call, limit)
                continue
            if judge.independent(call):
                verdict = judge.verdict(call, recorded.get(str(call["id"])))
                if verdict.kind == "run":
                    if run.cleared_by_hooks(call):
                        together.append(call)
                    continue
                if verdict.kind == "refuse":
                    run.refuse(call, verdict.refusal, verdict.said)
                    continue
            run.calls(together)
            together = []
            # Judged now, after the calls before it ran: the files as this call will find them.
            verdict = judge.verdict(call, recorded.get(str(call["id"])))
            if verdict.kind == "ask":
                break  # asked in the approval step; the calls after it wait for the answer
            if verdict.kind == "refuse":
                run.refuse(call, verdict.refusal, verdict.said)
            elif run.cleared_by_hooks(call):
                run.calls([call])
        run.calls(together)
        return run.result()

    return tools


class _CallRunner:
    """Runs the calls of one tools step through the ToolNode, in groups, and gathers the
    answers: each group sees the answers of the groups before it in its state (what a
    text-storing tool checks for untrusted content, tools/provenance.py)."""

    def __init__(
        self,
        node: ToolNode,
        scope: SessionScope,
        state: AgentState,
        config: RunnableConfig,
        runtime: Any,
        index: int,
    ) -> None:
        self.node, self.scope, self.state, self.config, self.index = node, scope, state, config, index
        # The tools see this run's context (with the sub-agent runner) as `runtime.context`.
        self.runtime = runtime
        self.session = scope.session_id
        self.messages: list[Any] = []
        self.commands: list[Command] = []
        self.read_untrusted = False

    def answer(self, messages: Any, *, ran: bool = False) -> None:
        """Keep answers; those of calls that `ran` may carry content from outside."""
        for message in messages:
            self.messages.append(message)
            if ran and isinstance(message, ToolMessage) and (message.name or "") not in OWN_WORDS:
                self.read_untrusted = True

    def refuse(self, call: Any, text: str, said: Message | None = None) -> None:
        artifact = {SHOWN_ERROR: said.to_data()} if said is not None else None
        self.answer(
            [
                ToolMessage(
                    content=text,
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                    artifact=artifact,
                )
            ]
        )

    def cleared_by_hooks(self, call: Any) -> bool:
        """Run the PreToolUse hooks on a call about to run; a block is its answer."""
        refusal = _pre_tool_use(self.scope, call, self.session)
        if refusal is not None:
            self.refuse(call, refusal)
        return refusal is None

    def calls(self, calls: list[Any]) -> None:
        """Run `calls` (the ToolNode runs them side by side) and keep their answers."""
        if not calls:
            return
        messages = self.state["messages"]
        last = messages[self.index]
        # The ToolNode runs the calls of the last AI message: give it only these, and the
        # answers so far (this step's too) after it, as the history will hold them.
        state = {
            **self.state,
            "messages": [
                *messages[: self.index],
                last.model_copy(update={"tool_calls": calls}),
                *messages[self.index + 1 :],
                *self.messages,
            ],
        }
        if self.read_untrusted:
            state["read_untrusted"] = True
        result = self.node.invoke(state, self.config, runtime=self.runtime)
        result = _post_tool_use(self.scope, result, {str(c["id"]): c for c in calls}, self.session)
        for item in result if isinstance(result, list) else [result]:
            if isinstance(item, Command):
                self.commands.append(item)
                update = item.update if isinstance(item.update, dict) else {}
                self.answer((m for m in update.get("messages", []) if isinstance(m, ToolMessage)), ran=True)
            elif isinstance(item, dict):
                self.answer(item.get("messages", []), ran=True)
            else:
                self.answer([item], ran=True)

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


def _pre_tool_use(scope: SessionScope, call: Any, session: str) -> str | None:
    """The answer of a PreToolUse hook that blocks this call, or None when it may run."""
    outcome = run_pre_tool_use(scope, call, session)
    if outcome.blocked:
        return outcome.reason or BLOCKED_BY_HOOK.format(tool=call["name"])
    return None


def _post_tool_use(scope: SessionScope, result: Any, calls: dict[str, Any], session: str) -> Any:
    """Run the PostToolUse hooks of the session's folder on each answer; a hook that exits 2
    adds its words to it."""
    hooks = scope.hooks
    if not any(hooks.matching("PostToolUse", call["name"]) for call in calls.values()):
        return result
    messages = result.get("messages", []) if isinstance(result, dict) else []
    answered = []
    for message in messages:
        call = calls.get(getattr(message, "tool_call_id", ""))
        if not isinstance(message, ToolMessage) or call is None:
            answered.append(message)
            continue
        outcome = hooks.run(
            "PostToolUse",
            {
                "session_id": session,
                "tool_name": call["name"],
                "tool_input": call["args"],
                "tool_use_id": call["id"],
                "tool_response": message.content,
                "is_error": message.status == "error",
            },
            tool_name=call["name"],
            tracker=scope,
        )
        report_hook_notices(outcome)
        if outcome.blocked and outcome.reason and isinstance(message.content, str):
            message = message.model_copy(
                update={"content": message.content + POST_HOOK_SAYS.format(reason=outcome.reason)}
            )
        answered.append(message)
    return {**result, "messages": answered} if isinstance(result, dict) else result


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
