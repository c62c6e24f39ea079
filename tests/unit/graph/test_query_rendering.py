"""The chat model's rendering of a search query: asked once per session and language, its
answer cleaned to one bounded line, its usage reported, a failure leaving the query alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from generalAgent.config.settings import load_settings
from generalAgent.graph.query_rendering import MAX_RENDERING_CHARS, QueryRendering, rendering_of
from generalAgent.tools.run_context import SessionScope
from tests.support.scripted_model import Request, ScriptedChatModel

USAGE = {"input_tokens": 40, "output_tokens": 4, "total_tokens": 44}


def _rendering(responder: Any) -> tuple[QueryRendering, ScriptedChatModel]:
    model = ScriptedChatModel(responder=responder)
    return QueryRendering(model, load_settings(env_file=None).model), model


def test_each_query_is_asked_once_per_session_and_its_usage_reported(tmp_path: Path) -> None:
    rendering, model = _rendering(
        lambda request: AIMessage(content='"walrus migration"\n', usage_metadata=USAGE)
    )
    usage: list[dict[str, Any]] = []
    first, second = SessionScope("a", tmp_path), SessionScope("b", tmp_path)
    render = rendering.for_session(first)
    assert render("海象 迁徙", "en", usage.append) == "walrus migration"
    assert render("海象 迁徙", "en", usage.append) == "walrus migration"
    assert len(model.requests) == 1 and usage == [USAGE]
    system, user = model.requests[0].messages
    assert "The documents are in English" in str(system.content) and user.content == "海象 迁徙"
    assert rendering.for_session(second)("海象 迁徙", "en", usage.append) == "walrus migration"
    assert len(model.requests) == 2  # another session asks again: its own cache


def test_a_failed_or_empty_answer_gives_no_rendering_and_is_asked_again(tmp_path: Path) -> None:
    answers = iter([RuntimeError("503"), AIMessage(content="  \n"), AIMessage(content="log since boot")])

    def respond(request: Request) -> AIMessage:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    rendering, model = _rendering(respond)
    render = rendering.for_session(SessionScope("a", tmp_path))
    assert render("日志 启动", "en", lambda usage: None) is None
    assert render("日志 启动", "en", lambda usage: None) is None
    assert render("日志 启动", "en", lambda usage: None) == "log since boot"
    assert len(model.requests) == 3


def test_a_cancelled_turn_asks_nothing(tmp_path: Path) -> None:
    rendering, model = _rendering(lambda request: AIMessage(content="never"))
    scope = SessionScope("a", tmp_path)
    scope.cancelled.set()
    assert rendering.for_session(scope)("日志", "en", lambda usage: None) is None
    assert model.requests == []


def test_the_answer_is_its_first_line_unquoted_and_bounded() -> None:
    assert rendering_of("「log since boot」\nThis means ...") == "log since boot"
    assert rendering_of("\n\n  `journalctl -b`  ") == "journalctl -b"
    assert rendering_of("") == ""
    assert len(rendering_of("word " * 500)) <= MAX_RENDERING_CHARS
