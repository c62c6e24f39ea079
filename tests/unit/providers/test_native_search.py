"""WEB_SEARCH_PROVIDER=native: the provider's own search asked for as each documents it, its sources listed."""

from __future__ import annotations

import json

import httpx
import pytest
from langchain_core.messages import HumanMessage

from generalAgent.providers.factory import build_chat_model
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.unit.providers.conftest import model_settings

PAGES = [
    {
        "title": "上海天气预报",
        "link": "https://weather.example.cn/shanghai",
        "content": "多云转小雨",
        "publish_date": "2026-11-26",
        "refer": "ref_1",
        "media": "中国气象局",
    },
    {"title": "not a page", "link": "javascript:alert(1)", "refer": "ref_2"},
]
ANSWER = "今天上海多云转小雨[ref_1]。"


@pytest.mark.parametrize("streaming", [True, False])
def test_glm_asks_with_its_web_search_tool_and_lists_the_pages(streaming: bool) -> None:
    with ScriptedOpenAIServer(dialect="glm") as server:
        server.add(Reply(text=ANSWER, web_sources=PAGES))
        model = build_chat_model(model_settings(server, "glm"), native_search=True)
        model = model.model_copy(update={"streaming": streaming})
        answer = model.invoke([HumanMessage(content="今天上海的天气")])
        tools = server.chat_requests[0].body["tools"]
        assert tools == [
            {
                "type": "web_search",
                "web_search": {"enable": True, "search_engine": "search_std", "search_result": True},
            }
        ]
        assert not server.refusals
    assert answer.text == (
        ANSWER + "\n\nSources:\n[1] 上海天气预报 (2026-11-26) https://weather.example.cn/shanghai"
    )
    assert answer.additional_kwargs["web_sources"] == [
        {"title": "上海天气预报", "url": "https://weather.example.cn/shanghai", "date": "2026-11-26"}
    ]


@pytest.mark.parametrize(
    ("provider", "extra"),
    [("glm", {"tools": [{"type": "web_search"}]}), ("qwen", {"enable_search": "yes"})],
)
def test_the_fake_providers_refuse_a_malformed_search_request(provider: str, extra: dict) -> None:
    """As documented: GLM's web_search tool needs its options object; enable_search is a boolean."""
    with ScriptedOpenAIServer(dialect=provider) as server:
        server.add(Reply(text="never"))
        body = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}], **extra}
        response = httpx.post(server.base_url + "/chat/completions", json=body, timeout=10)
        assert response.status_code == 400
        assert "search" in response.json()["error"]["message"]


def test_qwen_asks_with_enable_search_and_has_no_sources_to_list() -> None:
    with ScriptedOpenAIServer(dialect="qwen") as server:
        server.add(Reply(text="杭州明天晴。", web_sources=PAGES))
        model = build_chat_model(model_settings(server, "qwen"), native_search=True)
        answer = model.invoke([HumanMessage(content="杭州明天天气如何")])
        assert server.chat_requests[0].body["enable_search"] is True
        assert "tools" not in server.chat_requests[0].body
    # The compatible protocol returns no sources: nothing is invented.
    assert answer.text == "杭州明天晴。" and "web_sources" not in answer.additional_kwargs


@pytest.mark.parametrize("provider", ["deepseek", "qwen", "glm", "kimi"])
def test_nothing_is_added_unless_native_search_is_chosen(provider: str) -> None:
    with ScriptedOpenAIServer(dialect=provider) as server:
        server.add(Reply(text="ok", web_sources=PAGES))
        answer = build_chat_model(model_settings(server, provider)).invoke([HumanMessage(content="hi")])
        body = server.chat_requests[0].body
        assert "enable_search" not in body and "tools" not in body
    assert answer.text == "ok"


def test_a_provider_without_search_ignores_native() -> None:
    with ScriptedOpenAIServer(dialect="deepseek") as server:
        server.add(Reply(text="ok"))
        model = build_chat_model(model_settings(server, "deepseek"), native_search=True)
        assert model.native_search is False
        model.invoke([HumanMessage(content="hi")])
        assert "tools" not in server.chat_requests[0].body


SEARCH_ARGS = {"search_result": {"search_id": "s-42"}, "usage": {"total_tokens": 1520}}


@pytest.mark.parametrize("settings", [{}, {"model_thinking": "on"}, {"model_reasoning_effort": "high"}])
def test_kimi_web_search_is_echoed_inside_one_model_call(settings: dict) -> None:
    with ScriptedOpenAIServer(dialect="kimi", strict_history=True) as server:
        server.add(
            Reply(tool_calls=[ToolCall("$web_search", SEARCH_ARGS)], chunk_chars=7),
            Reply(text="今天上海多云转小雨。"),
        )
        model = build_chat_model(model_settings(server, "kimi", **settings), native_search=True)
        answer = model.invoke([HumanMessage(content="今天上海的天气")])
        assert not server.refusals, server.refusals
        first, second = server.chat_requests
    # Thinking is off (required with $web_search), and reasoning_effort is not sent with it.
    for request in (first, second):
        assert request.body["thinking"] == {"type": "disabled"} and "reasoning_effort" not in request.body
        assert {"type": "builtin_function", "function": {"name": "$web_search"}} in request.body["tools"]
    call, echo = second.messages[-2:]
    assert call["tool_calls"][0]["function"]["name"] == "$web_search"
    assert echo["role"] == "tool" and json.loads(echo["content"]) == SEARCH_ARGS
    # The graph sees one answer and no call to run.
    assert answer.text == "今天上海多云转小雨。" and answer.tool_calls == []


def test_kimi_with_the_agents_own_tools_keeps_them_and_drops_nothing_else() -> None:
    with ScriptedOpenAIServer(dialect="kimi") as server:
        server.add(Reply(tool_calls=[ToolCall("now", {"timezone": "Asia/Shanghai"})]))
        model = build_chat_model(model_settings(server, "kimi"), native_search=True)
        now_tool = {
            "type": "function",
            "function": {
                "name": "now",
                "description": "time",
                "parameters": {"type": "object", "properties": {}},
            },
        }
        answer = model.bind_tools([now_tool]).invoke([HumanMessage(content="几点了")])
        assert len(server.chat_requests) == 1
    assert [call["name"] for call in answer.tool_calls] == ["now"]


def test_the_fake_kimi_refuses_search_with_thinking_and_an_altered_echo() -> None:
    with ScriptedOpenAIServer(dialect="kimi") as server:
        server.add(Reply(text="never"), Reply(text="never"))
        tools = [{"type": "builtin_function", "function": {"name": "$web_search"}}]
        thinking = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools}
        assert httpx.post(server.base_url + "/chat/completions", json=thinking, timeout=10).status_code == 400
        altered = {
            "model": "m",
            "thinking": {"type": "disabled"},
            "tools": tools,
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "$web_search", "arguments": '{"a": 1}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": '{"a": 2}'},
            ],
        }
        response = httpx.post(server.base_url + "/chat/completions", json=altered, timeout=10)
        assert response.status_code == 400 and "unchanged" in response.json()["error"]["message"]
