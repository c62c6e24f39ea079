"""Any other OpenAI-compatible endpoint (llama.cpp, SGLang, LM Studio, gateways...).

Reads reasoning from either common field and shows it, but sends nothing back and
switches nothing: an unknown server may refuse fields it does not know. When it is one
of the known providers behind another address, MODEL_PROVIDER names it.
"""

from __future__ import annotations

from typing import Any

from generalAgent.providers.dialect import Dialect, Thinking


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    return {"reasoning_effort": effort} if effort and thinking != "off" else {}


DIALECT = Dialect(
    name="generic",
    title="OpenAI-compatible",
    reasoning_fields=("reasoning_content", "reasoning"),
    request_params=request_params,
    cache_fields=("prompt_tokens_details.cached_tokens", "prompt_cache_hit_tokens", "cached_tokens"),
    default_context_window=128_000,
    limits="MODEL_THINKING has no effect; reasoning is shown but never sent back.",
)
