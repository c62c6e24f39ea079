"""Every table of a file as column names over rows: a PDF's tables (pdf.py, merged across the
pages they span), a DOCX's tables, an XLSX's sheets, a CSV/TSV file.

What `generalagent tables` prints and `query_table` loads: one `FileTable` per table, each
once, with the pages it spans (PDF) and its caption (a PDF table's "Table 2: ...", a sheet's
name). The header rows of a sheet or a DOCX table are found as tables.py finds them for SQL.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from datetime import time as day_time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from generalAgent.display import N_, Message
from generalAgent.documents.reading import OLD_OFFICE, DocumentError, OpenFile, open_plainly

if TYPE_CHECKING:
    from generalAgent.config.settings import DocumentSettings

TABLE_FILE_SUFFIXES = frozenset({".pdf", ".xlsx", ".xlsm", ".csv", ".tsv", ".docx"})
# "004", "0.50" in a PDF cell: a code or a figure as printed, kept as text when it starts
# with a zero that a number would lose.
_LEADING_ZERO = re.compile(r"^[-+]?0\d")


@dataclass
class FileTable:
    name: str  # the SQL table's name: the sheet, the file's stem, table_1, ...
    caption: str  # "Table 2: Installed packages", a sheet's name, "" when none
    header: list[list[Any]]  # the header rows (a group label over the names, then the names)
    rows: list[list[Any]]
    pages: list[int] = field(default_factory=list)  # a PDF table's pages, first to last
    source: str = ""  # how query_table names where it came from
    ocr: bool = False  # read by OCR from a scanned page: a cell may be misread

    def column_names(self) -> list[str]:
        from generalAgent.documents.tables import column_names

        width = max((len(r) for r in [*self.header, *self.rows]), default=0)
        return column_names(self.header, width)

    def as_json(self, file: str) -> dict[str, Any]:
        return {
            "file": file,
            "pages": self.pages,
            "caption": self.caption,
            "header": self.column_names(),
            "rows": [[_json_value(v) for v in row] for row in self.rows],
            "ocr": self.ocr,
        }


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (int, float, str)):
        return value
    if isinstance(value, (datetime, date, day_time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    return str(value)


def pdf_values(rows: list[list[str]]) -> list[list[Any]]:
    """A PDF table's cells typed by column: a column whose every filled cell spells a
    number ("1,234.5") holds numbers; any other keeps its text as printed, so that a
    version "4.10" beside "6.06 LTS" or a code "004" is not turned into 4.1 or 4."""
    from generalAgent.documents.table_grids import _csv_value

    width = max((len(r) for r in rows), default=0)
    numeric = []
    for column in range(width):
        cells = [r[column].strip() for r in rows if column < len(r) and r[column].strip()]
        numeric.append(
            bool(cells)
            and not any(_LEADING_ZERO.match(c) for c in cells)
            and all(isinstance(_csv_value(c), (int, float)) for c in cells)
        )
    return [
        [(_csv_value(c) if numeric[n] else (c.strip() or None)) for n, c in enumerate(row)] for row in rows
    ]


def pdf_tables(
    handle: BinaryIO,
    path: Path,
    settings: DocumentSettings | None = None,
    notes: list[Message] | None = None,
) -> list[FileTable]:
    """A PDF's tables; with `settings`, those of its scanned pages too, read by OCR (what
    could not be read is said in `notes`: pdf.read_pdf_tables)."""
    from generalAgent.documents.pdf import read_pdf_tables

    out = []
    for number, table in enumerate(read_pdf_tables(handle, path, settings, notes), start=1):
        pages = table.pages
        where = f"page {pages[0]}" if len(pages) == 1 else f"pages {pages[0]}–{pages[-1]}"
        source = f'{where}, "{table.caption}"' if table.caption else f"{where}, table {number}"
        out.append(
            FileTable(
                name=f"table_{number}",
                caption=table.caption,
                header=[list(r) for r in table.header],
                rows=pdf_values(table.rows),
                pages=list(pages),
                source=f"{source}, read by OCR: a cell may be misread" if table.ocr else source,
                ocr=table.ocr,
            )
        )
    return out


def file_tables(
    path: Path,
    open_file: OpenFile = open_plainly,
    max_cells: int | None = None,
    settings: DocumentSettings | None = None,
    notes: list[Message] | None = None,
) -> list[FileTable]:
    """The tables of the file at `path`; `DocumentError` when it is not a table format.
    `settings` and `notes` as `pdf_tables` takes them (a scanned PDF's tables by OCR)."""
    from generalAgent.documents.table_grids import csv_rows, docx_grids, xlsx_grids
    from generalAgent.documents.tables import MAX_TABLE_CELLS, header_rows

    limit = MAX_TABLE_CELLS if max_cells is None else max_cells
    suffix = path.suffix.lower()
    if OLD_OFFICE.get(suffix, suffix) not in TABLE_FILE_SUFFIXES:
        raise DocumentError(
            N_("{name} is not a table file; tables are read from PDF, XLSX, CSV/TSV and DOCX files."),
            name=path.name,
        )
    opened: Callable[[Path], BinaryIO] = open_file
    if suffix in OLD_OFFICE:
        from generalAgent.documents.convert import convert_legacy_office

        modern = convert_legacy_office(path, open_file)
        suffix = OLD_OFFICE[suffix]
        opened = lambda _path: io.BytesIO(modern)  # noqa: E731 - the converted bytes stand for the file
    with opened(path) as handle:
        if suffix == ".pdf":
            return pdf_tables(handle, path, settings, notes)
        if suffix in (".xlsx", ".xlsm"):
            grids = [(name, source, rows) for name, source, rows, _ in xlsx_grids(handle, path, limit)]
        elif suffix == ".docx":
            grids = [(name, source, rows) for name, source, rows, _ in docx_grids(handle, path)]
        else:
            grids = [(path.stem or "data", f"file {path.name}", csv_rows(handle, path, suffix, limit))]
    out = []
    for name, source, rows in grids:
        filled = [r for r in rows if any(v is not None and str(v).strip() for v in r)]
        if not filled:
            continue
        start, count = header_rows(filled)
        caption = name if suffix in (".xlsx", ".xlsm") else ""
        out.append(
            FileTable(name, caption, filled[start : start + count], filled[start + count :], source=source)
        )
    return out
