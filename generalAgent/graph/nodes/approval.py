"""The approval step: the calls of a model message that need the user's answer, asked at once.

It runs before the tools node and executes nothing. It takes the calls of the last AI
message that have no answer yet, judges each with the one judge (tools/judge.py) against
the files as they are now, pauses the graph with one `interrupt` carrying every question
due (up to the first call that runs without a question and may change what the calls
after it do: those are asked when they are about to run, not twice), and records each
answer by call id (ids made unique first, graph/tool_arguments.py, so each call of the
message gets its own answer whatever ids the model sent), bound to the digest of the
question it answered.

The tools node judges every call again right before it runs, after the siblings before it
that touch what it touches ran (graph/nodes/tools.py). A call whose judgement changed since it was asked (a sibling
edited the file it edits, or wrote the script it runs), or that needed no question here
but needs one now, does not run: the tools node ends its step with the answers of the
calls that ran, and the graph comes back here to ask about it, as it is now. So what the
user approved is exactly what runs, and each approved call runs once.

Why a step of its own: an interrupt inside a tool (or inside the tools node) pauses a
batch half way, and resuming re-runs the node from its start: an approved command ran
twice, and so did every sibling tool. Here a resume re-runs only this step, which has no
side effect; the calls that ran before a later question are stored with the tools node's
step, which ended before this one began.

Answers, per call id: "yes" (this call), "always" (this call, and the CLI stops asking for
the tool until the process ends: that memory is the run's context, not the state), "keep"
(also stored in `approved_tools`, so it holds when the session is resumed), "no". A write
to the folder's configuration takes "yes" or "no" only. A sub-agent cannot ask: its calls
that need approval are refused unless the tool is approved already. A run may name the only
tools whose calls may run (`only_tools` of its context: an editor session in read-only
mode); a call of any other tool is refused without a question.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from generalAgent.graph.state import AgentState
from generalAgent.graph.tool_arguments import unique_call_ids
from generalAgent.hooks import HookResult
from generalAgent.tools.approval import ApprovalPolicy, CallContext
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.judge import (
    CANNOT_ASK,
    HOOK_APPROVED,
    Judge,
    Recorded,
    decision_of,
    has_approval_rule,
    tools_kept,
)
from generalAgent.tools.named_hosts import NamedHosts
from generalAgent.tools.run_context import RunContext, SessionScope

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
    workspace = env.workspace_for(session, context.scope.editor, context.scope.folders)
    return CallContext(workspace=workspace, named_hosts=NamedHosts.from_state(state))


def judge_of(
    visible_tools: Callable[[AgentState], list[BaseTool]],
    env: ToolEnvironment,
    policy: ApprovalPolicy,
    state: AgentState,
    run: RunContext,
) -> Judge:
    """The judge of one step, its inputs read from the step's state and the run's context."""
    return Judge(
        tools={t.name: t for t in visible_tools(state)},
        policy=policy,
        context=call_context(env, state, run),
        approved=approved_tools(state, run),
        only=only_tools(run),
    )


def pending_calls(messages: Sequence[BaseMessage]) -> tuple[int, AIMessage | None, list[Any]]:
    """The last AI message (its index and itself) and those of its calls that have no
    answer yet: the tools node answers them in order and may stop before a question."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
            return index, message, [c for c in message.tool_calls if c["id"] not in answered]
        if not isinstance(message, ToolMessage):
            break
    return -1, None, []


def recorded_decisions(state: Mapping[str, Any]) -> dict[str, Recorded]:
    """The decisions recorded for the calls of the last model message, by call id."""
    stored = state.get("approvals") or {}
    decisions = {str(k): Recorded.of(v) for k, v in stored.items()} if isinstance(stored, Mapping) else {}
    return {k: v for k, v in decisions.items() if v is not None}


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


def build_approval_node(
    visible_tools: Callable[[AgentState], list[BaseTool]], env: ToolEnvironment, policy: ApprovalPolicy
):
    """The node function; `visible_tools(state)` is what the planner offered the model."""

    def approval(state: AgentState, config: RunnableConfig, runtime: Runtime[RunContext]) -> dict[str, Any]:
        run = env.node_context(runtime, state, config)
        assert run.scope is not None
        renumbered: dict[str, Any] = {}
        stored = state["messages"][-1]
        if isinstance(stored, AIMessage):
            # The planner already gave every call its own id; a message stored by another
            # client may not have: it is replaced (same message id) by its renumbered copy.
            last = unique_call_ids(stored)
            if last is not stored:
                renumbered = {"messages": [last]}
                state = {**state, "messages": [*state["messages"][:-1], last]}
        _index, _message, calls = pending_calls(state["messages"])
        if not calls:
            return {"approvals": {}, **renumbered} if renumbered else {}
        judge = judge_of(visible_tools, env, policy, state, run)
        recorded = recorded_decisions(state)
        decisions: dict[str, Recorded] = {}
        questions: list[dict[str, Any]] = []
        by_id = {str(call["id"]): call for call in calls}
        for question in judge.questions_due(calls, recorded):
            if _approved_by_hook(run.scope, by_id[question["call_id"]]):
                decisions[question["call_id"]] = Recorded(HOOK_APPROVED, question["shown"])
            else:
                questions.append(question)
        if questions and state.get("parent_context"):
            decisions.update({q["call_id"]: Recorded(CANNOT_ASK, q["shown"]) for q in questions})
        elif questions:
            # One pause for every question due now: a resume re-runs this step only, which
            # judges the same calls again and receives the answers; nothing runs here.
            answer = interrupt({"type": INTERRUPT_KIND, "requests": questions})
            decisions.update({q["call_id"]: decision_of(answer, q) for q in questions})
        stored_decisions = {k: v.stored() for k, v in {**recorded, **decisions}.items()}
        update: dict[str, Any] = {"approvals": stored_decisions, **renumbered}
        kept = tools_kept(questions, decisions)
        if kept:
            update["approved_tools"] = kept
        return update

    return approval


def needs_asking(
    state: AgentState,
    config: RunnableConfig | None,
    runtime: Any,
    visible_tools: Callable[[AgentState], list[BaseTool]],
    env: ToolEnvironment,
    policy: ApprovalPolicy,
) -> bool:
    """Whether a call of the last AI message not answered yet needs a question now (asked,
    or refused for a sub-agent). When none does, the graph goes straight to the tools node,
    which judges each call again before it runs and comes back to the approval step for a
    call that needs a question by then."""
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and unique_call_ids(last) is not last:
        return True  # ids to renumber first (a state the planner did not write): the step does it
    _index, _message, calls = pending_calls(state["messages"])
    tools = {t.name: t for t in visible_tools(state)} if calls else {}
    if not any(c["name"] in tools and has_approval_rule(tools[c["name"]]) for c in calls):
        return False  # the context (a scan of the history, the workspace) is not needed then
    run = env.node_context(runtime, state, config)
    judge = Judge(
        tools=tools,
        policy=policy,
        context=call_context(env, state, run),
        approved=approved_tools(state, run),
        only=only_tools(run),
    )
    return bool(judge.questions_due(calls, recorded_decisions(state)))
