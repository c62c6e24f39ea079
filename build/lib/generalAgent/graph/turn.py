"""The input of a turn: the one place a turn's state is built, for the main agent and a sub-agent.

The CLI, `-p`, tests and benchmarks all start a main turn with `main_turn_input`, and
`delegate_task` starts a sub-agent with `subagent_turn_input`, so every client drives the
graph the same way; `/compact` and `/clear` run `context_request_input`. This turn's mentions and uploads go both to the `new_*` fields (their
reminders fire once) and to the session's, whose reducers merge them (tools stay visible,
files stay listed). No loop counter is reset: the planner derives it from the history.

LangGraph Server clients send the same fields; docs/deployment.md lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from langchain_core.messages import BaseMessage, HumanMessage

from generalAgent.documents.images import IMAGES_KEY, ImageRef
from generalAgent.graph.state import ContextRequest, TodoItem, UploadedFile
from generalAgent.tools.named_hosts import NamedHost

MAIN_CONTEXT = "main"
# LangGraph stops a run after this many steps. Our own bound is MAX_LOOPS (at most 500 model
# calls, each followed by a tools step, then finalize), so LangGraph's default of 25 would
# cut long turns short; this only catches a graph that loops by mistake.
RECURSION_LIMIT = 1_002
SUBAGENT_PREFIX = "subagent-"


def thread_config(thread_id: str) -> dict[str, Any]:
    """The run config of a conversation thread (a session, or a sub-agent's own thread)."""
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}


class TurnInput(TypedDict):
    """The input of a user turn: its message, and what it adds to the session's fields."""

    messages: list[BaseMessage]
    max_loops: int
    mentions: list[str]
    new_mentions: list[str]
    uploaded_files: list[UploadedFile]
    new_uploaded_files: list[UploadedFile]
    named_hosts: list[NamedHost]
    workspace_id: str


class SubagentInput(TypedDict):
    """A sub-agent's whole starting state (the keys of graph/state.py's SubagentState)."""

    messages: list[BaseMessage]
    context_id: str
    parent_context: str
    workspace_id: str | None
    agent_profile: str
    allowed_tools: list[str] | None
    mentions: list[str]
    new_mentions: list[str]
    mcp_servers: list[str]
    approved_tools: list[str]
    named_hosts: list[NamedHost]
    uploaded_files: list[UploadedFile]
    new_uploaded_files: list[UploadedFile]
    todos: list[TodoItem]
    max_loops: int


class ContextRequestInput(TypedDict):
    """The input of `/compact [focus]` or `/clear`: no message, only the request."""

    context_request: ContextRequest


def main_turn_input(
    text: str | list[str | dict[str, Any]],
    *,
    session_id: str,
    max_loops: int,
    mentions: Sequence[str] = (),
    uploads: Sequence[UploadedFile] = (),
    images: Sequence[ImageRef] = (),
    named_hosts: Sequence[NamedHost] = (),
) -> TurnInput:
    """The state update that starts a user turn.

    `images` are the turn's prepared images (graph/images.py): kept beside the message's
    text, sent as image parts in this turn only.

    `named_hosts` are this turn's records of who named which host (tools/named_hosts.py):
    the CLI records the hosts of a line the user typed and of --allow-host, never those of
    piped text or of attached files; the reducer adds them to the session's.

    A thread an older release stored under renamed keys is carried over by the graph
    itself (graph/state.py's StoredState), so no client reads the checkpoint for it.
    """
    names = list(dict.fromkeys(mentions))
    return {
        "messages": [
            HumanMessage(content=text, additional_kwargs={IMAGES_KEY: list(images)} if images else {}),
        ],
        "max_loops": max_loops,
        "mentions": names,
        "new_mentions": names,
        "uploaded_files": list(uploads),
        "new_uploaded_files": list(uploads),
        "named_hosts": list(named_hosts),
        "workspace_id": session_id,
    }


def subagent_turn_input(
    task: str,
    parent: Mapping[str, Any],
    *,
    context_id: str,
    profile: str,
    allowed_tools: Sequence[str] | None,
    max_loops: int,
) -> SubagentInput:
    """A sub-agent's whole starting state: the task, the parent's workspace, tools and files.

    It inherits what the parent may use (mentions, kept approvals, uploads, who named
    which host) but none of its history, todos or pending reminders. Approvals for the
    running process come with its config (graph/subagents.py).
    """
    return {
        "messages": [HumanMessage(content=task)],
        "context_id": context_id,
        "parent_context": parent.get("context_id") or MAIN_CONTEXT,
        "workspace_id": parent.get("workspace_id"),
        "agent_profile": profile,
        "allowed_tools": list(allowed_tools) if allowed_tools is not None else None,
        "mentions": list(parent.get("mentions", [])),
        "new_mentions": [],
        "mcp_servers": list(parent.get("mcp_servers", [])),
        "approved_tools": list(parent.get("approved_tools", [])),
        "named_hosts": list(parent.get("named_hosts") or []),
        "uploaded_files": list(parent.get("uploaded_files", [])),
        "new_uploaded_files": [],
        "todos": [],
        "max_loops": max_loops,
    }


def context_request_input(action: str, *, focus: str = "") -> ContextRequestInput:
    """The input of a run that only changes the context: `/compact [focus]` or `/clear`.

    No message is added; the `compact` node does the work and the run ends without a model
    answer (graph/compaction.py).
    """
    if action not in {"compact", "clear"}:
        raise ValueError(f"unknown context request {action!r}")
    return {"context_request": {"action": action, "focus": focus.strip()}}
