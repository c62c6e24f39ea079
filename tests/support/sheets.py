"""XLSX files written the ways real writers write them, and the rows openpyxl reads from them,
for the tests of documents/workbook.py and sheet_xml.py.

openpyxl writes inline strings and a default namespace; Excel and LibreOffice write a
shared string table, and other writers a namespace prefix, comments or rich text. These
helpers rewrite an openpyxl file's parts into those forms, so one random sheet is checked
in each of them against openpyxl's own reading of it.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_INLINE_CELL = re.compile(rb't="inlineStr"><is>(.*?)</is>', re.S)


def rewrite_xlsx(path: Path, out: Path, change: Callable[[str, bytes], bytes]) -> Path:
    """A copy of the archive at `path` with each part's bytes passed through `change(name, data)`."""
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info.filename, change(info.filename, source.read(info.filename)))
    return out


def xlsx_with_sheet(folder: Path, sheet_xml: bytes, name: str = "hostile.xlsx") -> Path:
    """An XLSX in `folder` whose one worksheet is `sheet_xml`, the rest as openpyxl writes it."""
    from tests.support.documents import make_xlsx

    source = make_xlsx(folder / "base.xlsx", {"H": [["x"]]})
    return rewrite_xlsx(
        source,
        folder / name,
        lambda part, data: sheet_xml if part.startswith("xl/worksheets/sheet") else data,
    )


def with_shared_strings(path: Path, out: Path) -> Path:
    """The workbook with its inline strings moved into a shared string table, as Excel writes it."""
    strings: list[bytes] = []
    with zipfile.ZipFile(path) as source:
        sheets = {n: source.read(n) for n in source.namelist() if n.startswith("xl/worksheets/sheet")}

    def shared(match: re.Match[bytes]) -> bytes:
        strings.append(match.group(1))
        return b't="s"><v>' + str(len(strings) - 1).encode() + b"</v>"

    rewritten = {name: _INLINE_CELL.sub(shared, data) for name, data in sheets.items()}
    table = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="{MAIN}" count="{len(strings)}" '
        f'uniqueCount="{len(strings)}">'.encode()
        + b"".join(b"<si>" + s + b"</si>" for s in strings)
        + b"</sst>"
    )

    def change(name: str, data: bytes) -> bytes:
        if name in rewritten:
            return rewritten[name]
        if name == "[Content_Types].xml":
            return data.replace(
                b"</Types>",
                b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
            )
        if name == "xl/_rels/workbook.xml.rels":
            return data.replace(
                b"</Relationships>",
                b'<Relationship Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                b'sharedStrings" Target="sharedStrings.xml" Id="rIdShared"/></Relationships>',
            )
        return data

    rewrite_xlsx(path, out, change)
    with zipfile.ZipFile(out, "a") as archive:
        archive.writestr("xl/sharedStrings.xml", table)
    return out


def with_prefix(path: Path, out: Path, prefix: str = "x") -> Path:
    """The workbook with every worksheet's elements written under a namespace prefix
    (`<x:c>`), as some generators write them, and a comment inside the cells."""

    def change(name: str, data: bytes) -> bytes:
        if not name.startswith("xl/worksheets/sheet"):
            return data
        text = data.decode()
        text = re.sub(r"<(/?)([A-Za-z]+)([\s/>])", lambda m: f"<{m[1]}{prefix}:{m[2]}{m[3]}", text)
        text = text.replace(f'xmlns="{MAIN}"', f'xmlns:{prefix}="{MAIN}"', 1)
        return text.replace(
            f"<{prefix}:sheetData>", f"<{prefix}:sheetData><!-- written by a test -->", 1
        ).encode()

    return rewrite_xlsx(path, out, change)


def read_all(path: Path, max_cells: int = 1_000_000) -> dict[str, list[list[Any]]]:
    """{sheet: trimmed rows} by documents/workbook.py (python-calamine behind the bounds)."""
    from generalAgent.documents.workbook import read_sheets

    with path.open("rb") as handle:
        return {title: trimmed(cells.rows) for title, cells in read_sheets(handle, path, max_cells)}


def openpyxl_rows(path: Path) -> dict[str, list[list[Any]]]:
    """{sheet: rows} as openpyxl's read-only values_only reader gives them, trimmed to the
    rectangle of values (trailing empty rows and columns dropped)."""
    import openpyxl

    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        return {
            sheet.title: trimmed([list(r) for r in sheet.iter_rows(values_only=True)])
            for sheet in workbook.worksheets
        }
    finally:
        workbook.close()


def trimmed(rows: list[list[Any]]) -> list[list[Any]]:
    rows = [list(r) for r in rows]
    while rows and all(v is None for v in rows[-1]):
        rows.pop()
    width = max((max((i + 1 for i, v in enumerate(r) if v is not None), default=0) for r in rows), default=0)
    return [(r + [None] * width)[:width] for r in rows]
