"""Runs one tool the way the graph does (through a ToolNode, so runtime injection is real)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from generalAgent.config.settings import Settings
from generalAgent.graph.nodes.tools import build_tool_node
from generalAgent.graph.state import SubagentState
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.registry import ToolRegistry
from generalAgent.tools.run_context import RunContext


def run_tool(
    settings: Settings,
    name: str,
    args: dict[str, Any],
    state: dict[str, Any] | None = None,
    session: str = "s1",
    env: ToolEnvironment | None = None,
    context: RunContext | None = None,
) -> Any:
    """The tool's answer (the ToolMessage content) and the state after it, as a pair;
    `context`: the run's (a session's scope shared by several calls), else one per call."""
    env = env or ToolEnvironment(settings=settings)
    tool = ToolRegistry.from_yaml(env).load_on_demand(name)
    # The sub-agent's state holds the main agent's and its own keys: a test may run either.
    graph = StateGraph(SubagentState, context_schema=RunContext)
    graph.add_node("tools", build_tool_node([tool], settings.tools.tool_result_max_chars))
    graph.add_edge(START, "tools")
    compiled = graph.compile(checkpointer=InMemorySaver())
    call = {"id": "call_1", "name": name, "args": args, "type": "tool_call"}
    initial = {
        "messages": [HumanMessage(content="go"), AIMessage(content="", tool_calls=[call])],
        **(state or {}),
    }
    final = compiled.invoke(initial, {"configurable": {"thread_id": session}}, context=context)
    return final["messages"][-1].content, final


def workspace_root(settings: Settings, session: str = "s1"):
    return ToolEnvironment(settings=settings).workspace_for(session).root


@pytest.fixture
def root(settings: Settings) -> Path:
    """The session's workspace with a 50-line `uploads/notes.md`."""
    path = workspace_root(settings)
    (path / "uploads" / "notes.md").write_text("".join(f"line {i}\n" for i in range(1, 51)), encoding="utf-8")
    return path
