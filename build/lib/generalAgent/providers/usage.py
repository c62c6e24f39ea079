"""A provider's usage object as LangChain usage metadata: input, cached, output, reasoning.

Providers report the same counts under different names: cache hits are
`prompt_tokens_details.cached_tokens` (OpenAI and most), `prompt_cache_hit_tokens`
(DeepSeek) or a top-level `cached_tokens` (Kimi's context caching); reasoning tokens are
`completion_tokens_details.reasoning_tokens`. Each dialect says where its cache hits are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages.ai import UsageMetadata


def usage_metadata(usage: Mapping[str, Any], cache_fields: tuple[str, ...]) -> UsageMetadata:
    input_tokens = _count(usage.get("prompt_tokens"))
    output_tokens = _count(usage.get("completion_tokens"))
    total = usage.get("total_tokens")
    metadata = UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=_count(total) if total is not None else input_tokens + output_tokens,
    )
    cached = next((value for value in (_field(usage, f) for f in cache_fields) if value is not None), None)
    if cached is not None:
        metadata["input_token_details"] = {"cache_read": _count(cached)}
    reasoning = _field(usage, "completion_tokens_details.reasoning_tokens")
    if reasoning is not None:
        metadata["output_token_details"] = {"reasoning": _count(reasoning)}
    return metadata


def _field(usage: Mapping[str, Any], dotted: str) -> Any:
    value: Any = usage
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):  # a provider's odd value must not fail the turn
        return 0
