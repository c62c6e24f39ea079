"""DeepSeek (api.deepseek.com): thinking by default, and its reasoning must come back with tool calls.

From DeepSeek's "Thinking Mode" guide: reasoning arrives in `reasoning_content`; between
two user messages in which the model called tools, every assistant message's
`reasoning_content` must be sent back in all later requests, or the request is refused
with a 400 ("The `reasoning_content` in the thinking mode must be passed back to the
API."). Thinking is switched by `thinking: {"type": "enabled" | "disabled"}` and sized by
`reasoning_effort` (low / high / max). Cache hits are `usage.prompt_cache_hit_tokens`
("Context Caching"); reasoning tokens are `completion_tokens_details.reasoning_tokens`.
"""

from __future__ import annotations

from typing import Any

from generalAgent.documents.images import ImageLimits
from generalAgent.providers.dialect import Dialect, Thinking


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if thinking != "default":
        params["thinking"] = {"type": "enabled" if thinking == "on" else "disabled"}
    if effort and thinking != "off":
        params["reasoning_effort"] = effort
    return params


DIALECT = Dialect(
    name="deepseek",
    title="DeepSeek",
    reasoning_fields=("reasoning_content",),
    echo_field="reasoning_content",
    echo="tool_turns",
    request_params=request_params,
    cache_fields=("prompt_cache_hit_tokens", "prompt_tokens_details.cached_tokens"),
    context_windows=(
        ("deepseek-v4", 1_000_000),
        ("deepseek-chat", 131_072),
        ("deepseek-reasoner", 131_072),
    ),
    default_context_window=131_072,
    hosts=("api.deepseek.com",),
    limits="temperature and top_p have no effect while thinking (DeepSeek ignores them).",
    # "Vision" (https://api-docs.deepseek.com/guides/vision): deepseek-flash takes JPEG, PNG,
    # GIF and WebP as image_url parts, base64 data URLs counting toward the 48 MiB request
    # body, so images are held to 40 MiB a request (the rest is for the conversation). The
    # page's Limits section (per image, images per request) was not found by our search:
    # 10 MiB and 2048 px an image stay, well under what third parties quote from it.
    vision_models=("deepseek-flash", "deepseek-v4-flash-vision"),
    image_limits=ImageLimits(
        max_side=2_048,
        max_pixels=2_048 * 2_048,
        max_bytes=10 * 1024 * 1024,
        formats=("png", "jpeg"),
        max_request_bytes=40 * 1024 * 1024,
    ),
)
