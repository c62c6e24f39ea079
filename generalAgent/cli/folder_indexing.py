"""The chat's view of the working folder being indexed in the background (documents/background_indexing.py).

Said the way scans read on by OCR are (cli/ocr_progress.py), never into an answer or the
line being typed: while the pass runs, the prompt's dim bottom toolbar shows its files
done ("Indexing this folder: 12/40 files"); when it ends, one line between turns says
what it did. `BackgroundWork` puts this view and the OCR one behind the one toolbar and
the one news feed the prompt follows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generalAgent.cli.ocr_progress import BackgroundView
from generalAgent.cli.terminal_text import one_line
from generalAgent.documents.background_indexing import FolderIndexer, IndexingProgress
from generalAgent.i18n import _, ngettext


class FolderIndexingView:
    """What the chat has said of one background pass: its toolbar while it runs, one
    line when it ends."""

    def __init__(self, indexer: FolderIndexer) -> None:
        self.indexer = indexer
        self._said_end = False

    def running(self) -> list[FolderIndexer]:
        return [] if self.indexer.progress().finished else [self.indexer]

    def has_news(self) -> bool:
        return not self._said_end and ended_line(self.indexer.progress()) is not None

    def news(self) -> list[tuple[str, str]]:
        line = None if self._said_end else ended_line(self.indexer.progress())
        if line is None:
            return []
        self._said_end = True
        return [line]

    def toolbar(self) -> str:
        progress = self.indexer.progress()
        if progress.finished:
            return ""
        if progress.tables_total:
            line = ngettext(
                "Reading this folder's tables: {done}/{total} PDF",
                "Reading this folder's tables: {done}/{total} PDFs",
                progress.tables_total,
            ).format(done=progress.tables_done, total=progress.tables_total)
        else:
            line = ngettext(
                "Indexing this folder: {done}/{total} file",
                "Indexing this folder: {done}/{total} files",
                progress.total,
            ).format(done=progress.done, total=progress.total)
        return f"{line} ({one_line(progress.current)})" if progress.current else line


def ended_line(progress: IndexingProgress) -> tuple[str, str] | None:
    """The line said when a pass ends: what it indexed, or why it stopped early; None while
    it runs, and when it found everything indexed already (nothing worth a line)."""
    if not progress.finished:
        return None
    if progress.stopped and progress.stopped not in {"cancelled", "time"}:
        return "yellow", _("Indexing this folder stopped: {error}; a search indexes what it needs.").format(
            error=progress.stopped
        )
    if progress.stopped:
        return "dim", _(
            "Indexing this folder paused at {done}/{total} files; a search goes on from there."
        ).format(done=progress.done, total=progress.total)
    if not progress.indexed:
        return None
    return "dim", ngettext(
        "Indexed {count} document of this folder in the background ({seconds:.0f} s); searches start from the index.",
        "Indexed {count} documents of this folder in the background ({seconds:.0f} s); searches start from the index.",
        progress.indexed,
    ).format(count=progress.indexed, seconds=progress.seconds)


class BackgroundWork:
    """Several background views as one: the prompt's toolbar joins theirs, news is theirs in order."""

    def __init__(self, views: Sequence[BackgroundView]) -> None:
        self.views = list(views)

    def running(self) -> list[Any]:
        return [job for view in self.views for job in view.running()]

    def news(self) -> list[tuple[str, str]]:
        return [line for view in self.views for line in view.news()]

    def has_news(self) -> bool:
        return any(view.has_news() for view in self.views)

    def toolbar(self) -> str:
        return " · ".join(text for view in self.views if (text := view.toolbar()))
