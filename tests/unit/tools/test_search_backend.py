"""What the web search backends share (tools/search_backends/backend.py): Bocha's and
Tavily's one request shape, a JSON POST with a Bearer key, against the local services as
strict as their documentation; and one reading of a service's list of results."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from generalAgent.tools.search_backends import bocha, tavily
from generalAgent.tools.search_backends.backend import (
    BackendConfig,
    WebResult,
    WebSearchError,
    post_json,
    results_from,
)
from tests.support.search_server import BOCHA_KEY, TAVILY_KEY, FakeSearchServices

ROUTES = {"Bocha": ("/v1/web-search", BOCHA_KEY), "Tavily": ("/search", TAVILY_KEY)}


@pytest.fixture
def services() -> Iterator[FakeSearchServices]:
    server = FakeSearchServices().start()
    yield server
    server.stop()


def config(key: str | None, base_url: str | None = None, max_results: int = 5) -> BackendConfig:
    return BackendConfig(api_key=key, base_url=base_url, timeout=10, max_results=max_results)


@pytest.mark.parametrize("service", ["Bocha", "Tavily"])
def test_one_post_carries_the_key_and_the_json_body_of_either_service(
    services: FakeSearchServices, service: str
) -> None:
    path, key = ROUTES[service]
    body = (
        {"query": "上海天气", "count": 2} if service == "Bocha" else {"query": "上海天气", "max_results": 2}
    )
    answer = post_json(service, services.base_url + path, config(key), body)
    assert isinstance(answer, dict) and answer  # the service accepted it: its strict checks passed
    sent = services.requests[-1]
    assert sent.method == "POST" and sent.path == path
    assert sent.headers["authorization"] == f"Bearer {key}"
    assert sent.headers["content-type"].startswith("application/json")
    assert sent.body == body


def test_without_a_key_nothing_is_sent(services: FakeSearchServices) -> None:
    with pytest.raises(WebSearchError, match="Bocha needs an API key: set WEB_SEARCH_API_KEY"):
        post_json("Bocha", services.base_url + "/v1/web-search", config(None), {"query": "x"})
    assert services.requests == []


def test_a_refused_key_is_the_services_reason_in_one_line(services: FakeSearchServices) -> None:
    with pytest.raises(WebSearchError) as refused:
        post_json("Tavily", services.base_url + "/search", config("tvly-wrong"), {"query": "x"})
    assert str(refused.value) == (
        "Tavily refused the request (HTTP 401: Unauthorized: missing or invalid API key.); "
        "check WEB_SEARCH_API_KEY"
    )


@pytest.mark.parametrize(("backend", "service"), [(bocha, "Bocha"), (tavily, "Tavily")])
def test_an_answer_that_is_not_an_object_is_one_line(
    services: FakeSearchServices, backend: object, service: str
) -> None:
    services.mode = "not-an-object"
    path, key = ROUTES[service]
    with pytest.raises(WebSearchError, match=f"^{service} answered with JSON that is not an object$"):
        backend.search("weather", config(key, services.base_url + path))  # type: ignore[attr-defined]


def test_results_from_keeps_objects_with_a_web_url_up_to_the_limit() -> None:
    items = [
        {"t": "One", "u": "https://one.example/a"},
        "not an object",
        {"t": "Script", "u": "javascript:alert(1)"},
        {"t": "Two", "u": "https://two.example/b", "s": "<b>bold</b> text", "d": "2026-11-26T06:00:00+08:00"},
        {"t": "Three", "u": "https://three.example/c"},
    ]
    found = results_from(
        items, config(None, max_results=2), lambda i: (i["t"], i["u"], i.get("s"), i.get("d"))
    )
    assert found == [
        WebResult("One", "https://one.example/a", ""),
        WebResult("Two", "https://two.example/b", "bold text", "2026-11-26"),
    ]
    assert results_from({"results": items}, config(None), lambda i: (i["t"], i["u"], None, None)) == []
