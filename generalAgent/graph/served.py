"""What a served deployment (LangGraph Server) decides itself, whatever a client sends.

On a user's machine the person at the keyboard owns it, and their answers decide. On a
server the people sending runs are remote users and their commands run as the server, so
the server's configuration is the only authority (docs/security.md, "A served deployment"):

- **What a run may ask for.** A client's run input may carry the conversation (`messages`),
  its @mentions and a /compact request, nothing else: `approved_tools`, `approvals`,
  `workspace_id`, `named_hosts`, `mcp_servers`, `max_loops` ... are the graph's own
  bookkeeping, written by its nodes from the owner's answers, and a client that sends them
  is refused (`client_run_problem`, called by graph/server_auth.py before the run exists).
  A mention of a discovered tool the deployment does not offer (SERVER_TOOLS) is refused;
  so is any `configurable`/`context` key naming approvals, tools, paths or folders, a
  `Command` that updates state or jumps to a node (only `resume`, the owner's answer to an
  interrupt, is accepted), and a direct state write (threads.update_state).
- **Shell tools need the sandbox.** A deployment that offers a shell tool starts only
  with a working sandbox (`check_served_settings`, at start-up, one line naming SANDBOX).
- **Limits per run.** A user's run may make SERVER_MAX_TOOL_CALLS tool calls and receive
  SERVER_MAX_TOOL_BYTES of tool results; past that each call is refused with a note the
  model reads (`run_limit_refusal`, from the tools node). Counted from the run's own
  messages (the tool answers since the user's message), so nothing is kept beside the state.

A run is served when LangGraph Server stamped its config with the authenticated user
(`langgraph_auth_user_id`, a key clients cannot set: the server refuses it in requests).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from generalAgent.config.settings import ServerSettings, Settings
from generalAgent.process_secrets import withhold_secrets
from generalAgent.sandbox import SandboxUnavailable, find_sandbox
from generalAgent.search.viewer import served_identity
from generalAgent.tools.registry import parse_tools_yaml

SHELL_TOOLS = frozenset({"run_bash_command"})
# What a client's run input may carry; everything else in the state is the graph's own.
# `interrupted_answer`: what the user saw of an answer they stopped, which the repair step
# stores (graph/history.py) because a client may not write the thread's state itself.
CLIENT_INPUT_KEYS = frozenset(
    {"messages", "mentions", "new_mentions", "context_request", "interrupted_answer"}
)
# Parts of a `configurable`/`context` key that would widen a run's permissions or move it
# to other files; the server's own keys (langgraph_*, thread_id, checkpoint_*) name none.
WIDENING_WORDS = (
    "approv",
    "allow",
    "permission",
    "tool",
    "workspace",
    "path",
    "folder",
    "dir",
    "cwd",
    "trust",
    "sandbox",
    "network",
    "host",
    "mention",
    "subagent",
    "generalagent",
)
SERVER_KEYS = frozenset({"langgraph_auth_permissions"})  # the server's, though it names a word above
LIMIT_CALLS = (
    "Error: refused: this run has made its {limit} tool calls (the deployment's SERVER_MAX_TOOL_CALLS). "
    "Answer with what you have; the user can send another message to go on."
)
LIMIT_BYTES = (
    "Error: refused: this run has received {limit:,} bytes of tool results (the deployment's "
    "SERVER_MAX_TOOL_BYTES). Answer with what you have; the user can send another message to go on."
)


def served_user(config: RunnableConfig | Mapping[str, Any] | None) -> str | None:
    """The authenticated user of a served run (LangGraph Server or Aegra), or None outside a server."""
    identity = served_identity((config or {}).get("configurable") or {})
    return identity[0] if identity is not None else None


def check_served_settings(settings: Settings) -> None:
    """At a served deployment's start: keep the keys from every child, and refuse to serve
    a shell without a sandbox (`SandboxUnavailable`, one line naming the settings)."""
    withhold_secrets()
    shells = sorted(settings.server.offered_tools & SHELL_TOOLS)
    if not shells:
        return
    try:
        sandbox = find_sandbox(settings.tools.sandbox)
    except SandboxUnavailable as exc:
        raise SandboxUnavailable(f"SERVER_TOOLS offers {', '.join(shells)}: {exc}") from None
    if not sandbox.active:
        raise SandboxUnavailable(
            f"SERVER_TOOLS offers {', '.join(shells)}, which needs a sandbox on a server, and there is none "
            f"({sandbox.reason}): install bubblewrap and set SANDBOX=auto or required, or remove it from SERVER_TOOLS."
        )


@functools.cache
def discovered_tools(tools_config: Path) -> frozenset[str]:
    """The tools of tools.yaml that only a mention switches on (read once per file)."""
    return frozenset(spec.name for spec in parse_tools_yaml(tools_config) if spec.tier == "discovered")


def client_run_problem(kwargs: Mapping[str, Any], settings: Settings) -> str | None:
    """Why a client's run request must be refused, or None: it may carry a conversation,
    mentions of offered tools and the owner's answer to an interrupt, nothing that widens."""
    server = settings.server
    run_input = kwargs.get("input")
    if run_input is not None:
        problem = _state_problem(run_input, server, settings.paths.tools_config, "input")
        if problem:
            return problem
    command = kwargs.get("command")
    if isinstance(command, Mapping):
        extra = sorted(set(command) - {"resume"} - {k for k, v in command.items() if v in (None, [], {})})
        if extra:
            return f"a run may only resume an interrupt; command {extra[0]!r} is the server's"
    for where in ("config", "context"):
        section = kwargs.get(where) or {}
        values = (
            section.get("configurable") if where == "config" and isinstance(section, Mapping) else section
        )
        for key in values or {}:
            if _widens(str(key)):
                return f"{where} key {key!r} is decided by the server, not the client"
    return None


