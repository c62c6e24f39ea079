"""The progress bar of a long command (index, search of a folder, embedding) on stderr.

What it is at, a bar, done of total and the time so far; `rate` adds a column for a
task's `rate` field (chunks/s or pages/s of a large document). Transient: it is gone once
the work is, and the lines printed meanwhile stay.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)


def progress_bar(console: Console, *, rate: bool = False) -> Progress:
    """A transient bar on `console`; with `rate`, every task must be added with `rate=""`."""
    columns: list[ProgressColumn] = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
    if rate:
        columns.append(TextColumn("{task.fields[rate]}"))
    columns.append(TimeElapsedColumn())
    return Progress(*columns, console=console, transient=True)
