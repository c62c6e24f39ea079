"""A lone Chinese question over English documents: the search asks the chat model for an English
rendering of the query (once per session), searches both, and the turn's usage counts the call.
The real CLI and the real ChatOpenAI client against the local model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import run_cli
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall

RENDERING_PROMPT_START = "You render search queries for a document search."
QUERY = "海象 迁徙 路线"
RENDERED = "walrus migration routes"


def is_rendering_request(messages: list[dict[str, Any]]) -> bool:
    return bool(messages) and str(messages[0].get("content", "")).startswith(RENDERING_PROMPT_START)


def _english_folder(workdir: Path, cli_env: dict[str, str]) -> None:
    """Twelve English reports in the working folder, trusted so the tools read it."""
    trusted = run_cli(["trust"], cli_env, workdir)
    assert trusted.returncode == 0, trusted.stderr
    library = workdir / "library"
    library.mkdir()
    for n in range(12):
        topic = "walrus migration routes along the Bering strait" if n == 7 else "general seabird counts"
        (library / f"report{n:02}.md").write_text(
            f"# Field report {n}\n\nThe survey team notes {topic} for the season of {2000 + n}.\n",
            encoding="utf-8",
        )


def test_a_lone_chinese_query_finds_the_english_passage_through_one_rendering(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    _english_folder(workdir, cli_env)

    def respond(request: RecordedRequest) -> Reply:
        if is_rendering_request(request.messages):
            return Reply(text=f"{RENDERED}\n", prompt_tokens=60, completion_tokens=5)
        answered = sum(1 for m in request.messages if m["role"] == "tool")
        if answered == 0:  # the model sends the user's words alone, as it often does
            return Reply(
                tool_calls=[ToolCall("search_folder", {"folder": "library", "query": QUERY})],
                prompt_tokens=1000,
                completion_tokens=10,
            )
        if answered == 1:  # the same words again, in one file: the session's rendering is reused
            return Reply(
                tool_calls=[ToolCall("search_file", {"file_path": "library/report07.md", "query": QUERY})],
                prompt_tokens=1100,
                completion_tokens=10,
            )
        return Reply(text="海象迁徙见 report07.md。", prompt_tokens=1200, completion_tokens=10)

    openai_server.responder = respond
    result = run_cli(
        ["-p", "哪份报告讲了海象迁徙？", "--output-format", "json"], cli_env, workdir, timeout=180
    )
    assert result.returncode == 0, result.stderr

    renderings = [r for r in openai_server.chat_requests if is_rendering_request(r.messages)]
    assert len(renderings) == 1  # two searches of the same words: one request
    (rendering,) = renderings
    assert "The documents are in English" in rendering.messages[0]["content"]
    assert rendering.messages[-1] == {"role": "user", "content": QUERY}
    assert "tools" not in rendering.body  # one short request, no tools offered

    answers = [m for m in openai_server.chat_requests[-1].messages if m["role"] == "tool"]
    folder_answer, file_answer = answers[0]["content"], answers[1]["content"]
    assert f'for "{QUERY}" or "{RENDERED}", best first' in folder_answer
    assert f'The query was also searched in English as "{RENDERED}"' in folder_answer
    first_document = folder_answer.index("## ")
    assert folder_answer[first_document:].startswith("## library/report07.md")
    assert "walrus migration routes along the Bering strait" in file_answer

    report = json.loads(result.stdout)
    # The rendering's tokens count in the turn: three answers of the model and the rendering.
    assert report["usage"]["model_calls"] == 4
    assert report["usage"]["input_tokens"] == 1000 + 1100 + 1200 + 60
    assert report["usage"]["output_tokens"] == 10 * 3 + 5


def test_no_rendering_is_asked_when_the_model_sent_an_english_phrasing(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    _english_folder(workdir, cli_env)
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall("search_folder", {"folder": "library", "query": [QUERY, "walrus migration"]})
            ]
        ),
        Reply(text="report07.md"),
    )
    result = run_cli(["-p", "哪份报告讲了海象迁徙？"], cli_env, workdir, timeout=180)
    assert result.returncode == 0, result.stderr
    assert not [r for r in openai_server.chat_requests if is_rendering_request(r.messages)]
    assert len(openai_server.chat_requests) == 2
    answer = openai_server.chat_requests[-1].messages[-1]["content"]
    assert "## library/report07.md" in answer and "also searched in English" not in answer


def test_search_knowledge_renders_a_lone_chinese_query_into_the_indexed_files_language(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    _english_folder(workdir, cli_env)
    indexed = run_cli(["index", "library"], cli_env, workdir, timeout=180)
    assert indexed.returncode == 0, indexed.stderr

    def respond(request: RecordedRequest) -> Reply:
        if is_rendering_request(request.messages):
            return Reply(text=f"{RENDERED}\n", prompt_tokens=60, completion_tokens=5)
        if not any(m["role"] == "tool" for m in request.messages):
            return Reply(
                tool_calls=[ToolCall("search_knowledge", {"query": QUERY, "domain": "documents"})],
                prompt_tokens=1000,
                completion_tokens=10,
            )
        return Reply(text="report07.md", prompt_tokens=1200, completion_tokens=10)

    openai_server.responder = respond
    result = run_cli(
        ["-p", "哪份报告讲了海象迁徙？", "--output-format", "json"], cli_env, workdir, timeout=180
    )
    assert result.returncode == 0, result.stderr
    (rendering,) = [r for r in openai_server.chat_requests if is_rendering_request(r.messages)]
    assert "The documents are in English" in rendering.messages[0]["content"]
    assert rendering.messages[-1] == {"role": "user", "content": QUERY}
    answer = next(m for m in openai_server.chat_requests[-1].messages if m["role"] == "tool")["content"]
    assert f'The query was also searched in English as "{RENDERED}"' in answer
    first = answer.index("[1] ")
    assert answer[first : answer.index("\n", first)].startswith("[1] report07.md"), answer[:600]
    report = json.loads(result.stdout)
    assert report["usage"]["model_calls"] == 3
    assert report["usage"]["input_tokens"] == 1000 + 1200 + 60
