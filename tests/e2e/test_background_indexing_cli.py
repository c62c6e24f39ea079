"""A chat started in a trusted folder indexes its documents while the user types, so the first
question's folder search indexes nothing; BACKGROUND_INDEXING=false leaves it to the search.
The real chat, the real ChatOpenAI client against the local model server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import ask, expect_prompt

pytestmark = pytest.mark.e2e

DOCUMENTS = 30


def _trusted_folder_of_reports(workdir: Path, cli_env: dict[str, str]) -> None:
    trusted = run_cli(["trust"], cli_env, workdir)
    assert trusted.returncode == 0, trusted.stderr
    reports = workdir / "reports"
    reports.mkdir()
    for n in range(DOCUMENTS):
        topic = "walrus migration along the Bering strait" if n == 11 else "seabird counts"
        (reports / f"report{n:02}.md").write_text(
            f"# Report {n}\n\nThe survey notes {topic}.\n", encoding="utf-8"
        )


def _search_then_answer(request: RecordedRequest) -> Reply:
    if request.messages[-1]["role"] == "tool":
        return Reply(text="See report11.md.")
    return Reply(tool_calls=[ToolCall("search_folder", {"folder": "reports", "query": "walrus migration"})])


def _indexed_documents(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "data" / "indexes.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]


def test_the_first_question_in_a_trusted_folder_pays_no_indexing(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    _trusted_folder_of_reports(workdir, cli_env)
    openai_server.responder = _search_then_answer
    child = spawn_chat()
    # Said above the prompt as the pass ends, while nobody has asked anything yet.
    child.expect(f"Indexed {DOCUMENTS} documents of this folder in the background")
    assert _indexed_documents(tmp_path) == DOCUMENTS
    assert openai_server.chat_requests == []
    expect_prompt(child)
    ask(child, "which report is about walruses?", "See report11.md")
    answer = openai_server.chat_requests[-1].messages[-1]["content"]
    assert f"{DOCUMENTS} document(s) searched in reports (languages: English)." in answer
    assert "newly indexed" not in answer
    assert "## reports/report11.md" in answer
    child.sendeof()
    child.expect(pexpect.EOF)


def test_with_background_indexing_off_the_first_search_indexes(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    _trusted_folder_of_reports(workdir, cli_env)
    openai_server.responder = _search_then_answer
    child = spawn_chat(env={**cli_env, "BACKGROUND_INDEXING": "false"})
    expect_prompt(child)
    ask(child, "which report is about walruses?", "See report11.md")
    answer = openai_server.chat_requests[-1].messages[-1]["content"]
    assert f"{DOCUMENTS} newly indexed" in answer
    child.sendeof()
    child.expect(pexpect.EOF)
