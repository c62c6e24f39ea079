"""GLM (Zhipu: open.bigmodel.cn, Z.ai: api.z.ai).

From the GLM "Thinking Mode" guide: GLM-4.7 and later think by default, switched by
`thinking: {"type": "enabled" | "disabled"}`; with interleaved thinking the reasoning
(`reasoning_content`) of an assistant message that called tools must be returned with
the tool results. Cache hits are `usage.prompt_tokens_details.cached_tokens`.
"""

from __future__ import annotations

from typing import Any

from generalAgent.documents.images import ImageLimits
from generalAgent.providers.dialect import Dialect, Thinking
from generalAgent.providers.native_search import NativeSearch

# "Web Search in Chat": a tool of type web_search beside the functions; a bare
# {"type": "web_search"} is refused. search_result asks for the pages used, returned in a
# top-level `web_search` list.
WEB_SEARCH_TOOL = {
    "type": "web_search",
    "web_search": {"enable": True, "search_engine": "search_std", "search_result": True},
}


def request_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if thinking != "default":
        params["thinking"] = {"type": "enabled" if thinking == "on" else "disabled"}
    if effort and thinking != "off":
        params["reasoning_effort"] = effort  # GLM-5.2 and later; older models ignore it
    return params


DIALECT = Dialect(
    name="glm",
    title="GLM (Zhipu)",
    reasoning_fields=("reasoning_content",),
    echo_field="reasoning_content",
    echo="tool_calls",
    request_params=request_params,
    context_windows=(
        ("glm-4.5", 131_072),
        ("glm-4.6", 204_800),
        ("glm-4.7", 204_800),
        ("glm-4-long", 1_000_000),
        ("glm-4", 131_072),
    ),
    default_context_window=131_072,
    hosts=("open.bigmodel.cn", "api.z.ai"),
    limits="MODEL_REASONING_EFFORT only where the model takes it (GLM-5.2 and later).",
    web_search=NativeSearch(tools=(WEB_SEARCH_TOOL,), sources_field="web_search"),
    # GLM-4V: JPG/PNG, at most 5 MB and 6000 x 6000 pixels an image; GLM-4V and GLM-4V-Plus
    # read at most 5 images a request, GLM-4V-Flash one. Not confirmed on docs.bigmodel.cn
    # (the model pages found, e.g. https://docs.bigmodel.cn/cn/guide/models/vlm/glm-4.5v,
    # state no limits); kept as the conservative values, 5 images a request among them.
    vision_models=("glm-4v", "glm-4.1v", "glm-4.5v", "glm-4.6v"),
    image_limits=ImageLimits(
        max_side=4_096,
        max_pixels=2_048 * 2_048,
        max_bytes=5 * 1024 * 1024,
        formats=("png", "jpeg"),
        max_images=5,
    ),
)
