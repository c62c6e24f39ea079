"""Tab completion: commands, @names, #paths (Chinese names and sentences included)."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from generalAgent.cli.builtin_commands import translated_commands
from generalAgent.cli.completion import ChatCompleter, Name

NAMES = [
    Name("run_bash_command", "tool", "Run a shell command"),
    Name("researcher", "agent", "Reads and reports"),
    Name("pdf", "skill", "Work with PDF files"),
]


def completions(text: str, cwd: Path, names=NAMES) -> list[tuple[str, str]]:
    completer = ChatCompleter(translated_commands(), lambda: names, cwd=lambda: cwd)
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(c.text, c.display_meta_text) for c in found]


def test_slash_commands_complete_with_their_argument_hint_and_description(tmp_path: Path) -> None:
    assert completions("/re", tmp_path) == [
        ("/resume", "continue a session (a unique prefix of its id is enough; alone, pick one)"),
        ("/rename", "name this session (as /sessions and --resume show it)"),
        ("/retry", "send the last message again after an error"),
        ("/rewind", "go back to before an earlier message of yours (pick it); the files too, if you choose"),
    ]
    completer = ChatCompleter(translated_commands(), lambda: NAMES, cwd=lambda: tmp_path)
    found = completer.get_completions(Document("/re"), CompleteEvent(completion_requested=True))
    # The menu shows how each is typed; Tab inserts only the name.
    assert [c.display_text for c in found] == ["/resume [ID]", "/rename TITLE", "/retry", "/rewind [N]"]
    assert completions("say /re", tmp_path) == []  # only at the start of the line


def test_mentions_complete_tools_skills_and_agents_also_after_chinese(tmp_path: Path) -> None:
    assert completions("@r", tmp_path) == [
        ("researcher", "agent: Reads and reports"),
        ("run_bash_command", "tool: Run a shell command"),
    ]
    assert completions("请@p", tmp_path) == [("pdf", "skill: Work with PDF files")]
    assert completions("mail me at user@p", tmp_path) == []
    assert completions("@", tmp_path, names=[]) == []  # the agent is still loading


def test_paths_complete_relative_to_the_folder_inside_chinese_sentences(tmp_path: Path) -> None:
    (tmp_path / "报告2024.pdf").write_bytes(b"%PDF")
    (tmp_path / "报表").mkdir()
    (tmp_path / "my report.docx").write_bytes(b"PK")
    (tmp_path / ".secret").write_text("x")
    assert [text for text, _ in completions("总结#报", tmp_path)] == ["报告2024.pdf", "报表/"]
    assert [text for text, _ in completions("看看 #my", tmp_path)] == ['"my report.docx"']
    assert [text for text, _ in completions("#", tmp_path)] == ['"my report.docx"', "报告2024.pdf", "报表/"]
    assert [text for text, _ in completions("#.s", tmp_path)] == [".secret"]
    (tmp_path / "报表" / "三月.xlsx").write_bytes(b"PK")
    assert [text for text, _ in completions("#报表/", tmp_path)] == ["报表/三月.xlsx"]
    assert completions("#missing/x", tmp_path) == []
