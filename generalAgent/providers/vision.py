"""Whether the configured model takes images, and within which limits.

The provider table (each dialect's `vision_models`) knows the hosted vision models by
name; a model served under a name it does not list (vLLM, Ollama, OpenRouter's
`vendor/model`) is recognised by the markers vision models carry in their names (`-vl`,
`vision`, `llava`, ...). MODEL_VISION=on/off overrides both.
"""

from __future__ import annotations

from generalAgent.config.settings import ModelSettings
from generalAgent.documents.images import ImageLimits
from generalAgent.providers.detection import choose_provider, model_known_by_name

# Parts of a model's name that mark a vision model wherever it is served.
VISION_NAME_MARKERS = (
    "-vl",
    "_vl",
    "vl-",
    "2.5vl",
    "vision",
    "llava",
    "pixtral",
    "minicpm-v",
    "internvl",
    "gemma3",
    "gemma-3",
    "qvq",
    "glm-4v",
    "glm-4.5v",
)


def takes_images(settings: ModelSettings) -> bool:
    """Whether images go to the model as image parts (else as OCR text)."""
    if settings.model_vision != "auto":
        return settings.model_vision == "on"
    verdict = vision_verdict(settings)
    if verdict is not None:
        return verdict
    return any(marker in _base(settings) for marker in VISION_NAME_MARKERS)


def vision_verdict(settings: ModelSettings) -> bool | None:
    """What a provider table says of the model taking images: the endpoint's provider's,
    else any provider's that knows the name (a relay's gpt-4.1-mini, openrouter's
    "openai/gpt-4.1", vLLM's "Qwen/Qwen2.5-VL-7B"); None when no table knows it."""
    name = (settings.model_name or "").lower()
    verdict = choose_provider(settings).dialect.takes_images(name)
    if verdict is None:
        known = model_known_by_name(name)
        if known is not None:
            verdict = known[0].takes_images(known[1])
    return verdict


def knows_vision(settings: ModelSettings) -> bool:
    """Whether images are decided by MODEL_VISION, a table or a name marker, not a guess."""
    return (
        settings.model_vision != "auto"
        or vision_verdict(settings) is not None
        or any(marker in _base(settings) for marker in VISION_NAME_MARKERS)
    )


def _base(settings: ModelSettings) -> str:
    return (settings.model_name or "").lower().rpartition("/")[2]


def image_limits(settings: ModelSettings) -> ImageLimits:
    return choose_provider(settings).dialect.image_limits
