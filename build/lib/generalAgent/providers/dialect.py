"""What sets one provider's dialect of the OpenAI chat wire format apart, as data.

Every provider speaks chat completions, but each puts reasoning somewhere else, needs
it sent back in its own cases, switches and sizes thinking with its own parameters,
reports cache hits in its own usage field and serves models with their own context
windows. A `Dialect` holds those facts; one small module per provider fills it in
(deepseek.py, qwen.py, ...) and everything else stays provider-neutral.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from generalAgent.documents.images import ImageLimits
from generalAgent.providers.native_search import NativeSearch

Thinking = Literal["on", "off", "default"]
# When stored reasoning goes back with an assistant message:
#   never       the provider ignores or rejects it;
#   tool_turns  every assistant message of a user turn in which the model called tools
#               (DeepSeek: between two user messages, all or nothing);
#   tool_calls  every assistant message that makes tool calls (interleaved thinking);
#   always      every assistant message that has some (preserved thinking).
ReasoningEcho = Literal["never", "tool_turns", "tool_calls", "always"]
RequestParams = Callable[[Thinking, "str | None"], dict[str, Any]]


def no_params(thinking: Thinking, effort: str | None) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Dialect:
    name: str  # the MODEL_PROVIDER value
    title: str  # how the user knows it
    # Response fields that carry reasoning, in order of preference (deltas and messages alike).
    reasoning_fields: tuple[str, ...] = ()
    # The assistant-message field reasoning is sent back in, and when.
    echo_field: str | None = None
    echo: ReasoningEcho = "never"
    # The body keys that carry MODEL_THINKING and MODEL_REASONING_EFFORT (sent as extra_body).
    request_params: RequestParams = no_params
    # Usage fields holding the prompt tokens served from cache, dotted, first present wins.
    cache_fields: tuple[str, ...] = ("prompt_tokens_details.cached_tokens",)
    # Context windows by model-name prefix (longest prefix wins), and for any other model.
    context_windows: tuple[tuple[str, int], ...] = ()
    default_context_window: int = 128_000
    # Structured reasoning blocks sent back unchanged with tool calls (OpenRouter's).
    details_field: str | None = None
    # Hosts of OPENAI_BASE_URL that mean this provider (exact, or a suffix after a dot).
    hosts: tuple[str, ...] = ()
    ports: tuple[int, ...] = field(default=())  # local servers known by their port
    limits: str = ""  # what the docs' provider table says this dialect cannot do
    # The provider's own web search (WEB_SEARCH_PROVIDER=native); None: it has none we can use.
    web_search: NativeSearch | None = None
    # Models that take images (image_url parts), by model-name prefix, and exceptions
    # that do not; the longest matching prefix decides (providers/vision.py).
    vision_models: tuple[str, ...] = ()
    text_only_models: tuple[str, ...] = ()
    # What the provider documents it accepts of one image.
    image_limits: ImageLimits = field(default_factory=ImageLimits)

    def takes_images(self, model: str | None) -> bool | None:
        """Whether this provider's table says `model` takes images; None when it does not know it."""
        name = (model or "").lower()
        found = [(len(p), True) for p in self.vision_models if name.startswith(p)]
        found += [(len(p), False) for p in self.text_only_models if name.startswith(p)]
        return max(found)[1] if found else None

    def context_window(self, model: str | None) -> tuple[int, str | None]:
        """The window of `model` and the table entry that gave it (None: this dialect's default)."""
        name = (model or "").lower()
        matches = [(prefix, size) for prefix, size in self.context_windows if name.startswith(prefix)]
        if not matches:
            return self.default_context_window, None
        prefix, size = max(matches, key=lambda item: len(item[0]))
        return size, prefix
