"""PDFs set in two or three columns, drawn across the page a line at a time (the left
column's line, then the next column's line at the same height), as some producers write
them: the PDF's own text order then interleaves the columns. Written by reportlab's canvas;
Chinese through the built-in STSong-Light CID font (no font file needed)."""

from __future__ import annotations

from pathlib import Path

PAGE_WIDTH, PAGE_HEIGHT = 595.0, 842.0  # A4, points
MARGIN = 54.0
GUTTER = 18.0
SIZE = 10.0
LEADING = 13.0


def wrap(text: str, font: str, width: float) -> list[str]:
    """`text` cut into lines no wider than `width`: at spaces, or between any two Chinese
    characters when it has no spaces."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    pieces = text.split(" ") if " " in text else list(text)
    joiner = " " if " " in text else ""
    lines: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}{joiner}{piece}" if current else piece
        if current and stringWidth(candidate, font, SIZE) > width:
            lines.append(current)
            current = piece
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def make_column_pdf(
    path: Path,
    text: str,
    *,
    columns: int = 2,
    chinese: bool = False,
    title: str = "",
    table: list[list[str]] | None = None,
    rows_above_table: int = 12,
) -> Path:
    """One page: `title` across the top, then `text` flowing down the first column, on
    into the next. With `table`, the columns stop after `rows_above_table` lines, the table
    is laid across the page and the text goes on in columns under it. Every row of lines
    is drawn across the page at once."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    font = "Helvetica"
    if chinese:
        pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
        font = "STSong-Light"
    width = (PAGE_WIDTH - 2 * MARGIN - (columns - 1) * GUTTER) / columns
    lines = wrap(text, font, width)
    pdf = canvas.Canvas(str(path), pagesize=(PAGE_WIDTH, PAGE_HEIGHT))
    y = PAGE_HEIGHT - MARGIN
    if title:
        pdf.setFont("STSong-Light" if chinese else "Helvetica-Bold", 16)
        pdf.drawCentredString(PAGE_WIDTH / 2, y, title)
        y -= 2.5 * LEADING

    def band(band_lines: list[str], top: float) -> float:
        rows = -(-len(band_lines) // columns)
        pdf.setFont(font, SIZE)
        for row in range(rows):
            for column in range(columns):
                index = column * rows + row
                if index < len(band_lines):
                    pdf.drawString(MARGIN + column * (width + GUTTER), top - row * LEADING, band_lines[index])
        return top - rows * LEADING

    if table is None:
        band(lines, y)
    else:
        above = lines[: rows_above_table * columns]
        y = band(above, y) - LEADING
        # The table's columns are set so that none of its cells crosses the page's gutter:
        # only the layout can tell it from two columns of prose.
        cell_x = [MARGIN, MARGIN + 130, PAGE_WIDTH / 2 + GUTTER, PAGE_WIDTH / 2 + GUTTER + 120]
        pdf.setFont(font, SIZE)
        for row in table:
            for x, cell in zip(cell_x, row, strict=False):
                pdf.drawString(x, y, cell)
            y -= LEADING
        band(lines[len(above) :], y - LEADING)
    pdf.save()
    return path


def make_offset_columns_pdf(path: Path, text: str, *, offset: float = LEADING / 2) -> Path:
    """Two columns typeset on their own: the second's lines `offset` points lower than the
    first's, drawn across the page from the top line down (whichever column it is in), as
    a producer that sorts its text by height writes them."""
    from reportlab.pdfgen import canvas

    width = (PAGE_WIDTH - 2 * MARGIN - GUTTER) / 2
    lines = wrap(text, "Helvetica", width)
    half = (len(lines) + 1) // 2
    top = PAGE_HEIGHT - MARGIN
    placed = [(top - LEADING * n, MARGIN, line) for n, line in enumerate(lines[:half])]
    placed += [
        (top - offset - LEADING * n, MARGIN + width + GUTTER, line) for n, line in enumerate(lines[half:])
    ]
    pdf = canvas.Canvas(str(path), pagesize=(PAGE_WIDTH, PAGE_HEIGHT))
    pdf.setFont("Helvetica", SIZE)
    for y, x, line in sorted(placed, key=lambda item: (-item[0], item[1])):
        pdf.drawString(x, y, line)
    pdf.save()
    return path


def make_sidebar_pdf(path: Path, text: str, note: str, *, main_width: float = 330.0) -> Path:
    """The text in one wide column and, in a box to its right, a note in a smaller size on
    its own baselines, drawn across the page from the top line down."""
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    lines = wrap(text, "Helvetica", main_width)
    box_left = MARGIN + main_width + 24
    box_right = PAGE_WIDTH - MARGIN
    small, small_leading = 8.5, 11.0
    note_lines: list[str] = []
    for word in note.split(" "):  # wrapped at the note's own size
        candidate = f"{note_lines[-1]} {word}" if note_lines else word
        if note_lines and stringWidth(candidate, "Helvetica", small) <= box_right - box_left - 12:
            note_lines[-1] = candidate
        else:
            note_lines.append(word)
    top = PAGE_HEIGHT - MARGIN
    placed = [(top - LEADING * n, MARGIN, SIZE, line) for n, line in enumerate(lines)]
    placed += [(top - 10 - small_leading * n, box_left + 6, small, line) for n, line in enumerate(note_lines)]
    pdf = canvas.Canvas(str(path), pagesize=(PAGE_WIDTH, PAGE_HEIGHT))
    pdf.setLineWidth(0.8)
    box_bottom = top - 10 - small_leading * len(note_lines) - 4
    pdf.rect(box_left, box_bottom, box_right - box_left, top + 4 - box_bottom)
    for y, x, size, line in sorted(placed, key=lambda item: (-item[0], item[1])):
        pdf.setFont("Helvetica", size)
        pdf.drawString(x, y, line)
    pdf.save()
    return path
