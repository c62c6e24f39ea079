"""Spreadsheets (XLSX): each sheet's rows grouped under their header, sheet names, and the
formulas Excel never calculated (their value is missing; the formula is shown instead).

The cells are read by python-calamine (workbook.py, the reader query_table uses), not by
openpyxl: a 50,000-row sheet's preview took three seconds of openpyxl before a line of it
was shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from generalAgent.config.settings import DocumentSettings
from generalAgent.documents.reading import OpenFile, ReadLimit, open_plainly
from generalAgent.documents.workbook import read_sheets, sheet_names
from generalAgent.search.chunking import Block

# A sheet beyond this many cells (rows x columns of its values) is refused rather than read:
# its rows are held in memory while they are grouped (query_table has the same limit).
MAX_SHEET_CELLS = 5_000_000


def read_xlsx(document: BinaryIO, path: Path, settings: DocumentSettings, limit: ReadLimit) -> list[Block]:
    blocks: list[Block] = []
    for number, (title, cells) in enumerate(read_sheets(document, path, MAX_SHEET_CELLS), start=1):
        if limit.reached(number, sum(len(b.text) for b in blocks)):
            break
        # A formula never calculated (a file written by a script) has no value: its
        # formula is shown instead, so the cell does not read as empty.
        rows = (
            (row_number, _row_text(row, cells.uncached, row_number - 1))
            for row_number, row in enumerate(cells.rows, start=1)
        )
        blocks.extend(
            Block(
                text=text,
                page=number,
                heading=title,
                whole=True,
                place=f"sheet {title}, {_rows_label(first, last)}",
            )
            for text, first, last in group_rows([(n, r) for n, r in rows if r], settings)
        )
    return blocks


def xlsx_sheet_names(path: Path, open_file: OpenFile = open_plainly) -> list[str]:
    """The names of a workbook's sheets, in order (from its directory, no cell is read)."""
    with open_file(path) as handle:
        return sheet_names(handle, path)


def sheets_preview_text(blocks: list[Block], names: list[str]) -> str:
    """A workbook's preview: the list of its sheets, then each sheet under its name with
    its header once (the blocks repeat it so each chunk reads alone; a preview need not)."""
    lines = [f"Sheets ({len(names)}): " + ", ".join(names)]
    sheet = None
    for block in blocks:
        rows = block.text.split("\n")
        if block.page != sheet:
            sheet = block.page
            lines.extend(["", f"## Sheet {block.page}: {block.heading}", *rows])
        else:
            lines.extend(rows[1:])
    return "\n".join(lines)


def _rows_label(first: int, last: int) -> str:
    return f"row {first}" if first == last else f"rows {first}–{last}"


def _row_text(values: Iterable[Any], formulas: dict[tuple[int, int], str] | None = None, row: int = 0) -> str:
    cells = [
        (formulas.get((row, column), "") if formulas else "") if v is None else _cell_text(v)
        for column, v in enumerate(values)
    ]
    while cells and not cells[-1]:
        cells.pop()
    return " | ".join(cells) if any(cells) else ""


def _cell_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return " ".join(str(value).split())


def group_rows(rows: list[tuple[int, str]], settings: DocumentSettings) -> Iterator[tuple[str, int, int]]:
    """The header row, then groups of data rows each repeated under it, as (text, first row
    number, last row number) — the numbers a citation gives.

    A group has at most `xlsx_rows_per_chunk` rows and stays within `chunk_max_size` with
    its header, so every chunk of a sheet can be read on its own; a row too long for any
    chunk goes alone (the chunker cuts it further).
    """
    if not rows:
        return
    (header_row, header), data = rows[0], rows[1:]
    if not data:
        yield header, header_row, header_row
        return
    group: list[tuple[int, str]] = []
    size = len(header)
    for row in data:
        if group and (
            len(group) >= settings.xlsx_rows_per_chunk or size + 1 + len(row[1]) > settings.chunk_max_size
        ):
            yield "\n".join([header, *(text for _, text in group)]), group[0][0], group[-1][0]
            group, size = [], len(header)
        group.append(row)
        size += 1 + len(row[1])
    yield "\n".join([header, *(text for _, text in group)]), group[0][0], group[-1][0]
