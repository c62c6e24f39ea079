"""Spreadsheets (XLSX): each sheet's rows grouped under their header, sheet names, and the
formulas Excel never calculated (their value is missing; the formula is shown instead).

openpyxl is imported inside the functions: this module is reachable from start-up.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from generalAgent.config.settings import DocumentSettings
from generalAgent.documents.office import check_office_archive
from generalAgent.documents.reading import DocumentError, OpenFile, ReadLimit, open_plainly
from generalAgent.search.chunking import Block


def read_xlsx(document: BinaryIO, path: Path, settings: DocumentSettings, limit: ReadLimit) -> list[Block]:
    check_office_archive(document, path, ".xlsx")
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(document, read_only=True, data_only=True)
        archive = zipfile.ZipFile(document)
    except (KeyError, ValueError, OSError, zipfile.BadZipFile):
        raise DocumentError(f"{path.name} is not a valid .xlsx file (damaged?).") from None
    blocks: list[Block] = []
    try:
        for number, sheet in enumerate(workbook.worksheets, start=1):
            if limit.reached(number, sum(len(b.text) for b in blocks)):
                break
            # A formula never calculated (a file written by a script) has no value: its
            # formula is shown instead, so the cell does not read as empty.
            formulas = uncached_formulas(archive, str(getattr(sheet, "_worksheet_path", "")).lstrip("/"))
            rows = (
                (row_number, _row_text(row, formulas, row_number - 1))
                for row_number, row in enumerate(sheet.iter_rows(values_only=True), start=1)
            )
            blocks.extend(
                Block(
                    text=text,
                    page=number,
                    heading=sheet.title,
                    whole=True,
                    place=f"sheet {sheet.title}, {_rows_label(first, last)}",
                )
                for text, first, last in group_rows([(n, r) for n, r in rows if r], settings)
            )
    finally:
        archive.close()
        workbook.close()
    return blocks


# A formula cell whose value was never computed: `<f>` with no `<v>` (or an empty one).
# Every part is bounded, so the scan is linear in the sheet's size.
_UNCACHED_FORMULA = re.compile(
    rb'<c r="([A-Z]{1,3})(\d{1,7})"[^>]{0,300}>\s*<f(?:\s[^>]{0,300})?(?:/>|>([^<]{0,4000})</f>)'
    rb"\s*(?:<v\s*/>|<v></v>)?\s*</c>"
)


def uncached_formulas(archive: zipfile.ZipFile, member: str) -> dict[tuple[int, int], str]:
    """{(row, column) (0-based): formula} of the formula cells of one worksheet that hold no
    cached value. openpyxl gives such a cell as empty; reading the sheet's XML once more
    for `<f>` elements costs far less than a second openpyxl pass over every cell."""
    try:
        data = archive.read(member)
    except (KeyError, OSError, zipfile.BadZipFile):
        return {}
    if b"<f" not in data:
        return {}
    from html import unescape  # html imports its entity table: not for every start-up

    found: dict[tuple[int, int], str] = {}
    for match in _UNCACHED_FORMULA.finditer(data):
        letters, number, formula = match.groups()
        text = unescape(formula.decode("utf-8", "replace")) if formula else "(a shared formula)"
        found[(int(number) - 1, column_index(letters.decode()))] = "=" + text if formula else text
    return found


def column_index(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - 64
    return index - 1


def xlsx_sheet_names(path: Path, open_file: OpenFile = open_plainly) -> list[str]:
    """The names of a workbook's sheets, in order (from its directory, no cell is read)."""
    import openpyxl

    with open_file(path) as handle:
        workbook = openpyxl.load_workbook(handle, read_only=True)
        try:
            return list(workbook.sheetnames)
        finally:
            workbook.close()


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
