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
