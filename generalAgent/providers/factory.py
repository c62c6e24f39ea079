"""The chat-model factory: a `DialectChatModel` for the configured endpoint and provider.

Streaming is on, and usage is asked for in the stream (`stream_usage`) so every turn
can show input / cached / output tokens; the dialect's thinking switches go in the
request body (`extra_body`), computed once here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generalAgent.config.settings import ModelSettings
from generalAgent.providers.errors import Translate

if TYPE_CHECKING:
    from generalAgent.providers.chat_model import DialectChatModel


class ModelNotConfigured(Exception):
    """MODEL_NAME or OPENAI_API_KEY is missing; the message tells the user what to set."""


def _english(message: str) -> str:
    return message


def setup_guidance(missing: list[str], _: Translate = _english) -> str:
    """What to set, with examples: the first thing a newcomer without a model reads.

    `_` translates it (the terminal passes the UI's catalog; the messages are `_(...)` calls
    so the catalog extracts them here); the setting names and examples stay as typed."""
    names = (
        missing[0]
        if len(missing) == 1
        else _("{names} and {last}").format(names=", ".join(missing[:-1]), last=missing[-1])
    )
    lines = [
        _("No model configured: set {names} in .env or in the environment.").format(names=names),
        _("Example for OpenAI:"),
        "  MODEL_NAME=gpt-4.1-mini",
        "  OPENAI_API_KEY=sk-...",
        _("Any OpenAI-compatible endpoint works: also set OPENAI_BASE_URL, e.g."),
        "  DeepSeek  OPENAI_BASE_URL=https://api.deepseek.com/v1      MODEL_NAME=deepseek-chat",
        "  Qwen      OPENAI_BASE_URL=https://dashscope.aliyuncs.com/compatible-mode/v1  MODEL_NAME=qwen-plus",
        "  Ollama    OPENAI_BASE_URL=http://localhost:11434/v1         MODEL_NAME=qwen3 "
        + _("(any OPENAI_API_KEY)"),
        _(
            "The provider is recognised from the address; MODEL_PROVIDER names it otherwise (docs/providers.md)."
        ),
    ]
    return "\n".join(lines)


def build_chat_model(settings: ModelSettings, native_search: bool = False) -> DialectChatModel:
    """`native_search`: WEB_SEARCH_PROVIDER=native, the provider's own web search where it has one."""
    missing = settings.missing()
    if missing:
        raise ModelNotConfigured(setup_guidance(missing))
    from generalAgent.providers.chat_model import DialectChatModel
    from generalAgent.providers.detection import choose_provider

    assert settings.openai_api_key is not None and settings.model_name  # guaranteed by missing()
    dialect = choose_provider(settings).dialect
    body = dialect.request_params(settings.model_thinking, settings.model_reasoning_effort)
    return DialectChatModel(
        dialect=dialect,
        model=settings.model_name,
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url,
        timeout=settings.model_timeout,
        max_retries=settings.model_max_retries,
        temperature=settings.model_temperature,
        streaming=True,
        stream_usage=True,
        extra_body=body or None,
        native_search=native_search and dialect.web_search is not None,
    )
