"""Real documents for tests, written by the libraries that produce them in the wild.

PDFs come from reportlab: Chinese through the built-in STSong-Light CID font (no font file
needed; pdfium maps it back to Unicode), an encrypted one with reportlab's RC4, and a
"scanned" one that holds only a drawing.
"""

from __future__ import annotations

from pathlib import Path


def make_pdf(path: Path, pages: list[list[str]], *, password: str | None = None) -> Path:
    """A PDF with one list of lines per page; lines with Chinese use a CJK font."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    pdf = canvas.Canvas(str(path), encrypt=password)
    for lines in pages:
        y = 780
        for line in lines:
            cjk = any("\u4e00" <= ch <= "\u9fff" for ch in line)
            pdf.setFont("STSong-Light" if cjk else "Helvetica", 11)
            pdf.drawString(60, y, line)
            y -= 16
        pdf.showPage()
    pdf.save()
    return path


def make_scanned_pdf(path: Path) -> Path:
    """A PDF whose page is only a picture (a filled rectangle): no text layer."""
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path))
    pdf.rect(100, 100, 300, 400, fill=1)
    pdf.showPage()
    pdf.save()
    return path


def make_image_pdf(path: Path, lines: list[str]) -> Path:
    """A scanned page: `lines` typeset by reportlab, rendered to pixels by pdfium, and saved
    by Pillow as a PDF that holds only that picture (no text layer)."""
    import pypdfium2 as pdfium

    source = make_pdf(path.with_suffix(".source.pdf"), [lines])
    document = pdfium.PdfDocument(str(source))
    try:
        image = document[0].render(scale=200 / 72).to_pil().convert("L")
    finally:
        document.close()
    image.save(path, "PDF", resolution=200.0)
    source.unlink()
    return path


def make_docx(path: Path, heading: str, paragraphs: list[str], table: list[list[str]]) -> Path:
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    grid = document.add_table(rows=len(table), cols=len(table[0]))
    for r, row in enumerate(table):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    document.save(str(path))
    return path


def make_xlsx(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    workbook.save(str(path))
    return path


def make_pptx(path: Path, slides: list[tuple[str, str, str]]) -> Path:
    """Slides of (title, body, speaker notes)."""
    import pptx

    presentation = pptx.Presentation()
    layout = presentation.slide_layouts[1]  # title and content
    for title, body, notes in slides:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    presentation.save(str(path))
    return path
