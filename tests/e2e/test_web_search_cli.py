"""`@web_search` through the real CLI and client, against local search services and the model server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.search_server import BOCHA_KEY, BRAVE_KEY, TAVILY_KEY, FakeSearchServices

pytestmark = pytest.mark.e2e

ANSWER = "今天上海多云转小雨，12~17℃ [1](https://weather.example.cn/shanghai)。"


@pytest.fixture
def services() -> Iterator[FakeSearchServices]:
    server = FakeSearchServices().start()
    yield server
    server.stop()


def backend_env(provider: str, services: FakeSearchServices) -> dict[str, str]:
    return {
        "searxng": {"WEB_SEARCH_PROVIDER": "searxng", "SEARXNG_URL": services.base_url},
        "bocha": {
            "WEB_SEARCH_PROVIDER": "bocha",
            "WEB_SEARCH_API_KEY": BOCHA_KEY,
            "WEB_SEARCH_BASE_URL": services.base_url + "/v1/web-search",
        },
        "tavily": {
            "WEB_SEARCH_PROVIDER": "tavily",
            "WEB_SEARCH_API_KEY": TAVILY_KEY,
            "WEB_SEARCH_BASE_URL": services.base_url + "/search",
        },
        "brave": {
            "WEB_SEARCH_PROVIDER": "brave",
            "WEB_SEARCH_API_KEY": BRAVE_KEY,
            "WEB_SEARCH_BASE_URL": services.base_url + "/res/v1/web/search",
        },
    }[provider]


@pytest.mark.parametrize("provider", ["searxng", "bocha", "tavily", "brave"])
def test_web_search_answers_with_citations(
    openai_server: ScriptedOpenAIServer,
    services: FakeSearchServices,
    workdir: Path,
    cli_env: dict[str, str],
    provider: str,
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("web_search", {"query": "今天上海的天气"})]),
        Reply(text=ANSWER),
    )
    env = {**cli_env, **backend_env(provider, services)}
    result = run_cli(["-p", "@web_search 今天上海的天气"], env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ANSWER
    assert 'web_search(query="今天上海的天气")' in result.stderr
    assert "web_search" in openai_server.chat_requests[0].tool_names
    answer = openai_server.chat_requests[1].messages[-1]
    assert answer["role"] == "tool"
    # The results reach the model framed as data, with the URLs to cite.
    assert answer["content"].startswith('<tool_output tool="web_search">')
    assert "URL: https://weather.example.cn/shanghai" in answer["content"]
    assert len(services.requests) == 1


def test_a_deepseek_user_with_a_search_key_gets_results(
    services: FakeSearchServices, workdir: Path, cli_env: dict[str, str]
) -> None:
    with ScriptedOpenAIServer(dialect="deepseek", strict_history=True) as server:
        server.add(
            Reply(tool_calls=[ToolCall("web_search", {"query": "Shanghai weather today"})]),
            Reply(text="Light rain this afternoon [2](https://forecast.example.com/asia/shanghai)."),
        )
        env = {
            **cli_env,
            **backend_env("tavily", services),
            "OPENAI_BASE_URL": server.base_url,
            "MODEL_PROVIDER": "deepseek",
            "MODEL_NAME": "deepseek-chat",
        }
        result = run_cli(["-p", "What is the weather in Shanghai today?"], env, workdir)
        assert result.returncode == 0, result.stderr
        assert "forecast.example.com" in result.stdout
        assert "Shanghai weather &amp;" not in server.chat_requests[1].messages[-1]["content"]
        assert "[2] Shanghai weather & forecast" in server.chat_requests[1].messages[-1]["content"]
        assert services.requests[0].body["query"] == "Shanghai weather today"


def test_quota_is_one_line_to_the_user_and_an_error_to_the_model(
    openai_server: ScriptedOpenAIServer, services: FakeSearchServices, workdir: Path, cli_env: dict[str, str]
) -> None:
    services.mode = "quota"
    openai_server.add(
        Reply(tool_calls=[ToolCall("web_search", {"query": "weather"})]),
        Reply(text="Web search is out of quota; from what I know, Shanghai is mild in November."),
    )
    result = run_cli(["-p", "weather in Shanghai?"], {**cli_env, **backend_env("bocha", services)}, workdir)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    failure = [line for line in result.stderr.splitlines() if "quota or rate limit reached" in line]
    assert len(failure) == 1, result.stderr
    tool_answer = openai_server.chat_requests[1].messages[-1]
    assert tool_answer["content"].startswith("Error: web search failed: Bocha quota or rate limit reached")


def test_doctor_tests_the_backend(
    services: FakeSearchServices, workdir: Path, cli_env: dict[str, str]
) -> None:
    ok = run_cli(["doctor"], {**cli_env, **backend_env("tavily", services)}, workdir)
    assert "web search  Tavily answered a test search in" in ok.stdout, ok.stdout
    assert TAVILY_KEY not in ok.stdout
    wrong = {**backend_env("tavily", services), "WEB_SEARCH_API_KEY": "tvly-wrong"}
    bad = run_cli(["doctor"], {**cli_env, **wrong}, workdir)
    assert bad.returncode == 1
    assert "✗ web search  Tavily refused the request (HTTP 401" in bad.stdout


def test_native_search_on_glm_lists_the_pages_under_the_answer(
    workdir: Path, cli_env: dict[str, str]
) -> None:
    pages = [
        {
            "title": "上海天气预报",
            "link": "https://weather.example.cn/shanghai",
            "content": "多云转小雨",
            "publish_date": "2026-11-26",
            "refer": "ref_1",
        }
    ]
    with ScriptedOpenAIServer(dialect="glm", strict_history=True) as server:
        server.add(Reply(text="今天上海多云转小雨[ref_1]。", web_sources=pages))
        env = {
            **cli_env,
            "OPENAI_BASE_URL": server.base_url,
            "MODEL_PROVIDER": "glm",
            "MODEL_NAME": "glm-4.7",
            "WEB_SEARCH_PROVIDER": "native",
        }
        result = run_cli(["-p", "今天上海的天气"], env, workdir)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (
            "今天上海多云转小雨[ref_1]。\n\nSources:\n"
            "[1] 上海天气预报 (2026-11-26) https://weather.example.cn/shanghai\n"
        )
        tools = server.chat_requests[0].body["tools"]
        assert {
            "type": "web_search",
            "web_search": {"enable": True, "search_engine": "search_std", "search_result": True},
        } in tools
        assert "now" in server.chat_requests[0].tool_names  # the agent's own tools are still offered
        assert not server.refusals


def test_native_search_on_kimi_answers_without_a_tool_line(workdir: Path, cli_env: dict[str, str]) -> None:
    with ScriptedOpenAIServer(dialect="kimi", strict_history=True) as server:
        server.add(
            Reply(tool_calls=[ToolCall("$web_search", {"search_result": {"search_id": "s-1"}})]),
            Reply(text="今天上海多云转小雨。"),
        )
        env = {
            **cli_env,
            "OPENAI_BASE_URL": server.base_url,
            "MODEL_PROVIDER": "kimi",
            "MODEL_NAME": "kimi-k2.6",
            "WEB_SEARCH_PROVIDER": "native",
        }
        result = run_cli(["-p", "今天上海的天气"], env, workdir)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "今天上海多云转小雨。\n"
        assert "$web_search" not in result.stderr  # nothing for the user to approve or see run
        assert len(server.chat_requests) == 2 and not server.refusals


def test_a_search_result_with_a_password_added_asks(
    openai_server: ScriptedOpenAIServer, services: FakeSearchServices, workdir: Path, cli_env: dict[str, str]
) -> None:
    """The exact URL a search returned is fetched without a question; the same URL with
    `user:pass@` put in by the model asks (so -p refuses it): records compare URLs without
    that part, and it was sent unasked before."""
    found = "https://weather.example.cn/shanghai"
    with_password = "https://admin:hunter2@weather.example.cn/shanghai"
    openai_server.add(
        Reply(tool_calls=[ToolCall("web_search", {"query": "weather"})]),
        Reply(
            tool_calls=[ToolCall("fetch_web", {"url": found}), ToolCall("fetch_web", {"url": with_password})]
        ),
        Reply(text="Done."),
    )
    result = run_cli(
        ["-p", "@web_search weather in Shanghai?"], {**cli_env, **backend_env("searxng", services)}, workdir
    )
    assert result.returncode == 3, result.stderr  # the fetch it had to ask about was refused
    assert "user name or password written in the URL to weather.example.cn" in result.stderr
    answers = sorted(
        m["content"] for m in openai_server.chat_requests[2].messages if m.get("role") == "tool"
    )[-2:]
    # the search result itself went out (and found no network here); the other was refused
    assert answers[0].startswith("Error: cannot resolve weather.example.cn"), answers
    assert answers[1].startswith("Error: refused by the user: fetch_web was not run"), answers


def test_web_search_is_offered_only_with_a_service_set(
    openai_server: ScriptedOpenAIServer, services: FakeSearchServices, workdir: Path, cli_env: dict[str, str]
) -> None:
    """Without WEB_SEARCH_PROVIDER the model was offered web_search on every turn, a call that
    could only fail; now it is offered once a service is set, or on @web_search."""
    openai_server.add(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    assert run_cli(["-p", "hello"], cli_env, workdir).returncode == 0
    assert run_cli(["-p", "hello"], {**cli_env, **backend_env("searxng", services)}, workdir).returncode == 0
    assert run_cli(["-p", "@web_search hello"], cli_env, workdir).returncode == 0
    offered = ["web_search" in request.tool_names for request in openai_server.chat_requests]
    assert offered == [False, True, True]
    assert "read_file" in openai_server.chat_requests[0].tool_names
