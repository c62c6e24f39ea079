"""Keeps a tool call whose streamed arguments are not valid JSON from running.

When a model streams, the client rebuilds each call's arguments with a lenient parser
that closes what was left open, so arguments cut off mid-string (a dropped connection, a
model stopped by its token limit) come back as a valid-looking call with truncated
values: `write_file` would save half a file. The raw argument text is only seen chunk by
chunk, so `RawToolArguments` collects it during the call, and `reject_repaired_calls`
turns every call whose raw text does not parse strictly into an invalid call, which the
tools node answers with an error the model can correct.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk


class RawToolArguments(BaseCallbackHandler):
    """Collects the raw argument text of every streamed tool call, by call id."""

    def __init__(self) -> None:
        self._ids: dict[int, str] = {}
        self._text: dict[int, str] = {}

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        if not isinstance(message, AIMessageChunk):
            return
        for piece in message.tool_call_chunks:
            index = piece.get("index")
            index = index if isinstance(index, int) else len(self._ids)
            call_id = piece.get("id")
            if call_id:
                self._ids.setdefault(index, call_id)
            self._text[index] = self._text.get(index, "") + (piece.get("args") or "")

    def by_id(self) -> dict[str, str]:
        return {call_id: self._text.get(index, "") for index, call_id in self._ids.items()}


def reject_repaired_calls(message: Any, raw_arguments: dict[str, str]) -> Any:
    """`message` with calls whose raw arguments are not strict JSON moved to invalid_tool_calls."""
    if not isinstance(message, AIMessage) or not message.tool_calls or not raw_arguments:
        return message
    valid, invalid = [], list(message.invalid_tool_calls)
    for call in message.tool_calls:
        raw = raw_arguments.get(call.get("id") or "")
        error = _json_error(raw) if raw is not None else None
        if error is None:
            valid.append(call)
            continue
        invalid.append(
            {
                "type": "invalid_tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "args": raw,
                "error": f"{error} (the arguments were cut off or malformed)",
            }
        )
    if len(valid) == len(message.tool_calls):
        return message
    return message.model_copy(update={"tool_calls": valid, "invalid_tool_calls": invalid})


def _json_error(raw: str) -> str | None:
    if not raw.strip():
        return None  # no arguments at all: the tool's defaults apply
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at character {exc.pos}"
    return None if isinstance(value, dict) else "the arguments are not a JSON object"
