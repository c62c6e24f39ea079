"""Which tools the model sees on a given call: assembled from the state, never stored.

persistent (core + enabled) + the tools of the session's MCP servers + tools the user
@mentioned this session (built on demand; a mentioned skill stands for the tools its
`allowed-tools` names, at the place of its mention) + delegate_task once an agent was mentioned;
de-duplicated, in that order, so the tool list, which the provider caches with the
system prompt, only grows when the user asks or a server joins. A sub-agent never sees
delegate_task (no nesting), nor tools not meant for sub-agents, and a profile's
allow-list narrows its tools further.

MCP servers join a session (`mcp_servers` in the state) only at the first model call of
a turn (`servers_joining`): an enabled server once it is loaded, a disabled one once the
user @mentioned it and it is loaded. A server that finishes starting mid-turn therefore
joins at the next turn, and the tool list changes at most once per server and session,
never between the calls of one turn.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from generalAgent.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

DELEGATE_TOOL = "delegate_task"


@dataclass
class Mentions:
    tools: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)  # MCP servers
    unknown: dict[str, list[str]] = field(default_factory=dict)  # name -> closest known names


def classify_mentions(
    names: Iterable[str],
    tool_names: Iterable[str],
    skill_ids: Iterable[str],
    agent_names: Iterable[str],
    server_names: Iterable[str] = (),
) -> Mentions:
    """Tools first, then skills, agents and MCP servers: a name that is two resolves to the first."""
    tools, skills, agents, servers = set(tool_names), set(skill_ids), set(agent_names), set(server_names)
    known = sorted(tools | skills | agents | servers)
    result = Mentions()
    for name in names:
        if name in tools:
            result.tools.append(name)
        elif name in skills:
            result.skills.append(name)
        elif name in agents:
            result.agents.append(name)
        elif name in servers:
            result.servers.append(name)
        else:
            result.unknown[name] = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    return result


def assemble_visible_tools(
    registry: ToolRegistry,
    mentioned_tools: Sequence[str],
    agent_mentioned: bool,
    *,
    mcp_servers: Sequence[str] = (),
    is_subagent: bool = False,
    allowed: Sequence[str] | None = None,
) -> list[BaseTool]:
    candidates = list(registry.persistent_tools())
    candidates += registry.mcp_tools(mcp_servers)
    candidates += [registry.load_on_demand(name) for name in mentioned_tools if name in registry]
    if agent_mentioned and DELEGATE_TOOL in registry:
        candidates.append(registry.load_on_demand(DELEGATE_TOOL))

    visible: list[BaseTool] = []
    seen: set[str] = set()
    for tool in candidates:
        if tool.name in seen:
            continue
        seen.add(tool.name)
        if is_subagent and (
            tool.name == DELEGATE_TOOL
            or (tool.name in registry and not registry.spec(tool.name).available_to_subagent)
        ):
            continue
        if allowed is not None and tool.name not in allowed:
            continue
        visible.append(tool)
    return visible


def mentioned_tool_names(
    names: Sequence[str], tool_names: Iterable[str], skill_tools: Mapping[str, Sequence[str]]
) -> list[str]:
    """The tools the mentions `names` bring, in mention order: a tool itself, a skill the
    tools it lists. Mentions only ever append, so this list only grows (the cached prefix)."""
    tools = set(tool_names)
    brought: list[str] = []
    for name in names:
        if name in tools:
            brought.append(name)
        elif name in skill_tools:
            brought += [tool for tool in skill_tools[name] if tool in tools]
    return list(dict.fromkeys(brought))


def visible_tools_for_state(
    registry: ToolRegistry,
    skill_ids: Sequence[str],
    agent_names: Sequence[str],
    state: Mapping[str, Any],
    skill_tools: Mapping[str, Sequence[str]] | None = None,
) -> list[BaseTool]:
    """The tools a state's next model call is offered (what `/tools` shows as "now");
    `skill_tools` are the tools each skill brings when mentioned (SkillCatalog.tools_by_skill)."""
    mentions = classify_mentions(
        state.get("mentions", []), registry.names(), skill_ids, agent_names, registry.mcp_handles()
    )
    return assemble_visible_tools(
        registry,
        mentioned_tool_names(state.get("mentions", []), registry.names(), skill_tools or {}),
        bool(mentions.agents),
        mcp_servers=state.get("mcp_servers") or [],
        is_subagent=bool(state.get("parent_context")),
        allowed=state.get("allowed_tools"),
    )


def servers_joining(registry: ToolRegistry, state: dict) -> list[str]:
    """The MCP servers whose tools join the session now; call it at a turn's first model call.

    Servers the user @mentioned this turn are started first if they are not running (the
    chat has usually done so already, showing progress); every other server joins only if
    it is loaded by now, so this never waits for a server that is still starting.
    """
    manager = registry.mcp
    if manager is None:
        return []
    handles = set(manager.handles())
    for name in state.get("new_mentions") or []:
        if name in handles and name not in manager.loaded_handles():
            manager.load(name)
    joined = set(state.get("mcp_servers") or [])
    mentioned = set(state.get("mentions") or [])
    return [
        handle
        for handle in manager.loaded_handles()
        if handle not in joined and (manager.is_enabled(handle) or handle in mentioned)
    ]
