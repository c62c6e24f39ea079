"""Ollama's OpenAI compatibility (`/v1` on localhost:11434, or ollama.com).

From Ollama's "OpenAI compatibility" page: thinking models stream their thinking in a
`reasoning` field, the assistant message takes it back in `reasoning`, and thinking is
sized or switched off by `reasoning_effort` ("none" disables it). Ollama reports no
cached tokens. Its context window is the server's (OLLAMA_CONTEXT_LENGTH), not the
model's, so MODEL_CONTEXT_WINDOW should say it.
"""

from __future__ import annotations

from typing import Any

from generalAgent.providers.dialect import Dialect, Thinking


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    if thinking == "off":
        return {"reasoning_effort": "none"}
    if effort:
        return {"reasoning_effort": effort}
    if thinking == "on":
        return {"reasoning_effort": "medium"}
    return {}


DIALECT = Dialect(
    name="ollama",
    title="Ollama",
    reasoning_fields=("reasoning", "reasoning_content"),
    echo_field="reasoning",
    echo="tool_calls",
    request_params=request_params,
    cache_fields=(),
    default_context_window=8_192,
    hosts=("ollama.com",),
    ports=(11434,),
    limits="no cache figures (Ollama reports none); the window is OLLAMA_CONTEXT_LENGTH: "
    "set MODEL_CONTEXT_WINDOW to it.",
)
