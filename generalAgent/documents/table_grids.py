"""A table file's cells as grids of Python values, before they are typed and stored (tables.py).

A grid is one sheet of an XLSX (read from its XML by `fast_sheet_rows`, openpyxl's parse
where the XML is written another way), a CSV/TSV file, or one table of a DOCX, with the
formula cells of a sheet that hold no cached value.
"""

from __future__ import annotations

import csv
import html
import io
import re
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from generalAgent.documents.encoding import decode_text
from generalAgent.documents.office import check_office_archive
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.sheets import column_index, uncached_formulas

_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")

Grid = tuple[str, str, list[list[Any]], dict[tuple[int, int], str]]


def xlsx_grids(handle: BinaryIO, path: Path, max_cells: int) -> Iterator[Grid]:
    """(sheet name, source, rows of values, {(row, column): formula without a cached value})."""
    check_office_archive(handle, path, ".xlsx")
    import openpyxl

    data = handle.read()
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (KeyError, ValueError, OSError, zipfile.BadZipFile):
        raise DocumentError(f"{path.name} is not a valid .xlsx file (damaged?).") from None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for sheet in workbook.worksheets:
                member = str(getattr(sheet, "_worksheet_path", "")).lstrip("/")
                rows = fast_sheet_rows(archive, sheet) if member else None
                if rows is None:  # a sheet written in a way the fast reader does not take
                    rows = [list(row) for row in sheet.iter_rows(values_only=True)]
                if sum(len(row) for row in rows) > max_cells:
                    raise DocumentError(
                        f"{path.name}: sheet {sheet.title} has more than {max_cells:,} cells, "
                        "too many to load; split the sheet."
                    )
                yield sheet.title, f"sheet {sheet.title}", rows, uncached_formulas(archive, member)
    finally:
        workbook.close()


# One cell of a worksheet's XML as Excel, LibreOffice, WPS and openpyxl write it: the
# reference first, then its type and style, then a formula, a value or an inline string.
_CELL = re.compile(rb'<c r="([A-Z]{1,3})(\d{1,7})"([^>]{0,300}?)(?:/>|>(.*?)</c>)', re.S)
_CELL_TYPE = re.compile(rb'\st="([A-Za-z]{1,9})"')
_CELL_STYLE = re.compile(rb'\ss="(\d{1,6})"')
_CELL_VALUE = re.compile(rb"<v>([^<]*)</v>")
_CELL_TEXT = re.compile(rb"<t(?:\s[^>]{0,100})?>([^<]*)</t>")
_PREFIXED_CELL = re.compile(rb"<[A-Za-z][\w.-]{0,20}:c[\s>]")


def fast_sheet_rows(archive: zipfile.ZipFile, sheet: Any) -> list[list[Any]] | None:
    """The values of one worksheet, as openpyxl's `iter_rows(values_only=True)` gives them,
    read from its XML by a few bounded regular expressions: three to five times faster
    than openpyxl's element-by-element parse, which is most of the time a 50k-row sheet
    takes to load. The shared strings, date styles and epoch are openpyxl's (already read
    with the workbook). None when the XML is not written the expected way (a namespace
    prefix, a cell without its reference first): the caller then uses openpyxl."""
    from openpyxl.utils.datetime import from_excel

    member = str(getattr(sheet, "_worksheet_path", "")).lstrip("/")
    try:
        data = archive.read(member)
    except (KeyError, OSError, zipfile.BadZipFile):
        return None
    if _PREFIXED_CELL.search(data):
        return None
    workbook = sheet.parent
    shared = sheet._shared_strings  # a read-only sheet's; the workbook's list stays empty
    epoch = workbook.epoch
    dates: set[int] = getattr(workbook, "_date_formats", set())
    durations: set[int] = getattr(workbook, "_timedelta_formats", set())
    grid: dict[int, dict[int, Any]] = {}
    width = 0
    count = 0
    # A sheet repeats a few column letters and attribute strings (` s="3" t="s"`) in every
    # row: each is parsed once, which halves the time of a 50k-row sheet.
    columns: dict[bytes, int] = {}
    kinds: dict[bytes, tuple[bytes, int]] = {}  # attributes -> (type, 1 date / 2 duration / 0)
    try:
        for match in _CELL.finditer(data):
            count += 1
            letters, number, attributes, inner = match.groups()
            if not inner:
                continue  # an empty cell (`<c r="B2" s="1"/>`)
            if inner.startswith(b"<v>") and inner.endswith(b"</v>") and b"<" not in inner[3:-4]:
                raw_text: bytes | None = inner[3:-4]
            else:
                found = _CELL_VALUE.search(inner)
                raw_text = found.group(1) if found else None
            parsed = kinds.get(attributes)
            if parsed is None:
                kind_match = _CELL_TYPE.search(attributes)
                style_match = _CELL_STYLE.search(attributes)
                style = int(style_match.group(1)) if style_match else -1
                parsed = kinds[attributes] = (
                    kind_match.group(1) if kind_match else b"n",
                    1 if style in dates else 2 if style in durations else 0,
                )
            kind, dated = parsed
            value: Any = None
            if kind == b"inlineStr":
                value = html.unescape(b"".join(_CELL_TEXT.findall(inner or b"")).decode("utf-8"))
            elif raw_text is not None:
                text = raw_text
                if kind == b"s":
                    value = shared[int(text)]
                elif kind in (b"str", b"e"):
                    value = html.unescape(text.decode("utf-8"))
                elif kind == b"b":
                    value = text.strip() in (b"1", b"true")
                elif kind == b"d":
                    value = datetime.fromisoformat(text.decode())
                elif text:
                    value = int(text) if text.lstrip(b"-").isdigit() else float(text)
                    if dated == 1:
                        value = from_excel(value, epoch)
                    elif dated == 2:
                        value = from_excel(value, epoch, timedelta=True)
            if value is None:
                continue
            column = columns.get(letters)
            if column is None:
                column = columns[letters] = column_index(letters.decode())
            grid.setdefault(int(number) - 1, {})[column] = value
            if column >= width:
                width = column + 1
    except (ValueError, IndexError, UnicodeDecodeError, OverflowError):
        return None
    if count != data.count(b"<c ") + data.count(b"<c>"):
        return None  # some cells were written another way: openpyxl reads them all
    height = max(grid, default=-1) + 1
    rows = [[None] * width for _ in range(height)]
    for row, cells in grid.items():
        for column, value in cells.items():
            rows[row][column] = value
    return rows


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
                f"{path.name} has more than {max_cells:,} cells, too many to load; split the file."
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
