"""OpenRouter (openrouter.ai): one `reasoning` object for every model behind it.

From OpenRouter's "Reasoning Tokens" page: the request's `reasoning` object takes
`enabled` and `effort`; the response carries the text in `reasoning` and structured
blocks in `reasoning_details`, which must go back unchanged with the assistant message
that made tool calls so the model can continue its reasoning. Cache hits are
`prompt_tokens_details.cached_tokens`.
"""

from __future__ import annotations

from typing import Any

from generalAgent.providers.dialect import Dialect, Thinking


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    reasoning: dict[str, Any] = {}
    if thinking != "default":
        reasoning["enabled"] = thinking == "on"
    if effort and thinking != "off":
        reasoning["effort"] = effort
    return {"reasoning": reasoning} if reasoning else {}


DIALECT = Dialect(
    name="openrouter",
    title="OpenRouter",
    reasoning_fields=("reasoning", "reasoning_content"),
    details_field="reasoning_details",
    echo="tool_calls",
    request_params=request_params,
    context_windows=(
        ("openai/gpt-4.1", 1_047_576),
        ("deepseek/", 131_072),
        ("moonshotai/kimi-k2", 262_144),
        ("qwen/qwen3", 131_072),
    ),
    default_context_window=128_000,
    hosts=("openrouter.ai",),
    limits="the window of a model not in the table is assumed to be 128,000: set MODEL_CONTEXT_WINDOW.",
)
