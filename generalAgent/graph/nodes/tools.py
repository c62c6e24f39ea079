"""The tools node: runs the calls of the last assistant message with the tools visible now.

A LangGraph `ToolNode` is built per set of visible tools (and cached), so a call to a tool
the model was not offered (not mentioned, or a sub-agent asking for delegate_task) gets
an error answer instead of running. Calls that needed approval run only if the approval
step before this node recorded a yes for them (graph/nodes/approval.py); the others are
answered with a refusal, so every call is answered once and run at most once. A call of
a tool outside the run's `only_tools` (an editor's read-only mode) is answered that the
session is read-only, which the user can change, not that the user refused it. Calls
whose arguments were not valid JSON get an error answer the model can correct. Every
result is capped so that one huge tool output cannot flood the context.

The user's PreToolUse hooks (hooks.py) run here, for every client, after the approval
step and just before each call: a hook that blocks answers the call with its own words as
an error, and the call does not run. PostToolUse hooks run on each result. What a hook
says to the user (a timeout, a failure) is a custom stream event `{"hook_notice": ...}`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from generalAgent.graph.nodes.approval import (
    CANNOT_ASK,
    NO,
    RUNS,
    approved_tools,
    call_context,
    has_approval_rule,
    only_tools,
    report_hook_notices,
    run_pre_tool_use,
)
from generalAgent.graph.state import AgentState
from generalAgent.graph.tool_arguments import REFUSED
from generalAgent.tools.approval import OUTSIDE_ONLY_TOOLS, ApprovalPolicy
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.errors import ToolError
from generalAgent.tools.run_context import RunContext, SessionScope

REFUSED_BY_USER = (
    "Error: refused by the user: {tool} was not run. Do not retry it unchanged; ask the user or "
    "choose another way."
)
SUBAGENT_CANNOT_ASK = (
    "Error: refused: {tool} needs the user's approval ({reason}), and a sub-agent cannot ask. "
    "Report what you need in your final message instead."
)
NOT_APPROVED = "Error: not run: {tool} needs the user's approval ({reason}) and none was given."
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
        result = execute(request)
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
):
    """The tools node; `visible_tools` gives the tools a state may call (the ones the
    planner bound), so a call to any other is answered with an error, not run.
    `run_subagent` (graph/subagents.py) reaches delegate_task through the run's context;
    None in a sub-agent's graph, which never delegates."""
    tool_nodes: dict[tuple[str, ...], ToolNode] = {}
    max_result_chars = env.settings.tools.tool_result_max_chars

    def tools(state: AgentState, config: RunnableConfig, runtime: Runtime[RunContext]) -> Any:
        context = env.node_context(runtime, state, config)
        if run_subagent is not None and context.run_subagent is None:
            context = replace(context, run_subagent=run_subagent)
        scope = context.scope
        assert scope is not None  # ToolEnvironment.node_context always gives one
        visible = visible_tools(state)
        key = tuple(t.name for t in visible)
        if key not in tool_nodes:
            tool_nodes[key] = build_tool_node(visible, max_result_chars)
        last = state["messages"][-1]
        answers = [
            ToolMessage(
                content=_invalid_call_answer(call),
                tool_call_id=call["id"],
                name=call.get("name") or "unknown",
                status="error",
            )
            for call in (last.invalid_tool_calls if isinstance(last, AIMessage) else [])
            if call.get("id")
        ]
        calls = last.tool_calls if isinstance(last, AIMessage) else []
        runnable = []
        by_name = {t.name: t for t in visible}
        session = scope.session_id
        for call in calls:
            refusal = _refusal(call, by_name.get(call["name"]), state, context, env, policy)
            if refusal is None and call["name"] in by_name:
                refusal = _pre_tool_use(scope, call, session)
            if refusal is None:
                runnable.append(call)
            else:
                answers.append(
                    ToolMessage(content=refusal, tool_call_id=call["id"], name=call["name"], status="error")
                )
        if not runnable:
            return {"messages": answers}
        # The ToolNode runs the calls of the last message: give it only those that may run.
        approved_only = {
            **state,
            "messages": [*state["messages"][:-1], last.model_copy(update={"tool_calls": runnable})],
        }
        # The tools see this run's context (with the sub-agent runner) as `runtime.context`.
        result = tool_nodes[key].invoke(approved_only, config, runtime=runtime.override(context=context))
        result = _post_tool_use(scope, result, {str(c["id"]): c for c in runnable}, session)
        if not answers:
            return result
        if isinstance(result, dict):
            return {"messages": [*result.get("messages", []), *answers]}
        return [*result, Command(update={"messages": answers})]

    return tools


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


def _refusal(
    call: Any,
    tool: BaseTool | None,
    state: AgentState,
    context: RunContext,
    env: ToolEnvironment,
    policy: ApprovalPolicy,
) -> str | None:
    """The answer to a call that may not run, or None when it may (or is not a tool at all,
    which the ToolNode answers)."""
    if tool is None:
        return None
    only = only_tools(context)
    if only is not None and tool.name not in only:  # the session's mode, not the user's answer
        return OUTSIDE_ONLY_TOOLS.format(tool=tool.name)
    decision = (state.get("approvals") or {}).get(call["id"])
    if decision in RUNS:
        return None
    if decision == NO:
        return REFUSED_BY_USER.format(tool=tool.name)
    # No recorded yes: this call was refused for a sub-agent, went straight here because
    # no call of its message needed approval (graph/builder.py), or never went through the
    # approval step (a state written by hand). Judge it now and refuse what needs approval.
    if not has_approval_rule(tool):
        return None
    reason = policy.reason(
        tool, call["args"], call_context(env, state, context), approved_tools(state, context)
    )
    if reason is None:
        return None
    template = SUBAGENT_CANNOT_ASK if decision == CANNOT_ASK else NOT_APPROVED
    return template.format(tool=tool.name, reason=reason.text)


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
        return f"Error: {exc}"
    said = str(exc).strip().rstrip(".")
    if said.lower().endswith("try again"):  # LangChain's own message for arguments the schema rejects
        return f"Error: {type(exc).__name__}: {said}."
    return f"Error: {type(exc).__name__}: {said}. Fix the arguments and try again."