def _state_problem(run_input: Any, server: ServerSettings, tools_config: Path, where: str) -> str | None:
    if not isinstance(run_input, Mapping):
        return f"{where} must be an object with messages"
    extra = sorted(set(run_input) - CLIENT_INPUT_KEYS)
    if extra:
        return f"{where} key {extra[0]!r} is the server's, not the client's"
    seen = run_input.get("interrupted_answer")
    if seen is not None and not isinstance(seen, str):
        return f"{where} interrupted_answer must be the text the user saw"
    messages = run_input.get("messages")
    for message in messages if isinstance(messages, list) else [messages] if messages else []:
        if not _from_user(message):
            return f"{where} messages must be the user's own; the assistant's and the tools' are the server's"
    mentioned = [*_names(run_input.get("mentions")), *_names(run_input.get("new_mentions"))]
    refused = sorted((set(mentioned) & discovered_tools(tools_config)) - server.offered_tools)
    if refused:
        return f"this deployment does not offer {refused[0]} (SERVER_TOOLS)"
    return None


def _from_user(message: Any) -> bool:
    """A user's message as a client sends it: text, or a dict with role/type user/human."""
    if isinstance(message, str):
        return True
    if isinstance(message, Mapping):
        kind = message.get("role") or message.get("type")
        return kind in {"user", "human"}
    return False


def _names(value: Any) -> Iterable[str]:
    return [str(v) for v in value] if isinstance(value, list) else ([str(value)] if value else [])


def _widens(key: str) -> bool:
    lowered = key.lower()
    return lowered not in SERVER_KEYS and any(word in lowered for word in WIDENING_WORDS)


def run_limit_refusal(messages: Sequence[BaseMessage], pending: int, server: ServerSettings) -> str | None:
    """The answer to the `pending`-th call (0-based) of this step, or None when the run is
    within its limits: tool calls and bytes of tool results since the user's message."""
    calls = 0
    received = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, ToolMessage):
            calls += 1
            received += len(str(message.content).encode("utf-8", "replace"))
    if calls + pending >= server.server_max_tool_calls:
        return LIMIT_CALLS.format(limit=server.server_max_tool_calls)
    if received >= server.server_max_tool_bytes:
        return LIMIT_BYTES.format(limit=server.server_max_tool_bytes)
    return None
