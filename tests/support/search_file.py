"""search_file driven through LangGraph's ToolNode, so the runtime (workspace) is injected."""

from __future__ import annotations

import shutil
from pathlib import Path

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from generalAgent.config.settings import Settings
from generalAgent.graph.nodes.tools import build_tool_node
from generalAgent.tools.builtin.search_file import create_tool
from generalAgent.tools.environment import ToolEnvironment

THREAD = "session-1"


def run_search_file(settings: Settings, **args: object) -> str:
    graph = StateGraph(MessagesState)
    graph.add_node(
        "tools",
        build_tool_node(
            [create_tool(ToolEnvironment(settings=settings))], settings.tools.tool_result_max_chars
        ),
    )
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    call = AIMessage(content="", tool_calls=[{"name": "search_file", "args": args, "id": "c1"}])
    result = graph.compile().invoke({"messages": [call]}, config={"configurable": {"thread_id": THREAD}})
    return str(result["messages"][-1].content)


def upload(settings: Settings, source: Path) -> str:
    """Copy `source` into the session's uploads, as `#file` does; its workspace path."""
    uploads = settings.paths.workspaces_dir / THREAD / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, uploads / source.name)
    return f"uploads/{source.name}"
