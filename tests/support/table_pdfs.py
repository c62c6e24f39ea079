"""PDFs with tables, written by reportlab's platypus (a producer the table finder was not
tuned on): prose, a caption, a table ruled all over, with horizontal rules only or with
none, long enough to continue on the next page, a running head and a "Page N" footer."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def make_table_pdf(
    path: Path,
    header: list[str],
    rows: list[list[Any]],
    *,
    style: str = "grid",
    repeat_header: bool = True,
    caption: str = "Table 1: Units by region",
    running_head: str = "Quarterly report 2024",
    paragraphs: int = 3,
) -> Path:
    """`style` is "grid" (every cell ruled), "booktabs" (rules above and below the header
    and below the last row) or "none"; a cell longer than 12 characters wraps."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Table, TableStyle

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))

    def page(canvas: Any, document: Any) -> None:
        canvas.setFont("Helvetica", 9)
        canvas.drawString(72, A4[1] - 40, running_head)
        canvas.drawString(72, 30, f"Page {document.page}")

    body = getSampleStyleSheet()["BodyText"]
    body.fontName = "STSong-Light"
    story: list[Any] = [
        Paragraph(
            f"Paragraph {n} of the report: prose about the figures below, long enough to wrap "
            "over a line or two of the page as a report's text does.",
            body,
        )
        for n in range(1, paragraphs + 1)
    ]
    story.append(Paragraph(caption, body))
    commands: list[tuple[Any, ...]] = [
        ("FONTNAME", (0, 0), (-1, -1), "STSong-Light"),
        ("FONTSIZE", (0, 0), (-1, -1), 9),
    ]
    if style == "grid":
        commands.append(("GRID", (0, 0), (-1, -1), 0.5, "black"))
    elif style == "booktabs":
        commands += [
            ("LINEABOVE", (0, 0), (-1, 0), 1, "black"),
            ("LINEBELOW", (0, 0), (-1, 0), 0.5, "black"),
            ("LINEBELOW", (0, -1), (-1, -1), 1, "black"),
        ]
    wrapped = ParagraphStyle("cell", parent=body, wordWrap="CJK")  # Chinese wraps between characters
    cells = [
        [Paragraph(str(c), wrapped) if len(str(c)) > 12 else str(c) for c in row] for row in [header, *rows]
    ]
    widths = [150] + [90] * (len(header) - 1)
    story.append(
        Table(cells, repeatRows=1 if repeat_header else 0, style=TableStyle(commands), colWidths=widths)
    )
    story.append(Paragraph("Closing remarks after the table.", body))
    SimpleDocTemplate(str(path), pagesize=A4).build(story, onFirstPage=page, onLaterPages=page)
    return path
