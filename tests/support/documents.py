"""Real documents for tests, written by the libraries that produce them in the wild.

PDFs come from reportlab: Chinese through the built-in STSong-Light CID font (no font file
needed; pdfium maps it back to Unicode), an encrypted one with reportlab's RC4, and a
"scanned" one that holds only a drawing.
"""

from __future__ import annotations

from pathlib import Path


def make_pdf(
    path: Path, pages: list[list[str]], *, password: str | None = None, size: int = 11, leading: int = 16
) -> Path:
    """A PDF with one list of lines per page; lines with Chinese use a CJK font. A tab in a
    line starts the next cell 130 points to the right (aligned, unruled columns)."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    pdf = canvas.Canvas(str(path), encrypt=password)
    for lines in pages:
        y = 780
        for line in lines:
            for column, cell in enumerate(line.split("\t")):
                cjk = any("\u4e00" <= ch <= "\u9fff" for ch in cell)
                pdf.setFont("STSong-Light" if cjk else "Helvetica", size)
                pdf.drawString(60 + 130 * column, y, cell)
            y -= leading
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
    return _scanned(make_pdf(path.with_suffix(".source.pdf"), [lines]), path)


def make_scanned_table_pdf(path: Path, lines: list[str], rows: list[list[str]]) -> Path:
    """A scanned page of a table: `lines` of prose, then `rows` in aligned columns 130
    points apart (unruled), scanned as make_image_pdf's page is."""
    typeset = [*lines, "", *["\t".join(row) for row in rows]]
    return _scanned(make_pdf(path.with_suffix(".source.pdf"), [typeset], size=12, leading=20), path)


def _scanned(source: Path, path: Path) -> Path:
    """The first page of `source` rendered by pdfium at 200 dpi and saved by Pillow at `path`
    as a PDF holding only that picture; `source` is removed."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(source))
    try:
        image = document[0].render(scale=200 / 72).to_pil().convert("L")
    finally:
        document.close()
    image.save(path, "PDF", resolution=200.0)
    source.unlink()
    return path


def make_figure_pdf(path: Path, caption: str) -> Path:
    """A report: a page of text, then a page that is a chart (a picture over half the page)
    with its caption, as a PDF exported from a slide or a paper has them."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    chart = Image.new("RGB", (600, 400), "white")
    draw = ImageDraw.Draw(chart)
    for n, height in enumerate((120, 260, 200, 330)):
        draw.rectangle((60 + n * 130, 380 - height, 150 + n * 130, 380), fill=(40, 90, 160))
    pdf = canvas.Canvas(str(path))  # A4: 595 x 842
    pdf.setFont("Helvetica", 11)
    for n in range(30):
        pdf.drawString(
            60, 780 - n * 16, f"Line {n} of the introduction: sales, customers and plans for the year."
        )
    pdf.showPage()
    pdf.drawImage(ImageReader(chart), 50, 300, 500, 450)  # 45% of the page
    pdf.setFont("Helvetica", 11)
    pdf.drawString(60, 260, caption)
    pdf.showPage()
    pdf.save()
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


def make_long_scan(path: Path, pages: int, lines: list[str], *, dpi: int = 150) -> Path:
    """A scan of `pages` pages that all show the same picture of `lines` (no text layer).

    Written by hand: one image object that every page draws, so thousands of pages take a
    few kilobytes each, as a crafted file would (a 3 MB PDF of 20,000 image pages)."""
    import zlib

    import pypdfium2 as pdfium

    source = make_pdf(path.with_suffix(".source.pdf"), [lines])
    document = pdfium.PdfDocument(str(source))
    try:
        image = document[0].render(scale=dpi / 72).to_pil().convert("L")
    finally:
        document.close()
    source.unlink()
    width, height = image.size
    pixels = zlib.compress(image.tobytes())
    drawing = b"q 595 0 0 842 0 0 cm /Scan Do Q"
    bodies: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(f"{5 + n} 0 R".encode() for n in range(pages))
        + f"] /Count {pages} >>".encode(),
        f"<< /Type /XObject /Subtype /Image /Width {width} /Height {height} /ColorSpace /DeviceGray"
        f" /BitsPerComponent 8 /Filter /FlateDecode /Length {len(pixels)} >>\nstream\n".encode()
        + pixels
        + b"\nendstream",
        f"<< /Length {len(drawing)} >>\nstream\n".encode() + drawing + b"\nendstream",
    ]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Scan 3 0 R >> >> /Contents 4 0 R >>"
    bodies += [page] * pages
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(bodies) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(bodies) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


REGIONS = ["North", "South", "East", "West", "华北"]
ROWS = 50_000  # the sales sheet's data rows (tests and bench/query_table.py)


def make_sales_sheet(path: Path, rows: int = ROWS) -> Path:
    """A title row, a merged group header over two quarter columns, `rows` data rows, and
    a formula column never calculated (openpyxl writes no cached values)."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Sales"
    sheet.append(["Sales report 2024"])
    sheet.append(["Region", "Product", "Revenue", None, "Total"])
    sheet.merge_cells("C2:D2")
    sheet.append([None, None, "Q1", "Q2", None])
    for i in range(rows):
        sheet.append([REGIONS[i % 5], f"p{i % 37}", i % 100, (i * 7) % 100, f"=C{i + 4}+D{i + 4}"])
    workbook.create_sheet("Notes").append(["written by hand"])
    workbook.save(str(path))
    return path
