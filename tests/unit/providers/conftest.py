"""Chat models of each dialect against the local server speaking that dialect."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from generalAgent.config.settings import ModelSettings
from generalAgent.providers.chat_model import DialectChatModel
from generalAgent.providers.factory import build_chat_model
from tests.support.openai_server import ScriptedOpenAIServer

DIALECTS_WITH_FIXTURES = ("deepseek", "qwen", "kimi", "glm", "vllm", "ollama", "openrouter")


def model_settings(server: ScriptedOpenAIServer, provider: str, **overrides: object) -> ModelSettings:
    values = {
        "model_name": "test-model",
        "openai_api_key": "sk-test",
        "openai_base_url": server.base_url,
        "model_provider": provider,
        "model_max_retries": 0,
        "model_timeout": 10,
        **overrides,
    }
    return ModelSettings(**values)


@pytest.fixture
def dialect_server() -> Iterator[Callable[..., ScriptedOpenAIServer]]:
    servers: list[ScriptedOpenAIServer] = []

    def start(dialect: str, **options: object) -> ScriptedOpenAIServer:
        server = ScriptedOpenAIServer(dialect=dialect, **options).start()  # type: ignore[arg-type]
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def chat_model(server: ScriptedOpenAIServer, provider: str, **overrides: object) -> DialectChatModel:
    return build_chat_model(model_settings(server, provider, **overrides))
