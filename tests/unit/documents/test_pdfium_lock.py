"""Every pdfium call the product makes holds documents/pdfium_lock.PDFIUM: pdfium is not
thread-safe, and the background OCR reading renders pages while a tool call or the chat
reads other PDFs. Each raw pdfium function is wrapped to record a call made without it."""

from __future__ import annotations

import ctypes
import threading
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from generalAgent.agent.chat_input import count_pages
from generalAgent.config.settings import load_settings
from generalAgent.documents.extract import extract_document
from generalAgent.documents.ocr import recognise_pages
from generalAgent.documents.pdfium_lock import PDFIUM
from generalAgent.tools.builtin.view_page import _render_pdf_page
from tests.support.documents import make_figure_pdf, make_pdf, make_scanned_pdf


@pytest.fixture
def unguarded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the pdfium functions called without the lock (in calling order)."""
    import pypdfium2.raw as raw

    calls: list[str] = []
    for name in dir(raw):
        function = getattr(raw, name)
        if isinstance(function, ctypes._CFuncPtr):  # the library's functions, not its types

            def checked(*args: Any, _function: Any = function, _name: str = name) -> Any:
                if not PDFIUM._is_owned():  # type: ignore[attr-defined]
                    calls.append(_name)
                return _function(*args)

            monkeypatch.setattr(raw, name, checked)
    return calls


class Engine:
    """An OCR engine that sees no text, and notes whether the lock was held while it read."""

    def __init__(self) -> None:
        self.read_under_lock: list[bool] = []

    def read(self, image: Any, cancelled: threading.Event | None) -> list[Any]:
        self.read_under_lock.append(PDFIUM._is_owned())  # type: ignore[attr-defined]
        assert image.sum() > 0  # a copy of the page that outlived its bitmap
        return []


def test_the_guard_sees_an_unguarded_call(tmp_path: Path, unguarded: list[str]) -> None:
    import pypdfium2

    pypdfium2.PdfDocument(str(make_pdf(tmp_path / "a.pdf", [["one"]]))).close()
    assert "FPDF_LoadDocument" in unguarded or "FPDF_LoadCustomDocument" in unguarded


def test_reading_rendering_and_counting_hold_the_lock(tmp_path: Path, unguarded: list[str]) -> None:
    report = make_figure_pdf(tmp_path / "report.pdf", "Figure 2: Revenue by region")
    settings = load_settings(env_file=None)
    blocks = extract_document(report, settings.documents).blocks
    assert [b.figure for b in blocks] == [False, True]  # outline, text and pictures were read
    png, text, total = _render_pdf_page(partial(open, mode="rb"), report, 2, None)
    assert png.startswith(b"\x89PNG") and "Figure 2" in text and total == 2
    assert count_pages(report, "pdf") == 2
    assert unguarded == []


def test_ocr_renders_under_the_lock_and_reads_outside_it(tmp_path: Path, unguarded: list[str]) -> None:
    import pypdfium2

    scan = make_scanned_pdf(tmp_path / "scan.pdf")
    engine = Engine()
    with PDFIUM:
        pdf = pypdfium2.PdfDocument(str(scan))
    try:
        assert recognise_pages(pdf, [0], engine=engine) == {0: ""}  # type: ignore[arg-type]
    finally:
        with PDFIUM:
            pdf.close()
    assert engine.read_under_lock == [False]  # a long scan never holds pdfium while it is read
    assert unguarded == []
