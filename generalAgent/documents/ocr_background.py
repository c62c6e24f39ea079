"""OCR of a long scan goes on in the background, page by page, after the call that began it.

One call of the agent reads at most OCR_MAX_PAGES_PER_CALL pages of a scan by OCR (the
user is waiting, and did not ask for minutes of OCR). The pages it read are indexed at
once; the rest of the scan, up to OCR_MAX_PAGES_PER_DOCUMENT, is read here, in a thread
of the agent's process, OCR_STEP_PAGES at a time: after each step the document is indexed
again (the pages already read are taken from memory, not read twice), so a search answers
from the pages read so far and says how far the reading has got (`ScanJob.note`).

The engine is the process's one shared engine (ocr.py): a page the user's own call needs
waits for the page being read here, never for the whole scan. A job ends when its pages
are read, when the file changes, or when the session that began it closes (its
`ScanJobs`, which the session's scope owns: tools/run_context.py) or the process ends.
The readings are the session's, not the process's: two editor sessions do not see each
other's, and a closed session leaves none behind.

A PDF's tables are read on the same way (kind TABLES): a chat's search indexes a PDF's
text first and answers from it; one step then reads the PDF with its tables and replaces
its chunks whole (documents/index.py, `tables_pending`).
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generalAgent.documents.pdf_tables import Run

# What a background reading reads: the rest of a scan by OCR, or a PDF's tables.
OCR = "ocr"
TABLES = "tables"

# Pages read between two updates of the index: each update re-indexes the document (its
# text pages cost milliseconds; the pages already read come from memory).
OCR_STEP_PAGES = 5


@dataclass
class ScanJob:
    """The background reading of one scan: pages read so far out of the pages to read."""

    path: Path
    file_size: int
    mtime_ns: int
    done: int = 0  # scanned pages read by OCR so far (by the call that began it, and here)
    total: int = 0  # scanned pages to read in all (within OCR_MAX_PAGES_PER_DOCUMENT)
    finished: bool = False
    error: str = ""
    texts: dict[int, str] = field(default_factory=dict)  # page index -> OCR text
    runs: dict[int, list[Run]] = field(default_factory=dict)  # page index -> its pieces of text
    cancelled: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    kind: str = OCR

    @property
    def reads_tables(self) -> bool:
        """A PDF's tables are read, not a scan's pages by OCR."""
        return self.kind == TABLES

    def note(self) -> str:
        """One sentence for a search answer: how far the reading has got."""
        if self.kind == TABLES:
            if self.error:
                return f"Reading the tables of {self.path.name} stopped: {self.error}"
            if self.finished:
                return ""
            return (
                f"The tables of {self.path.name} are being read in the background: this answer "
                "comes from its text; search again later for their rows, cited by table."
            )
        if self.error:
            return f"Reading the rest of {self.path.name} by OCR stopped: {self.error}"
        if self.finished:
            return ""
        return (
            f"OCR of {self.path.name} goes on in the background: {self.done:,} of its "
            f"{self.total:,} scanned pages read so far, and this answer comes from those; "
            "search again later for the rest."
        )


# Readings a registry keeps after they ended (their note says how they ended, once, in the
# next answer about the file); the oldest ended ones go first. Running ones always stay.
MAX_ENDED_JOBS = 32


class ScanJobs:
    """The background readings one session began (its SessionScope owns one: a session
    sees its own readings and its chat shows their progress; closing the session stops
    them). Readings are keyed by the scan's real path and bytes."""

    def __init__(self) -> None:
        self._jobs: dict[str, ScanJob] = {}
        self._lock = threading.Lock()
        # Held while one PDF's tables are read: a folder search may leave tens of them to
        # read, and they are read one after another, not tens of threads at once.
        self._reading_tables = threading.Lock()

    def job_for(self, path: Path) -> ScanJob | None:
        """The reading of the file at `path`, if one runs or ran for its current bytes."""
        if not self._jobs:  # the usual case, asked at every search: no path to resolve, no file to stat
            return None
        resolved = Path(path).resolve()
        with self._lock:
            job = self._jobs.get(str(resolved))
        if job is None:
            return None
        try:
            stat = resolved.stat()
        except OSError:
            return None
        return job if (stat.st_size, stat.st_mtime_ns) == (job.file_size, job.mtime_ns) else None

    def jobs(self) -> list[ScanJob]:
        """Every reading kept, running or ended, in the order they began (the chat shows
        their progress: cli/ocr_progress.py)."""
        with self._lock:
            return list(self._jobs.values())

    def start(
        self,
        path: Path,
        read_so_far: int,
        left: int,
        index_step: Callable[[ScanJob], Any],
        *,
        kind: str = OCR,
    ) -> ScanJob:
        """Read the `left` scanned pages of `path` in the background, OCR_STEP_PAGES at a time,
        calling `index_step(job)` for each step (it indexes the document again within an
        `ocr_call(OCR_STEP_PAGES, known=job.texts, known_runs=job.runs)` and returns the pages
        still left). A job already running for these bytes is returned as it is. `kind`:
        OCR, or TABLES (a PDF's tables: one step, `left` 1)."""
        resolved = Path(path).resolve()
        stat = resolved.stat()
        with self._lock:
            running = self._jobs.pop(str(resolved), None)
            same = running is not None and (running.file_size, running.mtime_ns) == (
                stat.st_size,
                stat.st_mtime_ns,
            )
            if running is not None and same and not running.error and running.kind == kind:
                self._jobs[str(resolved)] = running
                return running
            if running is not None:
                running.cancelled.set()
            job = ScanJob(
                resolved,
                stat.st_size,
                stat.st_mtime_ns,
                done=read_so_far,
                total=read_so_far + left,
                kind=kind,
            )
            self._jobs[str(resolved)] = job
            ended = [key for key, kept in self._jobs.items() if kept.finished]
            for key in ended[: max(0, len(ended) - MAX_ENDED_JOBS)]:
                del self._jobs[key]

        def run() -> None:
            try:
                if kind == TABLES:
                    with self._reading_tables:
                        if not job.cancelled.is_set():
                            index_step(job)
                            job.done = job.total
                    return
                while not job.cancelled.is_set():
                    left_now = index_step(job)
                    job.done = job.total - left_now if left_now else job.total
                    if not left_now:
                        break
            except Exception as exc:  # a damaged page, the engine gone: said in the next answer
                job.error = str(exc) or type(exc).__name__
            finally:
                job.finished = True
                job.texts, job.runs = {}, {}  # the index has them now

        # Registered again at each start, so it runs before pypdfium2's own exit handler
        # (registered later, on first use; handlers run last-registered first): a thread still
        # inside pdfium when the library is destroyed would crash the process.
        atexit.unregister(self.close)
        atexit.register(self.close)
        job.thread = threading.Thread(target=run, name=f"{kind}-{resolved.name}", daemon=True)
        job.thread.start()
        return job

    def close(self, timeout: float = 30.0) -> None:
        """Stop every reading and forget them (the session closed, or the process ends;
        the engine's process ends with the call it is in)."""
        with self._lock:
            jobs = list(self._jobs.values())
            self._jobs.clear()
        atexit.unregister(self.close)
        for job in jobs:
            job.cancelled.set()
        for job in jobs:
            if job.thread is not None and job.thread is not threading.current_thread():
                job.thread.join(timeout)
