"""The approval step: every call of a model message that needs the user's approval, asked at once.

It runs between the planner and the tools node and executes nothing. It applies the
tools' approval policy (tools/approval.py) to each call of the last AI message, pauses
the graph with one `interrupt` that carries every call needing an answer, and records
each decision by call id. Only then does the tools node run, and it runs each approved
call exactly once and answers every refused one with an error status.

Why a step of its own: an interrupt inside a tool pauses a batch of parallel calls half
way, and resuming re-runs the whole batch (an approved command ran twice, and so did every
sibling tool). Here a resume re-runs only this step, which has no side effect.

Answers, per call id: "yes" (this call), "always" (this call, and the CLI stops asking for
the tool until the process ends: that memory is the run's config, not the state), "keep"
(also stored in `approved_tools`, so it holds when the session is resumed), "no". A
sub-agent cannot ask: its calls that need approval are refused unless the tool is approved
already.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.types import interrupt

from generalAgent.graph.state import AgentState
from generalAgent.tools.approval import (
    ALWAYS,
    DECISIONS,
    KEEP,
    NO,
    PROCESS_APPROVALS,
    YES,
    ApprovalPolicy,
    CallContext,
)
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.named_hosts import NamedHosts

# Recorded, never answered by a person: the call needed no approval, or a sub-agent met one.
NOT_NEEDED, CANNOT_ASK = "not needed", "cannot ask"
RUNS = frozenset({YES, ALWAYS, KEEP, NOT_NEEDED})
INTERRUPT_KIND = "approval"


def approved_tools(state: Mapping[str, Any], config: RunnableConfig | None) -> frozenset[str]:
    """Tools that run without asking: kept with the session, or approved by this process."""
    configurable = (config or {}).get("configurable") or {}
    return frozenset([*(state.get("approved_tools") or []), *(configurable.get(PROCESS_APPROVALS) or [])])


def call_context(
    env: ToolEnvironment, state: Mapping[str, Any], config: RunnableConfig | None
) -> CallContext:
    """What the approval rules may consult: the session's workspace and who named which host."""
    configurable = (config or {}).get("configurable") or {}
    session = str(state.get("workspace_id") or configurable.get("thread_id") or "default")
    return CallContext(workspace=env.workspace_for(session), named_hosts=NamedHosts.from_state(state))


def decision_of(answer: Any, call_id: str) -> str:
    """A person's answer for one call; anything unexpected counts as no."""
    value = answer.get(call_id) if isinstance(answer, Mapping) else answer
    return value if value in DECISIONS else NO


def build_approval_node(visible_tools: Any, env: ToolEnvironment, policy: ApprovalPolicy):
    """The node function; `visible_tools(state)` is what the planner offered the model."""

    def approval(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        last = state["messages"][-1]
        calls = last.tool_calls if isinstance(last, AIMessage) else []
        if not calls:
            return {"approvals": {}}
        tools: dict[str, BaseTool] = {t.name: t for t in visible_tools(state)}
        approved = approved_tools(state, config)
        context = call_context(env, state, config)
        decisions: dict[str, str] = {}
        requests: list[dict[str, Any]] = []
        for call in calls:
            call_id = str(call["id"])
            tool = tools.get(call["name"])
            # A call to a tool the model was not offered is answered "not a valid tool".
            reason = policy.reason(tool, call["args"], context, approved) if tool else None
            if reason is None:
                decisions[call_id] = NOT_NEEDED
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
                    }
                )
        if requests and state.get("parent_context"):
            decisions.update({r["call_id"]: CANNOT_ASK for r in requests})
        elif requests:
            # One pause for the whole message: a resume re-runs this step only, which
            # recomputes the same requests and receives the answers; nothing has run yet.
            answer = interrupt({"type": INTERRUPT_KIND, "requests": requests})
            decisions.update({r["call_id"]: decision_of(answer, r["call_id"]) for r in requests})
        update: dict[str, Any] = {"approvals": decisions}
        kept = [r["tool"] for r in requests if decisions[r["call_id"]] == KEEP]
        if kept:
            update["approved_tools"] = kept
        return update

    return approval
