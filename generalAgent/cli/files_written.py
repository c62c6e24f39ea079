"""The files the agent wrote, named with their real paths: at the end of a turn, at /quit and after -p.

What the agent writes lands in the working folder (after the user approved the diff) or in
the session's outputs/, a folder the user would not find alone; so every file written is
named where the user looks, with the path to open it."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from generalAgent.cli.terminal_text import one_line
from generalAgent.i18n import _


def files_written_lines(paths: list[Path]) -> list[str]:
    """One heading line and one line per file; nothing when no file was written."""
    if not paths:
        return []
    return [
        _("Files written ({count}):").format(count=len(paths)),
        *(f"  {one_line(str(path))}" for path in paths),
    ]


def print_files_written(console: Console, paths: list[Path]) -> None:
    for line in files_written_lines(paths):
        console.print(f"[green]{escape(line)}[/]", highlight=False)
