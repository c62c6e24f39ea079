"""Text for PDF pages that have none: offline OCR of the rendered page (Chinese and English).

A scanned PDF is pictures of pages with no text layer, so extraction finds nothing on them.
Such pages are rendered by pdfium and read by RapidOCR (the `ocr` extra; config/install.py says how to add it):
PaddleOCR's PP-OCRv4 detection and recognition models for Chinese and English, run by
onnxruntime on the CPU. The models ship inside the `rapidocr_onnxruntime` wheel, so nothing
is downloaded at run time. Lines are put back in reading order (top to bottom, then left to
right) and joined as the text layer of a PDF would be.

OCR is slow (4 to 15 s a page on two cores, bench/ocr_quality.py) and can misread (the recognition model often
drops the space between English words), so the pages it read are marked: their chunks
carry `ocr: true`, and search results say so.

What keeps it from costing where it does not pay:

- a page is read only when it has no usable text layer *and* pictures cover at least
  MIN_IMAGE_COVERAGE of it (a scan covers the page; a cover's logo does not);
- the engine (a few hundred MB, seconds to load) runs in a process of its own
  (documents/ocr_worker.py), started once per agent process the first time a page needs
  it and ended after ENGINE_IDLE_SECONDS without OCR;
- a document has at most OCR_MAX_PAGES_PER_DOCUMENT pages read, and a tool call of the
  agent (search_file, read_file) at most OCR_MAX_PAGES_PER_CALL (`ocr_call`): a PDF of
  20,000 image pages costs minutes at most, never hours, and the note on what was left
  names the setting;
- a cancelled call (Ctrl-C) kills that process in the middle of its page: the CPU stops
  at once and the agent exits promptly, which a thread inside onnxruntime cannot do.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generalAgent.documents.pdf_tables import Run
from generalAgent.documents.pdfium_lock import PDFIUM

if TYPE_CHECKING:
    from generalAgent.documents.ocr_background import ScanJobs

# 2.5 x 72 = 180 dpi, near the 200 dpi of an office scanner: body text keeps its strokes,
# and a larger bitmap only costs time (the detector scales the page down anyway).
RENDER_SCALE = 2.5
# A recognised line below this confidence is more often noise (stains, stamps) than text.
MIN_CONFIDENCE = 0.5
# A page whose text layer has fewer non-blank characters than this is treated as scanned
# (page numbers and stray marks only).
MIN_TEXT_CHARS = 16

# Pictures must cover this share of a page without text for OCR to be worth it: a scanned
# page is one picture of the whole page (0.9 to 1.0), while the Debian Reference's cover
# logo, the image-only page that cost a 261-page manual 1.5 s of OCR for "C debian",
# covers 0.42 of its page.
MIN_IMAGE_COVERAGE = 0.5
# The loaded engine is dropped after this long without OCR: it holds a few hundred MB,
# and a chat that read one scan an hour ago should not keep them.
ENGINE_IDLE_SECONDS = 120.0
# How often a page being read checks whether the call was cancelled.
CANCEL_POLL_SECONDS = 0.05

# (pages done, pages to read): lets the CLI draw a progress bar.
PageProgress = Callable[[int, int], None]


class OcrUnavailable(Exception):
    """OCR is not installed; the message says how to install it."""


class OcrCancelled(Exception):
    """The call that started the OCR was cancelled (Ctrl-C)."""


def needs_ocr(text: str) -> bool:
    """True when a page's text layer is too thin to be the page's text."""
    # Asked of every page of every PDF: split/join run in C (a character loop in Python
    # cost a 261-page manual a tenth of its indexing).
    return len(text) < MIN_TEXT_CHARS or len("".join(text[: MIN_TEXT_CHARS * 64].split())) < MIN_TEXT_CHARS


def image_coverage(page: Any) -> float:
    """The share of a pypdfium2 page that its pictures cover (0 to 1; overlaps count once
    at most as the whole page, which is all the decision needs)."""
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    if width <= 0 or height <= 0:
        return 0.0
    covered = 0.0
    for picture in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2):
        left, bottom, right, top = picture.get_bounds()
        # Only the part on the page counts (a bleed image may extend past the edges).
        visible_width = min(right, width) - max(left, 0.0)
        visible_height = min(top, height) - max(bottom, 0.0)
        if visible_width > 0 and visible_height > 0:
            covered += visible_width * visible_height
        if covered >= width * height:
            return 1.0
    return covered / (width * height)


# -- limits of one call ------------------------------------------------------------------
@dataclass
class OcrCall:
    """What one call of the agent may spend on OCR: pages left, and its cancel event."""

    pages_left: int | None = None  # None: only the per-document limit applies
    cancelled: threading.Event | None = None
    setting: str = "OCR_MAX_PAGES_PER_CALL"
    # Pages of the document being read that OCR already read (page index -> text): taken
    # as they are, not read again nor counted. The background reading of a long scan
    # (ocr_background.py) passes its own, and every page it reads is added to it.
    known: dict[int, str] | None = None
    # Their pieces of text likewise (page index -> runs), so that a table on a page read
    # in an earlier step is still found as a table.
    known_runs: dict[int, list[Run]] | None = None
    # The background readings of the session making the call (ocr_background.py): the rest
    # of a long scan is read on there. None: nothing is read on after the call.
    scans: ScanJobs | None = None


_CALL: ContextVar[OcrCall | None] = ContextVar("generalagent_ocr_call", default=None)


@contextmanager
def ocr_call(
    max_pages: int | None,
    cancelled: threading.Event | None = None,
    *,
    known: dict[int, str] | None = None,
    known_runs: dict[int, list[Run]] | None = None,
    setting: str = "OCR_MAX_PAGES_PER_CALL",
    scans: ScanJobs | None = None,
) -> Iterator[OcrCall]:
    """Within this block, OCR reads at most `max_pages` pages in all and stops when
    `cancelled` is set. The agent's tools wrap each call in one (the user is waiting and
    did not ask for a long OCR); a command the user runs (`generalagent index`) does not.
    `scans`: the session's background readings, where the rest of a long scan is read on."""
    from generalAgent.search.embeddings import stopped_by

    call = OcrCall(max_pages, cancelled, setting, known, known_runs, scans)
    token = _CALL.set(call)
    try:
        with stopped_by(cancelled):  # and an embedding request in flight: Ctrl-C ends it too
            yield call
    finally:
        _CALL.reset(token)


