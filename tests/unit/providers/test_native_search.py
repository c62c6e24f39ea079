"""WEB_SEARCH_PROVIDER=native: the provider's own search asked for as each documents it, its sources listed."""

from __future__ import annotations

import httpx
import pytest
from langchain_core.messages import HumanMessage

from generalAgent.providers.factory import build_chat_model
from tests.support.openai_server import Reply, ScriptedOpenAIServer
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


@pytest.mark.parametrize("provider", ["deepseek", "qwen", "glm"])
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
