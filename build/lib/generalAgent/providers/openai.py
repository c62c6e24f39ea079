"""OpenAI itself (api.openai.com, or OPENAI_BASE_URL unset).

OpenAI's chat completions never return reasoning text, so nothing is shown or sent
back; `reasoning_effort` sizes the thinking of reasoning models ("none" turns it off
where the model allows). Cache hits are `usage.prompt_tokens_details.cached_tokens`.
"""

from __future__ import annotations

from typing import Any

from generalAgent.documents.images import ImageLimits
from generalAgent.providers.dialect import Dialect, Thinking


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    if thinking == "off":
        return {"reasoning_effort": "none"}
    return {"reasoning_effort": effort} if effort else {}


DIALECT = Dialect(
    name="openai",
    title="OpenAI",
    request_params=request_params,
    context_windows=(
        ("gpt-5", 400_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4o", 128_000),
        ("gpt-4-turbo", 128_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("gpt-3.5-turbo", 16_385),
    ),
    default_context_window=128_000,
    hosts=("api.openai.com",),
    limits="reasoning is never shown: OpenAI's chat completions do not return it.",
    # "Images and vision", Image input requirements
    # (https://developers.openai.com/api/docs/guides/images): PNG, JPEG, WEBP and
    # non-animated GIF, up to 20 MB an image, 500 images and 50 MB of images a request;
    # high detail sees at most 768 px (short side) by 2000 px (long side), so more is not
    # sent. MB read as 10^6 bytes and counted on the data URL: within the limit either way.
    vision_models=("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-4-turbo", "gpt-5", "chatgpt-4o", "o1", "o3", "o4"),
    text_only_models=(
        "o1-mini",
        "o3-mini",
        "gpt-4o-audio",
        "gpt-4o-mini-audio",
        "gpt-4o-search",
        "gpt-5-chat-audio",
    ),
    image_limits=ImageLimits(
        max_side=2_048,
        max_pixels=2_048 * 768,
        max_bytes=20_000_000,
        formats=("png", "jpeg"),
        max_images=500,
        max_request_bytes=50_000_000,
    ),
)
