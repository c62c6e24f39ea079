"""The test server refuses what each provider documents refusing, and the dialect models never trip it."""

from __future__ import annotations

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from generalAgent.providers.errors import describe_model_error
from tests.support.openai_server import Reply, ToolCall
from tests.unit.providers.conftest import chat_model, model_settings


def tool_turn_history() -> list:
    call = {"name": "now", "args": {}, "id": "call_1", "type": "tool_call"}
    return [
        HumanMessage(content="几点了？"),
        AIMessage(content="", tool_calls=[call], additional_kwargs={"reasoning_content": "Need the clock."}),
        ToolMessage(content="09:00", tool_call_id="call_1"),
        AIMessage(content="九点。", additional_kwargs={"reasoning_content": "It is nine."}),
        HumanMessage(content="谢谢"),
    ]


def test_deepseek_refuses_a_tool_turn_without_its_reasoning_as_documented(dialect_server) -> None:
    server = dialect_server("deepseek")
    plain = ChatOpenAI(model="deepseek-chat", api_key="sk-test", base_url=server.base_url, max_retries=0)
    with pytest.raises(openai.BadRequestError) as refused:
        plain.invoke(tool_turn_history())
    message = "The `reasoning_content` in the thinking mode must be passed back to the API."
    assert refused.value.status_code == 400 and message in str(refused.value)
    described = describe_model_error(refused.value, model_settings(server, "generic"))
    assert described is not None and "MODEL_PROVIDER" in described and message in described

    server.add(Reply(text="不客气。", reasoning="Polite reply."))
    answer = chat_model(server, "deepseek").invoke(tool_turn_history())
    assert answer.text == "不客气。"
    sent = server.chat_requests[-1].messages
    assert [m.get("reasoning_content") for m in sent if m["role"] == "assistant"] == [
        "Need the clock.",
        "It is nine.",
    ]


def test_deepseek_without_thinking_takes_any_history(dialect_server) -> None:
    server = dialect_server("deepseek")
    plain = ChatOpenAI(
        model="deepseek-chat",
        api_key="sk-test",
        base_url=server.base_url,
        max_retries=0,
        extra_body={"thinking": {"type": "disabled"}},
    )
    assert plain.invoke(tool_turn_history()).text == "OK"


def test_kimi_refuses_a_tool_call_message_without_reasoning_and_thinking_with_effort(dialect_server) -> None:
    server = dialect_server("kimi")
    plain = ChatOpenAI(model="kimi-k2.6", api_key="sk-test", base_url=server.base_url, max_retries=0)
    with pytest.raises(openai.BadRequestError) as refused:
        plain.invoke(tool_turn_history())
    assert "reasoning_content is missing in assistant tool call message at index 1" in str(refused.value)
    history = tool_turn_history()
    history[1].additional_kwargs.clear()  # e.g. a session from before thinking was on
    assert chat_model(server, "kimi").invoke(history).text == "OK"
    assert server.chat_requests[-1].messages[1]["reasoning_content"] == ""
    both = chat_model(server, "kimi", model_thinking="on", model_reasoning_effort="high")
    both.invoke([HumanMessage(content="hi")])
    assert server.chat_requests[-1].body.get("reasoning_effort") == "high"
    assert "thinking" not in server.chat_requests[-1].body


@pytest.mark.parametrize(
    ("provider", "thinking", "effort", "expected"),
    [
        ("deepseek", "on", "max", {"thinking": {"type": "enabled"}, "reasoning_effort": "max"}),
        ("deepseek", "off", "max", {"thinking": {"type": "disabled"}}),
        ("qwen", "on", "low", {"enable_thinking": True, "thinking_budget": 2048}),
        ("qwen", "off", None, {"enable_thinking": False}),
        ("kimi", "off", None, {"thinking": {"type": "disabled"}}),
        ("glm", "on", None, {"thinking": {"type": "enabled"}}),
        ("vllm", "off", None, {"chat_template_kwargs": {"enable_thinking": False, "thinking": False}}),
        ("ollama", "off", None, {"reasoning_effort": "none"}),
        ("openrouter", "on", "high", {"reasoning": {"enabled": True, "effort": "high"}}),
        ("openai", "default", "low", {"reasoning_effort": "low"}),
        ("generic", "on", None, {}),
    ],
)
def test_thinking_settings_reach_the_body_the_way_each_provider_documents(
    provider: str, thinking: str, effort: str | None, expected: dict, dialect_server
) -> None:
    server = dialect_server("generic")
    model = chat_model(server, provider, model_thinking=thinking, model_reasoning_effort=effort)
    model.invoke([HumanMessage(content="hi")])
    body = server.chat_requests[-1].body
    for key, value in expected.items():
        assert body[key] == value
    for key in ("thinking", "enable_thinking", "reasoning", "chat_template_kwargs", "reasoning_effort"):
        assert key in expected or key not in body


def test_a_prompt_over_the_window_is_refused_counting_chinese_the_providers_way(dialect_server) -> None:
    server = dialect_server("deepseek", context_window=2_000)
    plain = ChatOpenAI(model="deepseek-chat", api_key="sk-test", base_url=server.base_url, max_retries=0)
    chinese = (
        "营收同比增长，主要来自企业客户。" * 220
    )  # 3,520 characters: ~2,100 tokens, ~880 at 4 chars a token
    with pytest.raises(openai.BadRequestError) as refused:
        plain.invoke([HumanMessage(content=chinese)])
    assert "maximum context length is 2000 tokens" in str(refused.value)


def test_the_prefix_cache_counts_the_shared_prefix(dialect_server) -> None:
    server = dialect_server("deepseek", prefix_cache=True)
    model = chat_model(server, "deepseek")
    history = [HumanMessage(content="背景资料：" + "季度营收增长百分之十二。" * 200)]
    first = model.invoke(history)
    assert (first.usage_metadata or {}).get("input_token_details", {}).get("cache_read") == 0
    server.add(Reply(text="好", reasoning="ok"))
    second = model.invoke([*history, first, HumanMessage(content="继续")])
    cached = (second.usage_metadata or {}).get("input_token_details", {}).get("cache_read", 0)
    assert cached >= 1_280 and cached % 64 == 0


def test_tool_call_reply_with_reasoning_streams_in_the_dialects_field(dialect_server) -> None:
    server = dialect_server("vllm")
    server.add(Reply(reasoning="先查时间。", tool_calls=[ToolCall("now", {})]))
    reply = chat_model(server, "vllm").invoke([HumanMessage(content="几点？")])
    assert reply.additional_kwargs["reasoning_content"] == "先查时间。"
