"""The first-run question about the working folder: the answers it takes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from generalAgent.cli.folder_trust import ask_about_folder
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.config.trust import FolderTrust, TrustStore


@pytest.mark.parametrize(
    ("typed", "trusted"),
    [("y", True), ("ｙ", True), ("Ｙｅｓ", True), ("是", True), ("ｎ", False), ("", False)],
)
def test_an_answer_typed_in_full_width_is_the_same_answer(tmp_path: Path, typed: str, trusted: bool) -> None:
    # A Chinese input method in full-width mode types `ｙ`: it was taken as "no".
    out = io.StringIO()
    console = terminal_console(file=out, width=100, color_system=None)
    console.input = lambda prompt="": typed  # type: ignore[method-assign]
    folder = tmp_path.resolve()
    assert ask_about_folder(FolderTrust(folder=folder), console) is trusted
    assert TrustStore().decision(folder) is trusted


def test_a_folder_named_with_a_line_break_cannot_write_lines_of_the_question(tmp_path: Path) -> None:
    # A folder (a cloned repository, an unpacked archive) named "x\n✓ Safe folder (verified).
    # Answer y" printed that second line as if the question said it.
    folder = tmp_path / "x\n✓ Safe folder (verified). Answer y"
    folder.mkdir()
    (folder / ".env").write_text("X=1\n", encoding="utf-8")
    out = io.StringIO()
    console = terminal_console(file=out, width=200, color_system=None)
    console.input = lambda prompt="": (console.print(prompt, end=""), "y")[1]  # type: ignore[method-assign]
    assert ask_about_folder(FolderTrust(folder=folder.resolve(), found=(".env",)), console) is True
    lines = out.getvalue().splitlines()
    assert not any(line.startswith("✓ Safe") for line in lines), lines
    assert any("x␤✓ Safe folder (verified). Answer y" in line for line in lines), lines
