"""The chat's view of scans read on by OCR in the background (documents/ocr_background.py).

A search of a long scan answers from its first pages and leaves the rest to a thread that
reads on while the user types. The chat says so the way a terminal tool would, without
ever writing into the model's streamed answer or the line being typed:

- a line when a reading begins and one when it ends ("now searchable"), printed between
  turns: before the prompt is drawn, or above it through prompt_toolkit when the reading
  ends while the user is at the prompt;
- while one runs and the prompt waits, a dim bottom toolbar with its pages read so far.

`OcrProgress` only reads the jobs' counters; nothing here waits for or stops a job.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application, get_app, run_in_terminal

from generalAgent.cli.terminal_text import one_line
from generalAgent.i18n import _, ngettext

if TYPE_CHECKING:
    from generalAgent.documents.ocr_background import ScanJob

# How often the prompt looks at the jobs while one runs: a step of OCR_STEP_PAGES pages
# takes seconds, so twice a second shows every step without costing anything.
POLL_SECONDS = 0.5
# The toolbar's look: no reverse video (prompt_toolkit's default), grey text.
TOOLBAR_STYLE = {"bottom-toolbar": "noreverse", "bottom-toolbar.text": "fg:ansibrightblack"}


def pages_read(job: ScanJob) -> str:
    """'OCR scan.pdf: 40/120 pages' ('tables of report.pdf'), on one line whatever the
    file's name holds."""
    name = one_line(job.path.name)
    if job.reads_tables:
        return _("tables of {name}").format(name=name)
    return ngettext("OCR {name}: {done}/{total} page", "OCR {name}: {done}/{total} pages", job.total).format(
        name=name, done=job.done, total=job.total
    )


class OcrProgress:
    """What the chat has said of each background reading: the lines still to print and the
    toolbar's text. `jobs` lists the session's readings (its scope's `ScanJobs.jobs`)."""

    def __init__(self, jobs: Callable[[], list[ScanJob]]) -> None:
        self._jobs = jobs
        # id(job) -> the job (kept, so the id stays its own) and what was said of it:
        # "started" or "ended".
        self._said: dict[int, tuple[ScanJob, str]] = {}

    def running(self) -> list[ScanJob]:
        return [job for job in self._jobs() if not job.finished]

    def news(self) -> list[tuple[str, str]]:
        """Lines not said yet, each (style, text), now counted as said: a reading that
        began, one that ended (a reading that began and ended between two looks is said
        once, as ended)."""
        lines = []
        for job, said, line in self._unsaid():
            self._said[id(job)] = (job, said)
            lines.append(line)
        return lines

    def has_news(self) -> bool:
        return bool(self._unsaid())

    def _unsaid(self) -> list[tuple[ScanJob, str, tuple[str, str]]]:
        unsaid = []
        for job in self._jobs():
            said = self._said.get(id(job), (job, ""))[1]
            if job.finished and said != "ended":
                unsaid.append((job, "ended", self._ended(job)))
            elif not job.finished and not said:
                if job.reads_tables:
                    began = _("Reading the tables of {name} in the background; its text is searchable now.")
                    line = began.format(name=one_line(job.path.name))
                else:
                    began = _("{progress}; reading on in the background, searchable as it goes.")
                    line = began.format(progress=pages_read(job))
                unsaid.append((job, "started", ("dim", line)))
        return unsaid

    @staticmethod
    def _ended(job: ScanJob) -> tuple[str, str]:
        name = job.path.name
        if job.reads_tables:
            if job.error:
                return "yellow", _("Reading the tables of {name} stopped: {error}").format(
                    name=name, error=job.error
                )
            return "dim", _("Tables of {name} read: their rows are searchable, cited by table.").format(
                name=name
            )
        if job.error:
            return "yellow", _("OCR of {name} stopped: {error}").format(name=name, error=job.error)
        return "dim", ngettext(
            "OCR of {name} done: {total} page read, now searchable.",
            "OCR of {name} done: {total} pages read, now searchable.",
            job.total,
        ).format(name=name, total=job.total)

    def toolbar(self) -> str:
        """The bottom toolbar's text: every running reading, '' when none runs."""
        return " · ".join(pages_read(job) for job in self.running())


class BackgroundView(Protocol):
    """What the prompt follows of a kind of background work: this module's OcrProgress,
    cli/folder_indexing.py's views."""

    def running(self) -> Sequence[Any]: ...
    def news(self) -> list[tuple[str, str]]: ...
    def has_news(self) -> bool: ...
    def toolbar(self) -> str: ...


def follow_at_prompt(progress: BackgroundView, say_news: Callable[[], None], prompt: PromptSession) -> None:
    """The prompt's pre_run: while a reading runs, keep its toolbar current and say when it
    ends, above the line being typed (prompt_toolkit redraws it after)."""
    if progress.running():
        app = get_app()
        app.create_background_task(_follow(progress, say_news, prompt, app))


async def _follow(
    progress: BackgroundView, say_news: Callable[[], None], prompt: PromptSession, app: Application[Any]
) -> None:
    shown = progress.toolbar()
    while shown:
        await asyncio.sleep(POLL_SECONDS)
        if progress.has_news():
            await run_in_terminal(say_news)
        if progress.toolbar() != shown:
            shown = progress.toolbar()
            if not shown:
                prompt.bottom_toolbar = None  # nothing left to show: no empty bar
            app.invalidate()
