"""An MCP server's tool as the model sees it: `<server>__<tool>`, run like any built-in tool.

The graph calls tools synchronously; the call itself runs on the MCP manager's event
loop (`call_remote`), so this class only shapes what goes in and out: the arguments are
passed through whole (a server's parameter may be called `config` or `callbacks`), the
answer becomes text that the tools node can cap like any other, and every failure is a
`ToolError` the model can act on. Tools of a server that is not trusted carry
`metadata["needs_approval"] = True`, which the graph's approval step honours.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.tools import BaseTool

from generalAgent.display import human_size

# MCP descriptions are written by the server's author and sent with every request.
MAX_DESCRIPTION = 2_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class MCPTool(BaseTool):
    """One tool of one MCP server."""

    server: str
    remote_name: str  # the tool's name on the server
    call_remote: Callable[[dict[str, Any]], str]

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        parsed = self._parse_input(tool_input, tool_call_id)
        return (dict(parsed) if isinstance(parsed, dict) else {},), {}

    def _run(self, arguments: dict[str, Any]) -> str:
        return self.call_remote(arguments)


def build_mcp_tool(
    name: str,
    server: str,
    listed: BaseTool,
    trusted: bool,
    call_remote: Callable[[dict[str, Any]], str],
) -> MCPTool:
    """The public tool for `listed` (the adapter's conversion of the server's tool)."""
    schema = listed.args_schema if isinstance(listed.args_schema, dict) else {}
    metadata: dict[str, Any] = {"mcp_server": server, "mcp_tool": listed.name}
    if not trusted:
        metadata["needs_approval"] = True
    return MCPTool(
        name=name,
        description=clean_description(listed.description, server),
        args_schema=_object_schema(schema),
        server=server,
        remote_name=listed.name,
        call_remote=call_remote,
        metadata=metadata,
    )


def clean_description(text: str, server: str) -> str:
    """The server's description without control characters, within a bounded length."""
    cleaned = _CONTROL.sub("", text or "").strip() or f"A tool of the MCP server {server}."
    if len(cleaned) > MAX_DESCRIPTION:
        cleaned = cleaned[: MAX_DESCRIPTION - 1].rstrip() + "…"
    return cleaned


def result_text(content: Any, artifact: Mapping[str, Any] | None) -> str:
    """A call's answer as text: its text blocks, a note for each image or file, else its
    structured content as JSON. Binary payloads never reach the context."""
    blocks = content if isinstance(content, list) else [content]
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict):
            parts.append(_describe_binary(block))
    text = "\n".join(part for part in parts if part)
    if not text.strip() and artifact and artifact.get("structured_content") is not None:
        text = json.dumps(artifact["structured_content"], ensure_ascii=False)
    return text if text.strip() else "(the tool returned no output)"


def _describe_binary(block: Mapping[str, Any]) -> str:
    kind = str(block.get("type", "content"))
    mime = block.get("mime_type") or "unknown type"
    if block.get("url"):
        return f"[{kind} {mime} at {block['url']}]"
    data = block.get("base64") or ""
    return f"[{kind} {mime}, {human_size(len(data) * 3 // 4)}: not shown]"


def _object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The input schema as providers accept it: an object, with `properties` even when empty."""
    fixed = dict(schema)
    fixed["type"] = "object"
    fixed.setdefault("properties", {})
    return fixed
