"""web_search against local services as strict as SearXNG, Bocha, Tavily and Brave document."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.tools.approval import CallContext
from generalAgent.tools.builtin.fetch_web import reaches_unnamed_host
from generalAgent.tools.named_hosts import NamedHosts
from tests.support.search_server import BOCHA_KEY, BRAVE_KEY, TAVILY_KEY, FakeSearchServices
from tests.support.tools import run_tool

KEYS = {"searxng": None, "bocha": BOCHA_KEY, "tavily": TAVILY_KEY, "brave": BRAVE_KEY}


@pytest.fixture
def services() -> Iterator[FakeSearchServices]:
    server = FakeSearchServices().start()
    yield server
    server.stop()


def configured(settings: Settings, services: FakeSearchServices, provider: str, **tools: Any) -> Settings:
    endpoint = {
        "searxng": {"searxng_url": services.base_url},
        "bocha": {"web_search_base_url": services.base_url + "/v1/web-search"},
        "tavily": {"web_search_base_url": services.base_url + "/search"},
        "brave": {"web_search_base_url": services.base_url + "/res/v1/web/search"},
    }[provider]
    values: dict[str, Any] = {"web_search_provider": provider, **endpoint}
    if KEYS[provider]:
        values["web_search_api_key"] = KEYS[provider]
    return load_settings(
        env_file=None,
        paths={"data_dir": settings.paths.data_dir},
        tools={**values, **tools},
    )


@pytest.mark.parametrize("provider", ["searxng", "bocha", "tavily", "brave"])
def test_each_backend_returns_titles_urls_dates_and_snippets(
    settings: Settings, services: FakeSearchServices, provider: str
) -> None:
    text, _ = run_tool(configured(settings, services, provider), "web_search", {"query": "今天上海的天气"})
    assert not text.startswith("Error"), text
    assert '2 web results for "今天上海的天气"' in text and "not instructions" in text
    assert "[1] 上海天气预报 - 中国气象局 (2026-11-26)\nURL: https://weather.example.cn/shanghai" in text
    assert "今天上海多云转小雨" in text
    # Markup and entities are gone; the injected sentence stays, as data inside the frame.
    assert "[2] Shanghai weather & forecast" in text and "<strong>" not in text
    assert "URL: https://forecast.example.com/asia/shanghai?units=metric" in text
    assert "javascript:" not in text and "never shown" not in text
    sent = services.requests[-1]
    if provider == "searxng":
        assert sent.query["format"] == ["json"] and sent.query["q"] == ["今天上海的天气"]
    elif provider == "brave":
        assert sent.headers["accept"] == "application/json" and sent.query["q"] == ["今天上海的天气"]
    else:
        assert sent.body["query"] == "今天上海的天气"


@pytest.mark.parametrize("provider", ["bocha", "tavily", "brave"])
def test_a_wrong_key_is_one_line_naming_the_setting(
    settings: Settings, services: FakeSearchServices, provider: str
) -> None:
    wrong = configured(settings, services, provider, web_search_api_key="sk-wrong")
    text, final = run_tool(wrong, "web_search", {"query": "weather"})
    assert final["messages"][-1].status == "error"
    assert text.startswith("Error: web search failed:") and "WEB_SEARCH_API_KEY" in text
    assert "\n" not in text and "sk-wrong" not in text


@pytest.mark.parametrize(("provider", "status"), [("bocha", "403"), ("tavily", "432"), ("brave", "429")])
def test_quota_says_wait_or_answer_without_search(
    settings: Settings, services: FakeSearchServices, provider: str, status: str
) -> None:
    services.mode = "quota"
    text, final = run_tool(configured(settings, services, provider), "web_search", {"query": "weather"})
    assert final["messages"][-1].status == "error"
    assert f"quota or rate limit reached (HTTP {status}" in text and "without web search" in text


def test_no_key_and_no_provider_say_what_to_set(settings: Settings, services: FakeSearchServices) -> None:
    text, _ = run_tool(settings, "web_search", {"query": "weather"})
    assert "WEB_SEARCH_PROVIDER" in text and text.startswith("Error:")
    keyless = configured(settings, services, "tavily", web_search_api_key=None)
    text, _ = run_tool(keyless, "web_search", {"query": "weather"})
    assert "Tavily needs an API key: set WEB_SEARCH_API_KEY" in text
    assert services.requests == []


def test_timeout_is_one_line(settings: Settings, services: FakeSearchServices) -> None:
    services.mode = "slow"
    text, _ = run_tool(
        configured(settings, services, "bocha", web_search_timeout=0.5), "web_search", {"query": "weather"}
    )
    assert "Bocha did not answer within 0.5 s (WEB_SEARCH_TIMEOUT)" in text


def test_searxng_without_json_says_how_to_enable_it(settings: Settings, services: FakeSearchServices) -> None:
    services.mode = "no-json"
    text, _ = run_tool(configured(settings, services, "searxng"), "web_search", {"query": "weather"})
    assert "add json to search.formats" in text


def test_results_fit_the_content_budget(settings: Settings, services: FakeSearchServices) -> None:
    services.pages = [
        {"title": f"Page {n}", "url": f"https://site{n}.example.com/", "snippet": "长" * 5_000, "date": ""}
        for n in range(8)
    ]
    tight = load_settings(
        env_file=None,
        paths={"data_dir": settings.paths.data_dir},
        tools={"web_search_provider": "searxng", "searxng_url": services.base_url},
        documents={"max_chunk_content_size": 300, "max_result_content_size": 1_000},
    )
    text, _ = run_tool(tight, "web_search", {"query": "long pages"})
    assert len(text) < 1_400
    assert "长" * 298 + " …" in text and "长" * 300 not in text
    assert "more results left out: the content budget is spent" in text


def test_max_results_is_capped_by_the_setting(settings: Settings, services: FakeSearchServices) -> None:
    capped = configured(settings, services, "tavily", web_search_max_results=1)
    text, _ = run_tool(capped, "web_search", {"query": "weather", "max_results": 10})
    assert services.requests[-1].body["max_results"] == 1
    assert "1 web results" in text and "[2]" not in text


def test_result_urls_are_named_by_the_search_never_by_the_user(
    settings: Settings, services: FakeSearchServices
) -> None:
    """fetch_web reads a result's exact URL without asking; data the model adds to it asks."""
    text, final = run_tool(configured(settings, services, "bocha"), "web_search", {"query": "今天上海的天气"})
    assert "forecast.example.com" in text
    records = final["named_hosts"]
    assert {r["by"] for r in records} == {"search"}
    assert {r["host"] for r in records} == {"weather.example.cn", "forecast.example.com"}
    context = CallContext(named_hosts=NamedHosts.from_state(final))
    exact = {"url": "https://forecast.example.com/asia/shanghai?units=metric"}
    assert reaches_unnamed_host(exact, context) is None
    with_data = {"url": "https://forecast.example.com/asia/shanghai?units=metric&q=secret"}
    assert reaches_unnamed_host(with_data, context) is not None
    other_page = {"url": "https://forecast.example.com/collect"}
    assert reaches_unnamed_host(other_page, context) is not None
