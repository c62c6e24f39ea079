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
