"""Text for PDF pages that have none: offline OCR of the rendered page (Chinese and English).

A scanned PDF is pictures of pages with no text layer, so extraction finds nothing on them.
Such pages are rendered by pdfium and read by RapidOCR (`pip install 'generalAgent[ocr]'`):
PaddleOCR's PP-OCRv4 detection and recognition models for Chinese and English, run by
onnxruntime on the CPU. The models ship inside the `rapidocr_onnxruntime` wheel, so nothing
is downloaded at run time. Lines are put back in reading order (top to bottom, then left to
right) and joined as the text layer of a PDF would be.

OCR is slow (4 to 15 s a page on two cores, bench/ocr_quality.py) and can misread (the recognition model often
drops the space between English words), so the pages it read are marked: their chunks
carry `ocr: true`, and search results say so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# 2.5 x 72 = 180 dpi, near the 200 dpi of an office scanner: body text keeps its strokes,
# and a larger bitmap only costs time (the detector scales the page down anyway).
RENDER_SCALE = 2.5
# A recognised line below this confidence is more often noise (stains, stamps) than text.
MIN_CONFIDENCE = 0.5
# A page whose text layer has fewer non-blank characters than this is treated as scanned
# (page numbers and stray marks only).
MIN_TEXT_CHARS = 16

# (pages done, pages to read): lets the CLI draw a progress bar.
PageProgress = Callable[[int, int], None]


class OcrUnavailable(Exception):
    """OCR is not installed; the message says how to install it."""


def needs_ocr(text: str) -> bool:
    """True when a page's text layer is too thin to be the page's text."""
    return sum(1 for ch in text if not ch.isspace()) < MIN_TEXT_CHARS


def load_engine() -> Any:
    """The RapidOCR engine with the models of the installed package (no download)."""
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError:
        raise OcrUnavailable(
            "OCR is not installed: pip install 'generalAgent[ocr]' (offline Chinese and English models)"
        ) from None
    return RapidOCR()


def recognise_pages(pdf: Any, pages: Sequence[int], progress: PageProgress | None = None) -> dict[int, str]:
    """Page index -> the text OCR read on it, for the pages of `pdf` (a pypdfium2 document)."""
    engine = load_engine()
    texts: dict[int, str] = {}
    for done, index in enumerate(pages, start=1):
        page = pdf[index]
        try:
            bitmap = page.render(scale=RENDER_SCALE, grayscale=True)
            image = bitmap.to_numpy()
        finally:
            page.close()
        found, _ = engine(image)
        texts[index] = lines_in_reading_order(found or [])
        if progress is not None:
            progress(done, len(pages))
    return texts


def lines_in_reading_order(found: Sequence[Sequence[Any]]) -> str:
    """RapidOCR's (box, text, confidence) lines as text, top to bottom and left to right.

    Boxes whose vertical centres lie within half a line height of each other are one line
    of the page, joined with a space; lines are separated by a line break.
    """
    boxes = []
    for box, text, confidence in found:
        if float(confidence) < MIN_CONFIDENCE or not str(text).strip():
            continue
        ys = [point[1] for point in box]
        xs = [point[0] for point in box]
        boxes.append(((min(ys) + max(ys)) / 2, max(ys) - min(ys), min(xs), str(text).strip()))
    boxes.sort()
    rows: list[list[tuple[float, float, float, str]]] = []
    for box in boxes:
        if rows and abs(box[0] - rows[-1][0][0]) <= max(box[1], rows[-1][0][1]) / 2:
            rows[-1].append(box)
        else:
            rows.append([box])
    return "\n".join(" ".join(text for *_, text in sorted(row, key=lambda b: b[2])) for row in rows)
