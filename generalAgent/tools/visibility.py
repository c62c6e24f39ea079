"""Which tools the model sees on a given call: assembled from the state, never stored.

persistent (core + enabled) + tools the user @mentioned this session (built on demand)
+ delegate_task once an agent was mentioned; de-duplicated, in that order, so the tool
list, which the provider caches with the system prompt, only grows when the user asks.
A sub-agent never sees delegate_task (no nesting), nor tools not meant for sub-agents,
and a profile's allow-list narrows its tools further.
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
    unknown: dict[str, list[str]] = field(default_factory=dict)  # name -> closest known names


def classify_mentions(
    names: Iterable[str],
    tool_names: Iterable[str],
    skill_ids: Iterable[str],
    agent_names: Iterable[str],
) -> Mentions:
    """Tools first, then skills, then agents: a name that is both resolves to the first."""
    tools, skills, agents = set(tool_names), set(skill_ids), set(agent_names)
    known = sorted(tools | skills | agents)
    result = Mentions()
    for name in names:
        if name in tools:
            result.tools.append(name)
        elif name in skills:
            result.skills.append(name)
        elif name in agents:
            result.agents.append(name)
        else:
            result.unknown[name] = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    return result


def assemble_visible_tools(
    registry: ToolRegistry,
    mentioned_tools: Sequence[str],
    agent_mentioned: bool,
    *,
    is_subagent: bool = False,
    allowed: Sequence[str] | None = None,
) -> list[BaseTool]:
    candidates = list(registry.persistent_tools())
    candidates += [registry.load_on_demand(name) for name in mentioned_tools if name in registry]
    if agent_mentioned and DELEGATE_TOOL in registry:
        candidates.append(registry.load_on_demand(DELEGATE_TOOL))

    visible: list[BaseTool] = []
    seen: set[str] = set()
    for tool in candidates:
        if tool.name in seen:
            continue
        seen.add(tool.name)
        if is_subagent and (tool.name == DELEGATE_TOOL or not registry.spec(tool.name).available_to_subagent):
            continue
        if allowed is not None and tool.name not in allowed:
            continue
        visible.append(tool)
    return visible


def visible_tools_for_state(
    registry: ToolRegistry, skill_ids: Sequence[str], agent_names: Sequence[str], state: Mapping[str, Any]
) -> list[BaseTool]:
    """The tools a state's next model call is offered (what `/tools` shows as "now")."""
    mentions = classify_mentions(state.get("mentions", []), registry.names(), skill_ids, agent_names)
    return assemble_visible_tools(
        registry,
        mentions.tools,
        bool(mentions.agents),
        is_subagent=bool(state.get("parent_context")),
        allowed=state.get("allowed_tools"),
    )
