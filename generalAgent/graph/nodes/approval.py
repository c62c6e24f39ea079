"""The approval step: every call of a model message that needs the user's approval, asked at once.

It runs between the planner and the tools node and executes nothing. It applies the
tools' approval policy (tools/approval.py) to each call of the last AI message, pauses
the graph with one `interrupt` that carries every call needing an answer, and records
each decision by call id (ids made unique first, graph/tool_arguments.py, so each call
of the message gets its own answer whatever ids the model sent). Only then does the tools node run, and it runs each approved
call exactly once and answers every refused one with an error status.

Why a step of its own: an interrupt inside a tool pauses a batch of parallel calls half
way, and resuming re-runs the whole batch (an approved command ran twice, and so did every
sibling tool). Here a resume re-runs only this step, which has no side effect.

Answers, per call id: "yes" (this call), "always" (this call, and the CLI stops asking for
the tool until the process ends: that memory is the run's context, not the state), "keep"
(also stored in `approved_tools`, so it holds when the session is resumed), "no". A
sub-agent cannot ask: its calls that need approval are refused unless the tool is approved
already. A run may name the only tools whose calls may run (`only_tools` of its context: an
editor session in read-only mode); a call of any other tool is refused without a question.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from generalAgent.graph.state import AgentState
from generalAgent.graph.tool_arguments import unique_call_ids
from generalAgent.hooks import HookResult
from generalAgent.tools.approval import (
    ALWAYS,
    COMMAND_ARGS,
    DECISIONS,
    FILES_RUN,
    KEEP,
    NEEDS_APPROVAL,
    NO,
    YES,
    ApprovalPolicy,
    CallContext,
)
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.named_hosts import NamedHosts
from generalAgent.tools.run_context import RunContext, SessionScope

# Recorded, never answered by a person: the call needed no approval, or a sub-agent met one.
NOT_NEEDED, CANNOT_ASK = "not needed", "cannot ask"
# Answered by a PreToolUse hook the user made an approver in the user-level settings.json
# (hooks.py); no other hook can answer for the user.
HOOK_APPROVED = "approved by the user's hook"
RUNS = frozenset({YES, ALWAYS, KEEP, NOT_NEEDED, HOOK_APPROVED})
INTERRUPT_KIND = "approval"


def approved_tools(state: Mapping[str, Any], context: RunContext) -> frozenset[str]:
    """Tools that run without asking: kept with the session, or approved by this process
    (the run's context)."""
    return frozenset([*(state.get("approved_tools") or []), *context.approved])


def only_tools(context: RunContext) -> frozenset[str] | None:
    """The only tools whose calls may run in this run (the run's context), or None: no limit."""
    return context.only_tools


def call_context(env: ToolEnvironment, state: Mapping[str, Any], context: RunContext) -> CallContext:
    """What the approval rules may consult: the session's workspace and who named which host."""
    assert context.scope is not None  # ToolEnvironment.node_context always gives one
    session = str(state.get("workspace_id") or context.scope.session_id)
    workspace = env.workspace_for(session, context.scope.editor)
    return CallContext(workspace=workspace, named_hosts=NamedHosts.from_state(state))


def decision_of(answer: Any, call_id: str) -> str:
    """A person's answer for one call; anything unexpected counts as no."""
    value = answer.get(call_id) if isinstance(answer, Mapping) else answer
    return value if value in DECISIONS else NO


def shown_with(tool: BaseTool | None, args: Any, context: CallContext) -> dict[str, Any]:
    """What the question shows besides the arguments: which are commands (shown whole),
    and the files the call would run (tools/approval.py)."""
    metadata = (tool.metadata if tool is not None else None) or {}
    shown: dict[str, Any] = {"command_args": list(metadata.get(COMMAND_ARGS) or ())}
    preview = metadata.get(FILES_RUN)
    if callable(preview):
        try:
            shown["files"] = [dataclasses.asdict(p) for p in preview(args, context)]
        except Exception:  # what is shown must never stop the question being asked
            shown["files"] = []
    return shown


def _approved_by_hook(scope: SessionScope, call: Any) -> bool:
    """Whether an approver hook answers this call's question with yes. Runs again when the
    step resumes after a question; the hook sees the same call."""
    if not scope.hooks.matching("PreToolUse", call["name"], approvers_only=True):
        return False
    outcome = run_pre_tool_use(scope, call, scope.session_id, approvers_only=True)
    return outcome.allowed and not outcome.blocked


def run_pre_tool_use(
    scope: SessionScope, call: Any, session: str, approvers_only: bool = False
) -> HookResult:
    """Run the PreToolUse hooks of the session's folder on one call (only the user's
    approvers, when asked), with what they said handed to the stream."""
    outcome = scope.hooks.run(
        "PreToolUse",
        {
            "session_id": session,
            "tool_name": call["name"],
            "tool_input": call["args"],
            "tool_use_id": call["id"],
        },
        tool_name=call["name"],
        tracker=scope,
        approvers_only=approvers_only,
    )
    report_hook_notices(outcome)
    return outcome


def report_hook_notices(outcome: HookResult) -> None:
    """Hand what hooks said to the user (a timeout, a failure) to the stream as
    `{"hook_notice": ...}` events; outside a graph run there is no stream and nothing to do."""
    if not outcome.notices:
        return
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    for notice in outcome.notices:
        writer({"hook_notice": {"template": notice.template, "fields": dict(notice.fields)}})


def build_approval_node(visible_tools: Any, env: ToolEnvironment, policy: ApprovalPolicy):
    """The node function; `visible_tools(state)` is what the planner offered the model."""

    def approval(state: AgentState, config: RunnableConfig, runtime: Runtime[RunContext]) -> dict[str, Any]:
        run = env.node_context(runtime, state, config)
        assert run.scope is not None
        stored = state["messages"][-1]
        # The planner already gave every call its own id; a message stored by another client
        # may not have: it is replaced (same message id) by its renumbered copy.
        last = unique_call_ids(stored)
        renumbered = {"messages": [last]} if last is not stored else {}
        calls = last.tool_calls if isinstance(last, AIMessage) else []
        if not calls:
            return {"approvals": {}, **renumbered}
        tools: dict[str, BaseTool] = {t.name: t for t in visible_tools(state)}
        approved = approved_tools(state, run)
        context = call_context(env, state, run)
        decisions: dict[str, str] = {}
        requests: list[dict[str, Any]] = []
        only = only_tools(run)
        for call in calls:
            call_id = str(call["id"])
            tool = tools.get(call["name"])
            if only is not None and call["name"] not in only:
                decisions[call_id] = NO  # the session's mode allows no such call: nothing to ask
                continue
            # A call to a tool the model was not offered is answered "not a valid tool".
            reason = policy.reason(tool, call["args"], context, approved) if tool else None
            if reason is None:
                decisions[call_id] = NOT_NEEDED
            elif _approved_by_hook(run.scope, call):
                decisions[call_id] = HOOK_APPROVED
            else:
                requests.append(
                    {
                        "call_id": call_id,
                        "tool": call["name"],
                        "args": call["args"],
                        "reason": reason.text,
                        # For the terminal, which words the reason in the UI language.
                        "reason_template": reason.template,
                        "reason_fields": dict(reason.fields),
                        **({"diff": reason.diff} if reason.diff else {}),
                        **shown_with(tool, call["args"], context),
                    }
                )
        if requests and state.get("parent_context"):
            decisions.update({r["call_id"]: CANNOT_ASK for r in requests})
        elif requests:
            # One pause for the whole message: a resume re-runs this step only, which
            # recomputes the same requests and receives the answers; nothing has run yet.
            answer = interrupt({"type": INTERRUPT_KIND, "requests": requests})
            decisions.update({r["call_id"]: decision_of(answer, r["call_id"]) for r in requests})
        update: dict[str, Any] = {"approvals": decisions, **renumbered}
        kept = [r["tool"] for r in requests if decisions[r["call_id"]] == KEEP]
        if kept:
            update["approved_tools"] = kept
        return update

    return approval


def needs_asking(
    state: Mapping[str, Any],
    config: RunnableConfig | None,
    runtime: Any,
    visible_tools: Any,
    env: ToolEnvironment,
    policy: ApprovalPolicy,
) -> bool:
    """Whether a call of the last AI message needs an approval (asked, or refused for a
    sub-agent). When none does, the graph goes straight to the tools node: the approval
    step would only record "not needed", at the cost of a checkpoint of the whole state,
    and the tools node judges every call without a recorded decision again anyway."""
    last = state["messages"][-1]
    if unique_call_ids(last) is not last:
        return True  # ids to renumber first (a state the planner did not write): the step does it
    calls = last.tool_calls if isinstance(last, AIMessage) else []
    if not calls:
        return False
    run = env.node_context(runtime, state, config)
    only = only_tools(run)
    if only is not None and any(call["name"] not in only for call in calls):
        return True  # refused by the session's mode: the step records the refusal
    tools: dict[str, BaseTool] = {t.name: t for t in visible_tools(state)}
    ruled = [call for call in calls if call["name"] in tools and has_approval_rule(tools[call["name"]])]
    if not ruled:  # the context (a scan of the history, the workspace) is not needed then
        return False
    approved = approved_tools(state, run)
    context = call_context(env, state, run)
    return any(
        policy.reason(tools[call["name"]], call["args"], context, approved) is not None for call in ruled
    )


def has_approval_rule(tool: BaseTool) -> bool:
    """Whether the tool declares an approval rule at all (tools/approval.py): a tool without
    one never needs approval, whatever its arguments."""
    rule = (tool.metadata or {}).get(NEEDS_APPROVAL)
    return rule is True or callable(rule)
