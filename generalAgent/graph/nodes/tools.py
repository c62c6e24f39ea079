"""The tools node: runs the calls of the last assistant message with the tools visible now.

A LangGraph `ToolNode` is built per set of visible tools (and cached), so a call to a tool
the model was not offered (not mentioned, or a sub-agent asking for delegate_task) gets
an error answer instead of running. Calls whose arguments were not valid JSON get an
error answer the model can correct. Every result is capped so that one huge tool output
cannot flood the context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from generalAgent.graph.nodes.planner import PromptBuilder
from generalAgent.graph.state import AgentState
from generalAgent.tools.errors import ToolError


def cap_tool_result(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return (
        f"{text[:limit]}\n\n[Output cut: {len(text):,} characters, the first {limit:,} shown. "
        "Ask for a smaller part (an offset/limit, a narrower query, or a file under outputs/).]"
    )


def build_tool_node(tools: Sequence[BaseTool], max_result_chars: int) -> ToolNode:
    """A ToolNode for these tools that answers failures with an error status and caps results
    (TOOL_RESULT_MAX_CHARS)."""

    def capped(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        result = execute(request)
        if isinstance(result, ToolMessage) and isinstance(result.content, str):
            text = cap_tool_result(result.content, max_result_chars)
            if text is not result.content:
                return result.model_copy(update={"content": text})
        return result

    return ToolNode(list(tools), handle_tool_errors=_describe_tool_error, wrap_tool_call=capped)


def build_tools_node(prompts: PromptBuilder):
    tool_nodes: dict[tuple[str, ...], ToolNode] = {}

    def tools(state: AgentState, config: RunnableConfig) -> Any:
        visible = prompts.visible_tools(state)
        key = tuple(t.name for t in visible)
        if key not in tool_nodes:
            tool_nodes[key] = build_tool_node(visible, prompts.settings.tools.tool_result_max_chars)
        last = state["messages"][-1]
        invalid = [
            ToolMessage(
                content=f"Error: the arguments of this {call.get('name') or 'tool'} call are not valid "
                f"JSON ({call.get('error') or 'parse error'}). Call it again with valid JSON arguments.",
                tool_call_id=call["id"],
                name=call.get("name") or "unknown",
                status="error",
            )
            for call in (last.invalid_tool_calls if isinstance(last, AIMessage) else [])
            if call.get("id")
        ]
        if not (isinstance(last, AIMessage) and last.tool_calls):
            return {"messages": invalid}
        result = tool_nodes[key].invoke(state, config)
        if not invalid:
            return result
        if isinstance(result, dict):
            return {"messages": [*result.get("messages", []), *invalid]}
        return [*result, Command(update={"messages": invalid})]

    return tools


def _describe_tool_error(exc: Exception) -> str:
    """The answer to a call that failed: a tool's own ToolError says what to do; anything
    else (arguments the schema rejects, a bug) is named so the model can try differently."""
    if isinstance(exc, ToolError):
        return f"Error: {exc}"
    return f"Error: {type(exc).__name__}: {exc}. Fix the arguments and try again."
