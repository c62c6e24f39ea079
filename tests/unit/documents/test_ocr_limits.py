"""OCR only where it pays, and never without bound: real pdfium, the real RapidOCR engine.

A page is read only when it has no text layer and pictures cover enough of it; the
engine loads once per process and is dropped when idle; a document and a tool call read
at most their page limits, with a note naming the setting; a cancelled call stops at once.
Each test reads at most one page by OCR (seconds each on a busy machine).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest

from generalAgent.config.settings import load_settings
from generalAgent.documents import ocr
from generalAgent.documents.extract import extract_document, open_document
from generalAgent.documents.ocr import SharedEngine, image_coverage, ocr_call
from generalAgent.documents.reading import DocumentError
from tests.support.documents import make_long_scan, make_pdf

SCAN_LINES = ["Invoice number 4711", "Quarterly revenue grew by twenty percent."]


def document_settings(**values):
    return load_settings(env_file=None, documents=values).documents


def make_logo_cover_pdf(path: Path) -> Path:
    """A manual: a cover that is only a logo (a third of the page), then a page of text."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    logo = Image.new("L", (400, 400), 255)
    ImageDraw.Draw(logo).ellipse((20, 20, 380, 380), fill=40)
    pdf = canvas.Canvas(str(path))  # A4: 595 x 842
    pdf.drawImage(ImageReader(logo), 130, 300, 330, 330)  # 22% of the page
    pdf.showPage()
    pdf.setFont("Helvetica", 11)
    pdf.drawString(60, 780, "Chapter 1. Installing the system on a new machine.")
    pdf.showPage()
    pdf.save()
    return path


def coverage_of_first_page(path: Path) -> float:
    document = pdfium.PdfDocument(str(path))
    try:
        return image_coverage(document[0])
    finally:
        document.close()


def test_a_cover_logo_is_not_read_by_ocr_and_loads_no_engine(tmp_path: Path) -> None:
    path = make_logo_cover_pdf(tmp_path / "manual.pdf")
    assert 0.15 < coverage_of_first_page(path) < ocr.MIN_IMAGE_COVERAGE
    loads = ocr.ENGINE.loads
    document = extract_document(path, document_settings())
    assert [b.page for b in document.blocks] == [2]
    assert not any(b.ocr for b in document.blocks)
    assert ocr.ENGINE.loads == loads


def test_a_scanned_page_covers_its_page(tmp_path: Path) -> None:
    path = make_long_scan(tmp_path / "scan.pdf", 1, SCAN_LINES)
    assert coverage_of_first_page(path) == pytest.approx(1.0)


def test_the_document_limit_reads_the_first_pages_and_names_its_setting(tmp_path: Path) -> None:
    path = make_long_scan(tmp_path / "scan.pdf", 50, SCAN_LINES)
    stream = open_document(path, document_settings(ocr_max_pages_per_document=1))
    blocks = list(stream.blocks)
    assert [b.page for b in blocks] == [1] and blocks[0].ocr
    assert "4711" in blocks[0].text
    [note] = [said.english() for said in stream.reading.notes]  # the model's English
    assert "OCR_MAX_PAGES_PER_DOCUMENT=1" in note
    assert "49 pages (2–50) were not read" in note


def test_a_call_budget_is_shared_by_the_documents_it_reads(tmp_path: Path) -> None:
    first = make_long_scan(tmp_path / "first.pdf", 3, SCAN_LINES)
    second = make_long_scan(tmp_path / "second.pdf", 3, SCAN_LINES)
    settings = document_settings(ocr_max_pages_per_call=1)
    with ocr_call(settings.ocr_max_pages_per_call) as call:
        stream = open_document(first, settings)
        assert [b.page for b in stream.blocks] == [1]
        assert "OCR_MAX_PAGES_PER_CALL=1" in stream.reading.notes[0].english()
        assert call.pages_left == 0
        with pytest.raises(DocumentError, match=r"second.pdf has no text layer.*OCR_MAX_PAGES_PER_CALL=1"):
            extract_document(second, settings)


def test_no_budget_left_reads_nothing_and_says_which_setting(tmp_path: Path) -> None:
    path = make_long_scan(tmp_path / "scan.pdf", 2000, SCAN_LINES)
    loads = ocr.ENGINE.loads
    started = time.perf_counter()
    with ocr_call(0), pytest.raises(DocumentError) as raised:
        extract_document(path, document_settings(ocr_max_pages_per_call=0))
    assert "2,000 pages (1–2,000) were not read" in str(raised.value)
    assert "OCR_MAX_PAGES_PER_CALL=0" in str(raised.value)
    assert ocr.ENGINE.loads == loads
    assert time.perf_counter() - started < 30  # looking at 2,000 pages is cheap; reading them is not


def test_a_cancelled_call_stops_in_the_middle_of_a_page(tmp_path: Path) -> None:
    path = make_long_scan(tmp_path / "scan.pdf", 20, SCAN_LINES, dpi=300)
    cancelled = threading.Event()
    heard: list[tuple[str, int, int]] = []
    pressed: list[float] = []
    timer = threading.Timer(0.5, lambda: (pressed.append(time.perf_counter()), cancelled.set()))
    timer.start()
    with ocr_call(None, cancelled), pytest.raises(DocumentError, match="scan.pdf by OCR was cancelled"):
        extract_document(path, document_settings(), lambda *step: heard.append(step))
    # A page takes seconds (and the first also loads the engine): the wait ended at once, the
    # engine killed (below). Counted from the cancel, with room for a busy machine.
    assert time.perf_counter() - pressed[0] < 10
    assert heard == []
    assert not ocr.ENGINE.loaded  # the engine's process was killed: no page goes on burning CPU


def test_the_engine_loads_once_and_is_dropped_when_idle() -> None:
    engine = SharedEngine(idle_seconds=0.3)  # its own process, apart from the shared one
    blank = np.full((64, 64), 255, dtype=np.uint8)
    engine.read(blank)
    engine.read(blank)
    assert engine.loaded and engine.loads == 1
    deadline = time.monotonic() + 60
    while engine.loaded and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not engine.loaded
    engine.read(blank)
    assert engine.loads == 2
    engine.release()


def test_a_text_pdf_never_loads_the_engine(tmp_path: Path) -> None:
    path = make_pdf(
        tmp_path / "report.pdf", [["Revenue grew 12% year on year."], ["营收同比增长百分之十二。"]]
    )
    loads = ocr.ENGINE.loads
    document = extract_document(path, document_settings())
    assert len(document.blocks) == 2 and not any(b.ocr for b in document.blocks)
    assert ocr.ENGINE.loads == loads
