"""Qwen on DashScope / Model Studio (dashscope*.aliyuncs.com, OpenAI-compatible mode).

From Model Studio's "Deep thinking" guide: hybrid models switch thinking with
`enable_thinking` and cap it with `thinking_budget` (tokens), both outside the OpenAI
schema (so in the request body as extra fields); reasoning arrives in
`reasoning_content` and is not part of later requests' context, so it is not sent back.
Cache hits are `usage.prompt_tokens_details.cached_tokens`.
"""

from __future__ import annotations

from typing import Any

from generalAgent.documents.images import ImageLimits
from generalAgent.providers.dialect import Dialect, Thinking
from generalAgent.providers.native_search import NativeSearch

# MODEL_REASONING_EFFORT as a thinking budget in tokens; 38,912 is Qwen3's largest.
THINKING_BUDGETS = {"minimal": 512, "low": 2_048, "medium": 8_192, "high": 24_576, "max": 38_912}


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if thinking != "default":
        params["enable_thinking"] = thinking == "on"
    if effort and thinking != "off":
        budget = THINKING_BUDGETS.get(effort)
        params["thinking_budget"] = budget if budget is not None else int(effort)
    return params


DIALECT = Dialect(
    name="qwen",
    title="Qwen (DashScope)",
    reasoning_fields=("reasoning_content",),
    request_params=request_params,
    context_windows=(
        ("qwen3-max", 262_144),
        ("qwen3-coder-plus", 1_000_000),
        ("qwen3-coder", 262_144),
        ("qwen-max", 32_768),
        ("qwen-plus", 131_072),
        ("qwen-turbo", 1_000_000),
        ("qwen-flash", 1_000_000),
        ("qwen-long", 10_000_000),
        ("qwq", 131_072),
        ("qwen3", 131_072),
    ),
    default_context_window=131_072,
    hosts=("dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "dashscope-us.aliyuncs.com"),
    limits="MODEL_REASONING_EFFORT becomes thinking_budget (low 2,048 … max 38,912 tokens) or takes a number.",
    # Model Studio's "Web search": the model decides when to search; the compatible
    # protocol returns no sources.
    web_search=NativeSearch(body={"enable_search": True}),
    # Model Studio "Image and video understanding"
    # (https://www.alibabacloud.com/help/en/model-studio/vision): Qwen-VL/QVQ/Omni take
    # image_url parts, URL or base64. Its "Image limits" section was not found by our
    # search, so the values stay the conservative ones: 10 MB an image, and pixels held
    # to the model's default budget (1280 tokens of 28 x 28, about 1 MP), past which the
    # server scales an image down anyway.
    vision_models=(
        "qwen-vl",
        "qwen2-vl",
        "qwen2.5-vl",
        "qwen3-vl",
        "qvq",
        "qwen-omni",
        "qwen2.5-omni",
        "qwen3-omni",
    ),
    image_limits=ImageLimits(
        max_side=4_096, max_pixels=1_003_520, max_bytes=10 * 1024 * 1024, formats=("png", "jpeg")
    ),
)