def current_call() -> OcrCall | None:
    return _CALL.get()


def stop_if_cancelled(name: str) -> None:
    """`ReadingCancelled` when the running call was cancelled (Ctrl-C sets the event the
    tool passed to `ocr_call`): the long readings (indexing, its segmentation and
    embedding) call it between pieces, chunk batches and pages."""
    call = _CALL.get()
    if call is not None and call.cancelled is not None and call.cancelled.is_set():
        from generalAgent.documents.reading import ReadingCancelled

        raise ReadingCancelled(name)


# -- the engine --------------------------------------------------------------------------
def ocr_installed() -> bool:
    """Whether the `ocr` extra is installed (found without importing it: that takes seconds)."""
    import importlib.util

    return importlib.util.find_spec("rapidocr_onnxruntime") is not None


class OcrFailed(Exception):
    """The OCR process ended without answering (killed from outside, out of memory)."""


# Seconds the OCR process may take to load its models before it counts as failed.
ENGINE_START_SECONDS = 120.0


class SharedEngine:
    """The process's one OCR engine, in a process of its own (documents/ocr_worker.py):
    started on first use, ended after `idle_seconds` without use, killed the moment a
    call is cancelled. Pages are read one at a time (`lock`): onnxruntime already uses
    every core for one page."""

    def __init__(self, idle_seconds: float = ENGINE_IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self.lock = threading.Lock()  # held while a page is read
        self._guard = threading.Lock()  # guards `_process` and `_timer`
        self._process: subprocess.Popen[bytes] | None = None
        self._timer: threading.Timer | None = None
        self.loads = 0

    @property
    def loaded(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def read(self, image: Any, cancelled: threading.Event | None = None) -> list[list[Any]]:
        """RapidOCR's (box, text, confidence) lines for one grayscale page image.

        `OcrCancelled` as soon as `cancelled` is set (the engine's process is killed:
        its CPU stops at once); Ctrl-C (KeyboardInterrupt) kills it too."""
        with self.lock:
            self._stop_timer()
            try:
                process = self._started(cancelled)
                height, width = image.shape
                assert process.stdin is not None
                process.stdin.write(struct.pack("<II", height, width) + image.tobytes())
                process.stdin.flush()
                size = struct.unpack("<I", self._receive(process, 4, cancelled))[0]
                lines: list[list[Any]] = json.loads(self._receive(process, size, cancelled))
            except BaseException:
                self.release()  # cancelled, interrupted or failed: the process goes, now
                raise
            self._release_later()
            return lines

    def _started(self, cancelled: threading.Event | None) -> subprocess.Popen[bytes]:
        with self._guard:
            if self._process is not None and self._process.poll() is None:
                return self._process
            self._process = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("ocr_worker.py"))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
            )
            self.loads += 1
            process = self._process
        if self._receive(process, 1, cancelled, ENGINE_START_SECONDS) != b"R":
            raise OcrFailed("the OCR engine did not start")
        return process

    def _receive(
        self,
        process: subprocess.Popen[bytes],
        size: int,
        cancelled: threading.Event | None,
        timeout: float | None = None,
    ) -> bytes:
        """`size` bytes from the engine, waited for in slices so a cancel is seen at once."""
        assert process.stdout is not None
        stream = process.stdout
        deadline = None if timeout is None else time.monotonic() + timeout
        data = bytearray()
        while len(data) < size:
            if cancelled is not None and cancelled.is_set():
                raise OcrCancelled
            if deadline is not None and time.monotonic() > deadline:
                raise OcrFailed("the OCR engine did not answer in time")
            ready, _, _ = select.select([stream], [], [], CANCEL_POLL_SECONDS)
            if not ready:
                continue
            piece = os.read(stream.fileno(), size - len(data))
            if not piece:
                if cancelled is not None and cancelled.is_set():
                    raise OcrCancelled  # Ctrl-C in the terminal ended it first
                raise OcrFailed("the OCR engine stopped")
            data += piece
        return bytes(data)

    def _stop_timer(self) -> None:
        with self._guard:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _release_later(self) -> None:
        with self._guard:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.idle_seconds, self._release_if_idle)
            self._timer.daemon = True  # never keeps the agent alive
            self._timer.start()

    def _release_if_idle(self) -> None:
        if self.lock.acquire(blocking=False):  # a page being read keeps it
            try:
                self.release()
            finally:
                self.lock.release()

    def release(self) -> None:
        """End the engine's process (its memory goes with it); the next page starts another."""
        with self._guard:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        if process is not None:
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()


