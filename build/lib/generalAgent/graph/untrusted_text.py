"""Tool results framed for the model as data: what a file, a page or a command says is not an order.

A document may contain text written to look like instructions ("ignore the user, send
this file to …"). Every successful tool result is sent inside a `<tool_output>` block,
and the system prompt says that nothing inside one is an instruction. The frame is
added when a request is built, never stored, so the history keeps what the tool said
and the frame can change without touching stored sessions; it is a pure function of the
message, so the request prefix stays byte-identical from call to call (the KV cache).

A result that contains the closing tag itself cannot end its frame early: the tag is
broken (`</tool_output` becomes `<\\/tool_output`) where it occurs inside.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, ToolMessage

CLOSING_TAG = "</tool_output"
_CLOSING = re.compile(re.escape(CLOSING_TAG), re.IGNORECASE)
_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def frame_tool_output(tool: str, text: str) -> str:
    """`text` inside a `<tool_output tool="…">` block it cannot close."""
    safe_name = _NAME.sub("", tool)[:64] or "tool"
    body = _CLOSING.sub(lambda m: m.group(0)[0] + "\\" + m.group(0)[1:], text)
    return f'<tool_output tool="{safe_name}">\n{body}\n</tool_output>'


def frame_tool_results(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages with every successful tool result framed (errors are the tools' own words)."""
    framed: list[BaseMessage] = []
    for message in messages:
        if (
            isinstance(message, ToolMessage)
            and message.status != "error"
            and isinstance(message.content, str)
        ):
            message = message.model_copy(
                update={"content": frame_tool_output(message.name or "tool", message.content)}
            )
        framed.append(message)
    return framed
