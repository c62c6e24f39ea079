"""Word and PowerPoint files (DOCX, PPTX), and the check every Office archive passes first.

python-docx and python-pptx are imported inside the readers: this module is reachable
from start-up.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from generalAgent.config.settings import DocumentSettings
from generalAgent.display import N_, N_plural, human_size
from generalAgent.documents.reading import DocumentError, ReadLimit
from generalAgent.search.chunking import Block

_OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # old Office files and encrypted new ones
# Limits of an Office archive, checked before it is opened: real documents stay far below
# them (a 300-page report with images inflates to tens of MB; text compresses about 5:1,
# XML at most about 100:1), while a crafted file inflates a few MB to gigabytes.
MAX_INFLATED_BYTES = 1024 * 1024 * 1024
MAX_ARCHIVE_MEMBERS = 50_000
MAX_COMPRESSION_RATIO = 200
RATIO_CHECKED_ABOVE = 1024 * 1024  # small members may compress very well without harm


def check_office_archive(document: BinaryIO, path: Path, what: str) -> None:
    """Office files are ZIP archives; an encrypted one is an OLE container instead. One
    that would inflate to far more than any real document (a "zip bomb") is refused from
    its directory, before a byte of it is inflated. Leaves `document` at its start."""
    document.seek(0)
    head = document.read(8)
    if head == _OLE_SIGNATURE:
        raise DocumentError(
            N_(
                "{name} is password-protected (or an old .doc/.xls/.ppt renamed); "
                "save an unprotected {kind} copy and try again."
            ),
            name=path.name,
            kind=what,
        )
    if not zipfile.is_zipfile(document):
        raise DocumentError(
            N_("{name} is not a valid {kind} file (damaged, or another format renamed)."),
            name=path.name,
            kind=what,
        )
    try:
        with zipfile.ZipFile(document) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise DocumentError(
            N_("{name} is not a valid {kind} file (damaged?)."), name=path.name, kind=what
        ) from None
    finally:
        document.seek(0)
    inflated = sum(member.file_size for member in members)
    worst = max(
        (m.file_size / max(m.compress_size, 1) for m in members if m.file_size > RATIO_CHECKED_ABOVE),
        default=0.0,
    )
    if len(members) > MAX_ARCHIVE_MEMBERS or inflated > MAX_INFLATED_BYTES or worst > MAX_COMPRESSION_RATIO:
        raise DocumentError(
            N_plural(
                "{name} would inflate to {size} in {count:,} part (compression up to {ratio:,.0f}:1), "
                "more than a real {kind} file; it was not opened.",
                "{name} would inflate to {size} in {count:,} parts (compression up to {ratio:,.0f}:1), "
                "more than a real {kind} file; it was not opened.",
            ),
            name=path.name,
            size=human_size(inflated),
            count=len(members),
            ratio=worst,
            kind=what,
        )


# -- DOCX ----------------------------------------------------------------------------------
def read_docx(
    document_file: BinaryIO, path: Path, settings: DocumentSettings, limit: ReadLimit
) -> list[Block]:
    check_office_archive(document_file, path, ".docx")
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(document_file)
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile):
        raise DocumentError(N_("{name} is not a valid .docx file (damaged?)."), name=path.name) from None
    lines: list[str] = []
    read = 0  # characters so far, for the limit
    for element in document.element.body.iterchildren():
        if limit.reached(1, read):
            break
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = Paragraph(element, document)
            text = paragraph.text.strip()
            if text:
                level = _heading_level(paragraph.style.name if paragraph.style is not None else "")
                lines.append(f"{'#' * level} {text}" if level else text)
                read += len(lines[-1]) + 2
        elif tag == "tbl":
            lines.append(_table_text(Table(element, document)))
            read += len(lines[-1]) + 2
    return [Block(text="\n\n".join(line for line in lines if line))]


def _heading_level(style: str) -> int:
    """Markdown level of a Word paragraph style: Title -> 1, Heading 2 / 标题 2 -> 2, else 0."""
    if style == "Title":
        return 1
    match = re.match(r"^(?:Heading|标题)\s*(\d)$", style)
    return min(int(match.group(1)), 6) if match else 0


def _table_text(table: Any) -> str:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or text != cells[-1]:  # a merged cell repeats its text per column
                cells.append(text)
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


# -- PPTX ----------------------------------------------------------------------------------
def read_pptx(document: BinaryIO, path: Path, settings: DocumentSettings, limit: ReadLimit) -> list[Block]:
    check_office_archive(document, path, ".pptx")
    import pptx
    from pptx.exc import PackageNotFoundError

    try:
        presentation = pptx.Presentation(document)
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile):
        raise DocumentError(N_("{name} is not a valid .pptx file (damaged?)."), name=path.name) from None
    blocks: list[Block] = []
    for number, slide in enumerate(presentation.slides, start=1):
        if limit.reached(number, sum(len(b.text) for b in blocks)):
            break
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        parts = [f"# {title}"] if title else []
        for shape in slide.shapes:
            if shape is title_shape:
                continue
            parts.extend(_shape_texts(shape))
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                parts.append("Notes: " + notes.text.strip())
        blocks.append(
            Block(
                text="\n\n".join(p for p in parts if p.strip()),
                page=number,
                heading=title,
                place=f"slide {number}",
            )
        )
    return blocks


def _shape_texts(shape: Any) -> Iterator[str]:
    if getattr(shape, "shape_type", None) is not None and hasattr(shape, "shapes"):
        for inner in shape.shapes:  # a group of shapes
            yield from _shape_texts(inner)
        return
    if getattr(shape, "has_table", False) and shape.has_table:
        yield _table_text(shape.table)
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        yield shape.text_frame.text.strip()
