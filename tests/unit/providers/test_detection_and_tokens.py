"""Which provider a URL means, how usage is read, and prompt sizes per script."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from generalAgent.config.settings import GovernanceSettings, ModelSettings
from generalAgent.providers.detection import choose_provider, detect_from_url
from generalAgent.providers.tokens import (
    ESTIMATE_KEY,
    calibration_factor,
    context_budget,
    context_window,
    estimate_message_tokens,
    estimate_tokens,
)
from generalAgent.providers.usage import usage_metadata


@pytest.mark.parametrize(
    ("url", "provider"),
    [
        ("https://api.deepseek.com/v1", "deepseek"),
        ("https://api.deepseek.com", "deepseek"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen"),
        ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen"),
        ("https://api.moonshot.cn/v1", "kimi"),
        ("https://api.moonshot.ai/v1", "kimi"),
        ("https://open.bigmodel.cn/api/paas/v4", "glm"),
        ("http://localhost:11434/v1", "ollama"),
        ("http://127.0.0.1:11434/v1", "ollama"),
        ("https://openrouter.ai/api/v1", "openrouter"),
        ("https://api.openai.com/v1", "openai"),
        ("http://localhost:8000/v1", "generic"),
        ("https://api.deepseek.com.evil.example/v1", "generic"),
    ],
)
def test_the_host_of_the_base_url_names_the_provider(url: str, provider: str) -> None:
    choice = detect_from_url(url)
    assert choice.dialect.name == provider
    assert ("detected from" in choice.reason) == (provider != "generic")


def settings(**values: object) -> ModelSettings:
    return ModelSettings(**values)


def test_model_provider_wins_and_no_base_url_means_openai() -> None:
    chosen = choose_provider(settings(openai_base_url="http://localhost:8000/v1", model_provider="vllm"))
    assert (chosen.dialect.name, chosen.reason) == ("vllm", "MODEL_PROVIDER=vllm")
    assert choose_provider(settings()).dialect.name == "openai"


def test_each_providers_cache_field_is_read() -> None:
    deepseek = usage_metadata(
        {
            "prompt_tokens": 100,
            "completion_tokens": 30,
            "prompt_cache_hit_tokens": 64,
            "prompt_cache_miss_tokens": 36,
            "completion_tokens_details": {"reasoning_tokens": 20},
        },
        ("prompt_cache_hit_tokens",),
    )
    assert deepseek["input_token_details"] == {"cache_read": 64}
    assert deepseek["output_token_details"] == {"reasoning": 20}
    kimi = usage_metadata(
        {"prompt_tokens": 100, "completion_tokens": 3, "cached_tokens": 90}, ("cached_tokens",)
    )
    assert kimi["input_token_details"] == {"cache_read": 90} and kimi["total_tokens"] == 103
    ollama = usage_metadata({"prompt_tokens": 10, "completion_tokens": "x"}, ())
    assert ollama["output_tokens"] == 0 and "input_token_details" not in ollama


def test_chinese_counts_twice_english_per_character() -> None:
    assert estimate_tokens("营收增长" * 100) == 240
    assert estimate_tokens("revenue " * 50) == 120
    assert estimate_tokens("") == 0
    four_chars_a_token = len("营收增长" * 100) // 4
    assert estimate_tokens("营收增长" * 100) / four_chars_a_token == pytest.approx(2.4)


def test_echoed_reasoning_counts_only_where_it_is_sent() -> None:
    message = AIMessage(content="好", additional_kwargs={"reasoning_content": "思考" * 50})
    assert estimate_message_tokens(message, with_reasoning=True) > estimate_message_tokens(message) + 50


def test_calibration_follows_the_last_reported_prompt() -> None:
    answer = AIMessage(
        content="ok", usage_metadata={"input_tokens": 3000, "output_tokens": 5, "total_tokens": 3005}
    )
    answer.response_metadata[ESTIMATE_KEY] = 2000
    assert calibration_factor([HumanMessage(content="q"), answer]) == 1.5
    answer.response_metadata[ESTIMATE_KEY] = 10
    assert calibration_factor([answer]) == 4.0  # a report for another prompt is not trusted beyond 4x
    assert calibration_factor([HumanMessage(content="q")]) == 1.0


def test_windows_come_from_the_override_the_table_or_the_default() -> None:
    deepseek = settings(model_name="deepseek-chat", openai_base_url="https://api.deepseek.com")
    assert context_window(deepseek).tokens == 131_072
    assert context_budget(deepseek, GovernanceSettings()) == 98_304
    override = settings(model_name="deepseek-chat", model_context_window=32_000)
    assert context_window(override).source == "MODEL_CONTEXT_WINDOW"
    budget = GovernanceSettings(max_context_tokens=5_000)
    assert context_budget(override, budget) == 5_000
    unknown = settings(model_name="my-model", openai_base_url="http://localhost:11434/v1")
    assert context_window(unknown).tokens == 8_192
