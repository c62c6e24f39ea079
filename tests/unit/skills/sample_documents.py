"""Real PDFs for the skill tests, built with reportlab: text, Chinese, tables, outline, encryption.

Chinese text uses the CID font STSong-Light, which every PDF reader resolves without embedding a
font file, so the tests need no font on disk and still exercise CJK text extraction.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas
from reportlab.platypus import Table, TableStyle

CJK_FONT = "STSong-Light"
pdfmetrics.registerFont(UnicodeCIDFont(CJK_FONT))

PAGE_1_TEXT = "Annual review: revenue grew in every region"
PAGE_2_TEXT = "第二章 季度报告：北区收入增长"
PAGE_3_TITLE = "Sales by region"
TABLE_ROWS = [["Region", "Q1", "Q2"], ["North", "10", "12"], ["南区", "7", "9"]]


def _draw_table(pdf: canvas.Canvas, rows: list[list[str]], *, ruled: bool, top: float) -> None:
    table = Table(rows, colWidths=[120, 80, 80])
    style = [("FONTNAME", (0, 0), (-1, -1), CJK_FONT), ("FONTSIZE", (0, 0), (-1, -1), 11)]
    if ruled:
        style.append(("GRID", (0, 0), (-1, -1), 0.8, colors.black))
    table.setStyle(TableStyle(style))
    _, height = table.wrapOn(pdf, 400, 400)
    table.drawOn(pdf, 72, top - height)


def write_report_pdf(path: Path, *, encrypt: StandardEncryption | str | None = None) -> Path:
    """Three pages: English text, Chinese text, a ruled table; with an outline (bookmarks)."""
    pdf = canvas.Canvas(str(path), pagesize=A4, encrypt=encrypt)
    pdf.setTitle("Annual review 2024")
    pdf.setAuthor("Finance team")
    pdf.setFont("Helvetica", 12)
    pdf.drawString(72, 760, PAGE_1_TEXT)
    pdf.bookmarkPage("intro")
    pdf.addOutlineEntry("Introduction", "intro", level=0)
    pdf.showPage()
    pdf.setFont(CJK_FONT, 12)
    pdf.drawString(72, 760, PAGE_2_TEXT)
    pdf.bookmarkPage("quarter")
    pdf.addOutlineEntry("季度报告", "quarter", level=0)
    pdf.showPage()
    pdf.setFont("Helvetica", 12)
    pdf.drawString(72, 760, PAGE_3_TITLE)
    _draw_table(pdf, TABLE_ROWS, ruled=True, top=740)
    pdf.showPage()
    pdf.save()
    return path


def write_text_pdf(path: Path, pages: list[str]) -> Path:
    """One line of (Latin) text per page: easy to tell pages apart after a split or merge."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    for text in pages:
        pdf.setFont("Helvetica", 12)
        pdf.drawString(72, 760, text)
        pdf.showPage()
    pdf.save()
    return path


def write_borderless_table_pdf(path: Path) -> Path:
    """A table laid out in columns with no ruling lines: only --strategy text finds it."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    _draw_table(pdf, TABLE_ROWS, ruled=False, top=760)
    pdf.showPage()
    pdf.save()
    return path


def write_scanned_pdf(path: Path) -> Path:
    """A page holding only a picture, like a scan: no text layer at all."""
    picture = Image.new("RGB", (400, 200), "white")
    for x in range(40, 360):
        picture.putpixel((x, 100), (0, 0, 0))
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.drawImage(ImageReader(picture), 72, 500, 400, 200)
    pdf.showPage()
    pdf.save()
    return path


def write_corrupt_pdf(path: Path) -> Path:
    """Starts like a PDF, then nothing a reader can use."""
    path.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\ngarbage\n")
    return path