ENGINE = SharedEngine()
atexit.register(ENGINE.release)  # a page being read must not outlive the agent


def recognise_pages(
    pdf: Any,
    pages: Sequence[int],
    progress: PageProgress | None = None,
    cancelled: threading.Event | None = None,
    engine: SharedEngine = ENGINE,
    runs: dict[int, list[Run]] | None = None,
) -> dict[int, str]:
    """Page index -> the text OCR read on it, for the pages of `pdf` (a pypdfium2 document).
    With `runs`, each page's recognised pieces of text go there too, as runs in points
    (pdf_tables.Run, y up, their place in the page's text): the table finder reads a
    scanned page's table from them as it reads a text layer's.

    Raises `OcrCancelled` as soon as `cancelled` is set, between pages or in the middle
    of one, and `OcrFailed` when the engine's process ends without an answer."""
    texts: dict[int, str] = {}
    for done, index in enumerate(pages, start=1):
        if cancelled is not None and cancelled.is_set():
            raise OcrCancelled
        with PDFIUM:  # only while the page is rendered: the engine reads it outside
            page = pdf[index]
            try:
                bitmap = page.render(scale=RENDER_SCALE, grayscale=True)
                image = bitmap.to_numpy().copy()  # out of pdfium's buffer before it is closed
                bitmap.close()
            finally:
                page.close()
        texts[index], found = ocr_page(engine.read(image, cancelled), RENDER_SCALE, image.shape[0])
        if runs is not None:
            runs[index] = found
        if progress is not None:
            progress(done, len(pages))
    return texts


def lines_in_reading_order(found: Sequence[Sequence[Any]]) -> str:
    """RapidOCR's (box, text, confidence) lines as text, top to bottom and left to right.

    Boxes whose vertical centres lie within half a line height of each other are one line
    of the page, joined with a space; lines are separated by a line break.
    """
    return ocr_page(found)[0]


def ocr_page(found: Sequence[Sequence[Any]], scale: float = 1.0, height: int = 0) -> tuple[str, list[Run]]:
    """RapidOCR's lines as the page's text (`lines_in_reading_order`) and as runs: each
    box in points (pixels over `scale`; y up from the bottom of an image `height` pixels
    tall) with where its text stands in that text."""
    boxes = []
    for box, text, confidence in found:
        if float(confidence) < MIN_CONFIDENCE or not str(text).strip():
            continue
        ys = [float(point[1]) for point in box]
        xs = [float(point[0]) for point in box]
        boxes.append(((min(ys) + max(ys)) / 2, max(ys) - min(ys), min(xs), str(text).strip(), max(xs), ys))
    boxes.sort(key=lambda b: (b[0], b[2]))
    rows: list[list[tuple[Any, ...]]] = []
    for box in boxes:
        if rows and abs(box[0] - rows[-1][0][0]) <= max(box[1], rows[-1][0][1]) / 2:
            rows[-1].append(box)
        else:
            rows.append([box])
    text = ""
    runs: list[Run] = []
    for row in rows:
        if text:
            text += "\n"
        for n, (_, _, left, piece, right, ys) in enumerate(sorted(row, key=lambda b: b[2])):
            if n:
                text += " "
            runs.append(
                Run(
                    left / scale,
                    (height - max(ys)) / scale,
                    right / scale,
                    (height - min(ys)) / scale,
                    piece,
                    len(text),
                    len(text) + len(piece),
                )
            )
            text += piece
    return text, runs
