"""A folder holding a secret outside the workspace, and links swapped in after a check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from generalAgent.tools.workspace import Workspace

SECRET = "TOP-SECRET-7f3a9c outside the workspace"


def folder_with_a_secret(tmp_path: Path) -> Path:
    """A folder outside the workspace with a secret under the names the tests read."""
    folder = tmp_path / "outside"
    folder.mkdir()
    for name in ("notes.md", "report.txt"):
        (folder / name).write_text(SECRET + "\n", encoding="utf-8")
    return folder


def swap_after_the_check(
    monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None], step: str = "display"
) -> None:
    """Run `swap` once, right after the tool's first call of Workspace.`step`: the race an
    attacker wins by swapping a path component for a symlink between the path check and
    the opening. "display" is the last step the tools take before opening the file;
    "resolve" is the check itself."""
    checked = getattr(Workspace, step)
    pending = [swap]

    def step_then_swap(self: Workspace, *args: object, **kwargs: object) -> object:
        result = checked(self, *args, **kwargs)
        while pending:
            pending.pop()()
        return result

    monkeypatch.setattr(Workspace, step, step_then_swap)


def folder_swapped_for_a_link(folder: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        folder.rename(folder.with_name(folder.name + ".moved"))
        folder.symlink_to(target, target_is_directory=True)

    return swap


def file_swapped_for_a_link(file: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        file.unlink()
        file.symlink_to(target)

    return swap
