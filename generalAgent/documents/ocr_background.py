"""OCR of a long scan goes on in the background, page by page, after the call that began it.

One call of the agent reads at most OCR_MAX_PAGES_PER_CALL pages of a scan by OCR (the
user is waiting, and did not ask for minutes of OCR). The pages it read are indexed at
once; the rest of the scan, up to OCR_MAX_PAGES_PER_DOCUMENT, is read here, in a thread
of the agent's process, OCR_STEP_PAGES at a time: after each step the document is indexed
again (the pages already read are taken from memory, not read twice), so a search answers
from the pages read so far and says how far the reading has got (`ScanJob.note`).

The engine is the process's one shared engine (ocr.py): a page the user's own call needs
waits for the page being read here, never for the whole scan. A job ends when its pages
are read, when the file changes, or when the process ends (`stop_all`, at exit).
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generalAgent.documents.pdf_tables import Run

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

    def note(self) -> str:
        """One sentence for a search answer: how far the reading has got."""
        if self.error:
            return f"Reading the rest of {self.path.name} by OCR stopped: {self.error}"
        if self.finished:
            return ""
        return (
            f"OCR of {self.path.name} goes on in the background: {self.done:,} of its "
            f"{self.total:,} scanned pages read so far, and this answer comes from those; "
            "search again later for the rest."
        )


_JOBS: dict[str, ScanJob] = {}
_LOCK = threading.Lock()


def job_for(path: Path) -> ScanJob | None:
    """The background reading of the file at `path`, if one runs or ran for its current bytes."""
    if not _JOBS:  # the usual case, asked at every search: no path to resolve, no file to stat
        return None
    resolved = Path(path).resolve()
    with _LOCK:
        job = _JOBS.get(str(resolved))
    if job is None:
        return None
    try:
        stat = resolved.stat()
    except OSError:
        return None
    return job if (stat.st_size, stat.st_mtime_ns) == (job.file_size, job.mtime_ns) else None


def jobs() -> list[ScanJob]:
    """Every background reading of this process, running or ended, in the order they began
    (the chat shows their progress: cli/ocr_progress.py)."""
    with _LOCK:
        return list(_JOBS.values())


def start(
    path: Path,
    read_so_far: int,
    left: int,
    index_step: Callable[[ScanJob], Any],
) -> ScanJob:
    """Read the `left` scanned pages of `path` in the background, OCR_STEP_PAGES at a time,
    calling `index_step(job)` for each step (it indexes the document again within an
    `ocr_call(OCR_STEP_PAGES, known=job.texts, known_runs=job.runs)` and returns the pages still left). A job
    already running for these bytes is returned as it is."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    with _LOCK:
        running = _JOBS.get(str(resolved))
        same = running is not None and (running.file_size, running.mtime_ns) == (
            stat.st_size,
            stat.st_mtime_ns,
        )
        if running is not None and same and not running.error:
            return running
        if running is not None:
            running.cancelled.set()
        job = ScanJob(resolved, stat.st_size, stat.st_mtime_ns, done=read_so_far, total=read_so_far + left)
        _JOBS[str(resolved)] = job

    def run() -> None:
        try:
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
    atexit.unregister(stop_all)
    atexit.register(stop_all)
    job.thread = threading.Thread(target=run, name=f"ocr-{resolved.name}", daemon=True)
    job.thread.start()
    return job


def stop_all(timeout: float = 30.0) -> None:
    """Stop every background reading (the engine's process ends with the call it is in)."""
    with _LOCK:
        jobs = list(_JOBS.values())
    for job in jobs:
        job.cancelled.set()
    for job in jobs:
        if job.thread is not None and job.thread is not threading.current_thread():
            job.thread.join(timeout)
