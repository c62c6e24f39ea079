"""A table file's cells as grids of Python values, before they are typed and stored (tables.py).

A grid is one sheet of an XLSX (read by python-calamine, workbook.py), a CSV/TSV file, or
one table of a DOCX, with the formula cells of a sheet that hold no cached value.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from generalAgent.display import N_plural
from generalAgent.documents.encoding import decode_text
from generalAgent.documents.office import check_office_archive
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.workbook import read_sheets

_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")

Grid = tuple[str, str, list[list[Any]], dict[tuple[int, int], str]]


def xlsx_grids(handle: BinaryIO, path: Path, max_cells: int) -> Iterator[Grid]:
    """(sheet name, source, rows of values, {(row, column): formula without a cached value}),
    each sheet read by workbook.py within `max_cells` cells."""
    for title, cells in read_sheets(handle, path, max_cells):
        yield title, f"sheet {title}", cells.rows, cells.uncached


def docx_grids(handle: BinaryIO, path: Path) -> Iterator[Grid]:
    check_office_archive(handle, path, ".docx")
    import docx

    document = docx.Document(handle)
    for number, table in enumerate(document.tables, start=1):
        rows = [[cell.text.strip() or None for cell in row.cells] for row in table.rows]
        yield f"table_{number}", f"table {number} of the document", rows, {}


def csv_rows(handle: BinaryIO, path: Path, suffix: str, max_cells: int) -> list[list[Any]]:
    data = handle.read()
    text = decode_text(data, path.name)
    delimiter = "\t" if suffix == ".tsv" else _sniff_delimiter(text)
    rows: list[list[Any]] = []
    cells = 0
    for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
        cells += len(row)
        if cells > max_cells:
            raise DocumentError(
                N_plural(
                    "{name} has more than {count:,} cell, too many to load; split the file.",
                    "{name} has more than {count:,} cells, too many to load; split the file.",
                ),
                name=path.name,
                count=max_cells,
            )
        rows.append([_csv_value(value) for value in row])
    return rows


def _sniff_delimiter(text: str) -> str:
    try:
        return csv.Sniffer().sniff(text[:16_384], delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def _csv_value(text: str) -> Any:
    """A CSV field as the number it spells ("1,234.5" too), else the text; "" is empty."""
    value = text.strip()
    if not value:
        return None
    if _THOUSANDS.match(value):
        value = value.replace(",", "")
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return text
    return number if number == number and abs(number) != float("inf") else text
