"""Kimi (Moonshot: api.moonshot.cn, api.moonshot.ai).

From Kimi's "Use thinking models" guide: reasoning arrives in `reasoning_content`; with
thinking on, an assistant message that made tool calls without its `reasoning_content`
is refused ("thinking is enabled but reasoning_content is missing in assistant tool call
message at index N"), and the coding and K3 models want the reasoning of all earlier
assistant messages kept as it was. Thinking is `thinking: {"type": ...}`; K3's effort is
`reasoning_effort`, and the two may not be sent together. Cache hits are
`prompt_tokens_details.cached_tokens` on K2 models and a top-level `usage.cached_tokens`
with context caching.
"""

from __future__ import annotations

from typing import Any

from generalAgent.documents.images import ImageLimits
from generalAgent.providers.dialect import Dialect, Thinking
from generalAgent.providers.native_search import NativeSearch

# "Use the Web Search Tool": the builtin function, and thinking off (required with it).
WEB_SEARCH = NativeSearch(
    body={"thinking": {"type": "disabled"}},
    tools=({"type": "builtin_function", "function": {"name": "$web_search"}},),
    echoed_function="$web_search",
    drops=("reasoning_effort",),
)


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    if thinking == "off":
        return {"thinking": {"type": "disabled"}}
    if effort:  # Moonshot refuses `thinking` and `reasoning_effort` in one request
        return {"reasoning_effort": effort}
    if thinking == "on":
        return {"thinking": {"type": "enabled"}}
    return {}


DIALECT = Dialect(
    name="kimi",
    title="Kimi (Moonshot)",
    reasoning_fields=("reasoning_content",),
    echo_field="reasoning_content",
    echo="always",
    request_params=request_params,
    cache_fields=("prompt_tokens_details.cached_tokens", "cached_tokens"),
    context_windows=(
        ("kimi-k3", 1_048_576),
        ("kimi-k2", 262_144),
        ("moonshot-v1-8k", 8_192),
        ("moonshot-v1-32k", 32_768),
        ("moonshot-v1-128k", 131_072),
        ("moonshot-v1-auto", 131_072),
    ),
    default_context_window=262_144,
    hosts=("api.moonshot.cn", "api.moonshot.ai", "api.kimi.com"),
    limits="Kimi fixes temperature for its K2/K3 models: leave MODEL_TEMPERATURE unset.",
    web_search=WEB_SEARCH,
    # "Use the Kimi Vision Model" (https://platform.moonshot.ai/docs/guide/use-kimi-vision-model):
    # base64 data URLs in image_url parts (or ms://<file-id> of an upload), PNG, JPEG, WEBP
    # and GIF; tokens grow with resolution. The page states no size or count limit, so
    # images stay held to about 1 MP and 10 MiB (conservative, not documented values).
    vision_models=(
        "moonshot-v1-8k-vision",
        "moonshot-v1-32k-vision",
        "moonshot-v1-128k-vision",
        "kimi-k2.5",
        "kimi-k2.6",
        "kimi-latest",
    ),
    image_limits=ImageLimits(
        max_side=2_048, max_pixels=1_048_576, max_bytes=10 * 1024 * 1024, formats=("png", "jpeg")
    ),
)
