"""Which tools the model sees on a given call: assembled from the state, never stored.

persistent (core + enabled) + tools the user @mentioned this session (built on demand)
+ delegate_task once an agent was mentioned; de-duplicated, in that order, so the tool
list, which the provider caches with the system prompt, only grows when the user asks.
A sub-agent never sees delegate_task (no nesting), nor tools not meant for sub-agents,
and a profile's allow-list narrows its tools further.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from generalAgent.tools.mentions import classify_mentions
from generalAgent.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

DELEGATE_TOOL = "delegate_task"


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
    registry: ToolRegistry, skill_ids: Sequence[str], agent_names: Sequence[str], state: dict
) -> list[BaseTool]:
    """The tools a state's next model call is offered (what `/tools` shows as "now")."""
    mentions = classify_mentions(state.get("mentioned_agents", []), registry.names(), skill_ids, agent_names)
    return assemble_visible_tools(
        registry,
        mentions.tools,
        bool(mentions.agents),
        is_subagent=bool(state.get("parent_context")),
        allowed=state.get("allowed_tools"),
    )
