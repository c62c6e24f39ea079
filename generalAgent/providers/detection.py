"""Which dialect a session speaks: MODEL_PROVIDER when set, else the host of OPENAI_BASE_URL.

The choice carries its reason, so `doctor` and the docs can say how it was made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from generalAgent.config.settings import ModelSettings
from generalAgent.display import N_
from generalAgent.providers import deepseek, generic, glm, kimi, ollama, openai, openrouter, qwen, vllm
from generalAgent.providers.dialect import Dialect

DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        openai.DIALECT,
        deepseek.DIALECT,
        qwen.DIALECT,
        kimi.DIALECT,
        glm.DIALECT,
        vllm.DIALECT,
        ollama.DIALECT,
        openrouter.DIALECT,
        generic.DIALECT,
    )
}
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


@dataclass(frozen=True)
class ProviderChoice:
    dialect: Dialect
    reason: str  # e.g. "MODEL_PROVIDER=deepseek", "detected from api.deepseek.com"
    # The reason as a marked message and its fields, for the terminal's language (`describe`).
    template: str = ""
    fields: tuple[tuple[str, str], ...] = ()

    def describe(self, translate: Callable[[str], str] = str) -> str:
        """The reason in the language of `translate` (the terminal's `_`)."""
        return translate(self.template).format(**dict(self.fields)) if self.template else self.reason


def _choice(dialect: Dialect, template: str, **fields: str) -> ProviderChoice:
    return ProviderChoice(dialect, template.format(**fields), template, tuple(fields.items()))


def choose_provider(settings: ModelSettings) -> ProviderChoice:
    if settings.model_provider:
        return _choice(
            DIALECTS[settings.model_provider], N_("MODEL_PROVIDER={name}"), name=settings.model_provider
        )
    if not settings.openai_base_url:
        return _choice(DIALECTS["openai"], N_("OPENAI_BASE_URL unset: OpenAI's endpoint"))
    return detect_from_url(settings.openai_base_url)


def detect_from_url(base_url: str) -> ProviderChoice:
    parts = urlsplit(base_url if "//" in base_url else f"//{base_url}")
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    for dialect in DIALECTS.values():
        if any(host == known or host.endswith("." + known) for known in dialect.hosts):
            return _choice(dialect, N_("detected from {host}"), host=host)
        if host.startswith("dashscope") and host.endswith(".aliyuncs.com") and dialect.name == "qwen":
            return _choice(dialect, N_("detected from {host}"), host=host)
        if port in dialect.ports and host in LOCAL_HOSTS:
            return _choice(dialect, N_("detected from {host}"), host=f"{host}:{port}")
    where = f"{host}:{port}" if port else host
    return _choice(DIALECTS["generic"], N_("no known provider at {where}: generic"), where=where or base_url)


def model_known_by_name(model: str | None) -> tuple[Dialect, str] | None:
    """The provider whose tables know the model `model` by its name, and the name as they
    spell it (a `vendor/` prefix dropped): relays and proxies serve OpenAI's, DeepSeek's or
    Qwen's models at addresses of their own, where only the name says what the model is.
    The longest matching prefix among every provider's windows and vision tables wins;
    None when no table knows it."""
    name = (model or "").lower()
    best: tuple[int, Dialect, str] | None = None
    for candidate in dict.fromkeys([name, name.rpartition("/")[2]]):
        if not candidate:
            continue
        for dialect in DIALECTS.values():
            prefixes = [p for p, _ in dialect.context_windows]
            prefixes += [*dialect.vision_models, *dialect.text_only_models]
            for prefix in prefixes:
                if candidate.startswith(prefix) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), dialect, candidate)
    return (best[1], best[2]) if best is not None else None
