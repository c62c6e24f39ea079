"""The chat-model factory: a `DialectChatModel` for the configured endpoint and provider.

Streaming is on, and usage is asked for in the stream (`stream_usage`) so every turn
can show input / cached / output tokens; the dialect's thinking switches go in the
request body (`extra_body`), computed once here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generalAgent.config.settings import ModelSettings

if TYPE_CHECKING:
    from generalAgent.providers.chat_model import DialectChatModel


class ModelNotConfigured(Exception):
    """MODEL_NAME or OPENAI_API_KEY is missing; the message tells the user what to set."""


def setup_guidance(missing: list[str]) -> str:
    names = " and ".join(missing)
    return (
        f"No model configured: set {names} in .env (copy .env.example to .env and edit it), "
        "or in the environment.\n"
        "Example for OpenAI:\n"
        "  MODEL_NAME=gpt-4.1-mini\n"
        "  OPENAI_API_KEY=sk-...\n"
        "Any OpenAI-compatible endpoint works: also set OPENAI_BASE_URL, e.g.\n"
        "  DeepSeek  OPENAI_BASE_URL=https://api.deepseek.com/v1      MODEL_NAME=deepseek-chat\n"
        "  Qwen      OPENAI_BASE_URL=https://dashscope.aliyuncs.com/compatible-mode/v1  MODEL_NAME=qwen-plus\n"
        "  Ollama    OPENAI_BASE_URL=http://localhost:11434/v1         MODEL_NAME=qwen3 (any OPENAI_API_KEY)\n"
        "The provider is recognised from the address; MODEL_PROVIDER names it otherwise "
        "(docs/providers.md)."
    )


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
