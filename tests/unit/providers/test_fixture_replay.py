"""Each provider's documented stream, replayed verbatim through the real client.

The recorded turns (tests/fixtures/providers/*.json) are a tool-calling turn and an
answer, chunk by chunk as each provider's documentation shows them: the reasoning must
land on the message, the usage must be read from the provider's own fields, and the
next request must carry the reasoning back exactly where the provider wants it.
"""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

from generalAgent.providers.reasoning import REASONING_KEY
from tests.support.openai_server import Reply, load_dialect
from tests.unit.providers.conftest import DIALECTS_WITH_FIXTURES, chat_model

# Where each dialect expects the reasoning of a tool-calling assistant message next time.
ECHOED_AS = {
    "deepseek": "reasoning_content",
    "kimi": "reasoning_content",
    "glm": "reasoning_content",
    "vllm": "reasoning",
    "ollama": "reasoning",
    "openrouter": "reasoning_details",
    "qwen": None,
}


@tool
def get_date() -> str:
    """Today's date."""
    return "2026-11-23"


@pytest.mark.parametrize("provider", DIALECTS_WITH_FIXTURES)
def test_recorded_turns_replay_through_the_client(provider: str, dialect_server) -> None:
    wire = load_dialect(provider)
    assert wire is not None and wire["sources"]
    server = dialect_server(provider)
    server.add(
        Reply(raw_stream=wire["recorded"]["tool_call_turn"]),
        Reply(raw_stream=wire["recorded"]["answer_turn"]),
    )
    model = chat_model(server, provider).bind_tools([get_date])
    question = HumanMessage(content="明天杭州天气怎么样？")
    first = model.invoke([question])
    assert first.additional_kwargs[REASONING_KEY] == "The user wants tomorrow's weather; first the date." or (
        provider == "deepseek"
        and first.additional_kwargs[REASONING_KEY]
        == "The user asks for tomorrow's weather; I need today's date first."
    )
    assert [c["name"] for c in first.tool_calls] == ["get_date"]
    usage = first.usage_metadata or {}
    assert usage["input_tokens"] == 1300
    expected_cached = 0 if provider == "ollama" else 1280
    assert (usage.get("input_token_details") or {}).get("cache_read", 0) == expected_cached

    answer = model.invoke(
        [question, first, ToolMessage(content="2026-11-23", tool_call_id=first.tool_calls[0]["id"])]
    )
    assert answer.text == "明天多云，7~13°C。" or answer.text == "明天杭州多云，7~13°C。"
    assert answer.additional_kwargs[REASONING_KEY]

    sent = server.chat_requests[1].messages[1]
    assert sent["role"] == "assistant"
    field = ECHOED_AS[provider]
    if field is None:
        assert "reasoning_content" not in sent and "reasoning" not in sent
    elif field == "reasoning_details":
        assert sent[field] == [
            {
                "type": "reasoning.text",
                "text": "The user wants tomorrow's weather; first the date.",
                "format": "unknown",
                "index": 0,
            }
        ]
    else:
        assert sent[field] == first.additional_kwargs[REASONING_KEY]


def test_fixtures_name_their_sources_and_errors_are_valid_json() -> None:
    for provider in DIALECTS_WITH_FIXTURES:
        wire = load_dialect(provider)
        assert wire is not None
        assert all(url.startswith("https://") for url in wire["sources"])
        json.dumps(wire["errors"])
