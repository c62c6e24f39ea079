"""A folder of 200 documents searched from the chat: the real CLI, the real ChatOpenAI client
against the local model server, and the search_folder tool on the session's uploads."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import run_cli
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall

DOCUMENTS = 200
ANSWER = 137


def test_a_folder_of_200_documents_is_searchable_from_the_chat(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # A first turn lists the workspace, which makes the session's folders.
    openai_server.add(Reply(tool_calls=[ToolCall("list_workspace_files", {})]), Reply(text="Empty."))
    first = run_cli(["-p", "what is in my workspace?"], cli_env, workdir)
    assert first.returncode == 0, first.stderr
    (workspace,) = (tmp_path / "data" / "workspaces").iterdir()
    library = workspace / "uploads" / "library"
    library.mkdir(parents=True)
    for n in range(DOCUMENTS):
        topic = "walrus migration routes along the Bering strait" if n == ANSWER else "general seabird counts"
        (library / f"report{n:03}.md").write_text(
            f"# Field report {n}\n\nSurvey {n} notes {topic} for season {2000 + n % 20}.\n", encoding="utf-8"
        )

    def respond(request: RecordedRequest) -> Reply:
        if request.messages[-1]["role"] == "tool":
            return Reply(text="海象迁徙见 report137.md。")
        query = ["海象 迁徙 路线", "walrus migration routes"]
        return Reply(tool_calls=[ToolCall("search_folder", {"folder": "uploads/library", "query": query})])

    openai_server.responder = respond
    second = run_cli(["-p", "哪份报告讲了海象迁徙？", "--resume"], cli_env, workdir, timeout=180)
    assert second.returncode == 0, second.stderr
    assert "report137.md" in second.stdout
    answer = openai_server.chat_requests[-1].messages[-1]
    assert answer["role"] == "tool"
    assert answer["content"].startswith('<tool_output tool="search_folder">')
    assert (
        f"{DOCUMENTS} document(s) searched in uploads/library (languages: English) — {DOCUMENTS} newly indexed."
        in answer["content"]
    )
    assert f"## uploads/library/report{ANSWER:03}.md (markdown, English text)" in answer["content"]
    first_document = answer["content"].index("## ")
    assert answer["content"][first_document:].startswith(f"## uploads/library/report{ANSWER:03}.md")
