"""Whether the configured model takes images, and within which limits.

The provider table (each dialect's `vision_models`) knows the hosted vision models by
name; a model served under a name it does not list (vLLM, Ollama, OpenRouter's
`vendor/model`) is recognised by the markers vision models carry in their names (`-vl`,
`vision`, `llava`, ...). MODEL_VISION=on/off overrides both.
"""

from __future__ import annotations

from generalAgent.config.settings import ModelSettings
from generalAgent.documents.images import ImageLimits
from generalAgent.providers.detection import DIALECTS, choose_provider

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
    name = (settings.model_name or "").lower()
    dialect = choose_provider(settings).dialect
    verdict = dialect.takes_images(name)
    if verdict is None and "/" in name:  # openrouter's "openai/gpt-4.1", vLLM's "Qwen/Qwen2.5-VL-7B"
        vendor, _, base = name.rpartition("/")
        for known in DIALECTS.values():
            if known.vision_models and known.takes_images(base) is not None:
                verdict = known.takes_images(base)
                break
        name = base
    if verdict is not None:
        return verdict
    return any(marker in name for marker in VISION_NAME_MARKERS)


def image_limits(settings: ModelSettings) -> ImageLimits:
    return choose_provider(settings).dialect.image_limits
