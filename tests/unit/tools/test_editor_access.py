"""The editor's files and terminals (tools/editor.py) as the workspace and run_bash_command use them.

Only the user's own files go through the editor, and only what it offers; a command in its
terminal gets the same environment as a local one (the agent's keys left out) and ends
in the same answers (exit status, timeout, cancel).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from generalAgent.tools.builtin.run_bash_command import run_in_editor
from generalAgent.tools.editor import CommandOutcome
from generalAgent.tools.errors import ToolError
from generalAgent.tools.text_files import NotText
from generalAgent.tools.workspace import WorkingFolders, Workspace


class RecordingEditor:
    """An editor holding buffers in memory, and a terminal that answers from a script."""

    def __init__(
        self, reads: bool = True, writes: bool = True, outcome: CommandOutcome | None = None
    ) -> None:
        self.reads_files, self.writes_files, self.runs_commands = reads, writes, outcome is not None
        self.buffers: dict[Path, str] = {}
        self.read: list[Path] = []
        self.written: list[tuple[Path, str]] = []
        self.outcome = outcome
        self.commands: list[tuple[str, list[str], Path, float]] = []

    def read_text(self, path: Path) -> str:
        self.read.append(path)
        return self.buffers[path]

    def write_text(self, path: Path, text: str) -> None:
        self.written.append((path, text))
        self.buffers[path] = text

    def run_command(
        self, call_id: str, argv: Sequence[str], cwd: Path, timeout: float, cancelled: threading.Event
    ) -> CommandOutcome:
        self.commands.append((call_id, list(argv), cwd, timeout))
        assert self.outcome is not None
        return self.outcome


def workspace(tmp_path: Path, editor: RecordingEditor) -> tuple[Workspace, Path]:
    folder = (tmp_path / "project").resolve()
    folder.mkdir()
    folders = WorkingFolders(start=folder, readable=True)
    return Workspace.for_session(tmp_path / "workspaces", "s1", folders=folders, editor=editor), folder


def test_the_users_files_are_read_and_written_through_the_editor(tmp_path: Path) -> None:
    editor = RecordingEditor()
    space, folder = workspace(tmp_path, editor)
    notes = folder / "notes.md"
    notes.write_text("on disk\n", encoding="utf-8")
    editor.buffers[notes] = "unsaved\n"
    assert space.read_text(space.resolve("notes.md")) == "unsaved\n"
    assert space.write_text(space.resolve("notes.md", for_writing=True), "改了\n") == len("改了\n".encode())
    assert editor.written == [(notes, "改了\n")]
    assert notes.read_text(encoding="utf-8") == "on disk\n"  # the editor saves it, not the agent


def test_workspace_files_stay_local(tmp_path: Path) -> None:
    editor = RecordingEditor()
    space, _ = workspace(tmp_path, editor)
    result = space.resolve("outputs/r.md", for_writing=True)
    space.write_text(result, "local\n")
    assert space.read_text(result) == "local\n" and result.read_text(encoding="utf-8") == "local\n"
    assert editor.read == [] and editor.written == []


def test_what_the_editor_does_not_offer_is_done_locally(tmp_path: Path) -> None:
    editor = RecordingEditor(reads=False, writes=False)
    space, folder = workspace(tmp_path, editor)
    (folder / "a.md").write_text("disk\n", encoding="utf-8")
    assert space.read_text(space.resolve("a.md")) == "disk\n"
    space.write_text(space.resolve("a.md", for_writing=True), "new\n")
    assert (folder / "a.md").read_text(encoding="utf-8") == "new\n" and editor.read == editor.written == []


def test_a_binary_file_is_refused_before_the_editor_is_asked(tmp_path: Path) -> None:
    editor = RecordingEditor()
    space, folder = workspace(tmp_path, editor)
    (folder / "logo.png").write_bytes(b"\x89PNG")
    with pytest.raises(NotText):
        space.read_text(space.resolve("logo.png"))
    assert editor.read == []


def run(
    tmp_path: Path, outcome: CommandOutcome, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, RecordingEditor]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-0123456789")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    editor = RecordingEditor(outcome=outcome)
    answer = run_in_editor(editor, "call_1", "make test", tmp_path, 30, threading.Event(), ("PATH", "LANG"))
    return answer, editor


def test_a_command_in_the_editors_terminal_gets_only_the_allowed_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer, editor = run(tmp_path, CommandOutcome(output="2 failed\n", exit_code=1), monkeypatch)
    assert answer == "exit status 1 (failed)\n2 failed"
    call_id, argv, cwd, timeout = editor.commands[0]
    assert (call_id, cwd, timeout) == ("call_1", tmp_path, 30)
    assert argv[:2] == ["env", "-i"] and argv[-3:] == ["bash", "-c", "make test"]
    assert "LANG=zh_CN.UTF-8" in argv and f"WORKSPACE={tmp_path}" in argv
    assert not any("sk-secret" in word or word.startswith("OPENAI_API_KEY=") for word in argv)


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (CommandOutcome(output="", exit_code=0), "exit status 0, no output"),
        (
            CommandOutcome(output="tail\n", exit_code=0, truncated=True),
            "exit status 0\n[… the start of the output was dropped …]\ntail",
        ),
        (CommandOutcome(output="x", signal="SIGTERM"), "stopped by signal SIGTERM\nx"),
    ],
)
def test_how_a_command_ended_is_what_the_model_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: CommandOutcome, expected: str
) -> None:
    assert run(tmp_path, outcome, monkeypatch)[0] == expected


@pytest.mark.parametrize(
    ("outcome", "words"),
    [
        (CommandOutcome(output="half", timed_out=True), "timed out after 30 s"),
        (CommandOutcome(output="", cancelled=True), "cancelled"),
    ],
)
def test_a_killed_command_is_a_tool_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: CommandOutcome, words: str
) -> None:
    with pytest.raises(ToolError, match=words):
        run(tmp_path, outcome, monkeypatch)
