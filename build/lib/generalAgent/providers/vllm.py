"""vLLM's OpenAI-compatible server with a reasoning parser (`--reasoning-parser`).

From vLLM's "Reasoning Outputs" page: the parser puts the model's thinking in a
`reasoning` field (called `reasoning_content` before v0.11, still accepted), and from
v0.20 the chat template reads earlier thinking from the assistant message's `reasoning`.
Thinking is switched through the chat template (`chat_template_kwargs`: Qwen3 reads
`enable_thinking`, DeepSeek-V3.1 and Granite read `thinking`). The window is whatever
the server was started with (`--max-model-len`), so MODEL_CONTEXT_WINDOW should say it.
"""

from __future__ import annotations

from typing import Any

from generalAgent.providers.dialect import Dialect, Thinking


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if thinking != "default":
        enabled = thinking == "on"
        params["chat_template_kwargs"] = {"enable_thinking": enabled, "thinking": enabled}
    if effort and thinking != "off":
        params["reasoning_effort"] = effort  # gpt-oss models
    return params


DIALECT = Dialect(
    name="vllm",
    title="vLLM",
    reasoning_fields=("reasoning", "reasoning_content"),
    echo_field="reasoning",
    echo="tool_calls",
    request_params=request_params,
    default_context_window=32_768,
    limits="the window is the server's --max-model-len: set MODEL_CONTEXT_WINDOW to it; "
    "cached tokens appear only with --enable-prompt-tokens-details.",
)
