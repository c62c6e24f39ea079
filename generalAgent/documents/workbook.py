"""Spreadsheet workbooks (.xlsx, .xlsm, .xlsb, .xls, .ods; WPS's .et is an .xls) read through
python-calamine (Rust's calamine, MIT): each sheet's values as rows of Python values, and
the sheet names. No LibreOffice is needed for any of them.

What a reader of these rows gets, the same as openpyxl's `iter_rows(values_only=True)` gave
before: None for an empty cell, a number as int when it is whole (calamine gives every XLSX
number as a float), text, booleans, errors as their text ("#N/A"), and numbers whose format
shows a date or a duration as datetime/time/timedelta in the workbook's 1900 or 1904 date
system (calamine gives a whole day as a date; it is widened to a datetime, as openpyxl
reads it). Formula cells give their cached value.

calamine builds a sheet as one dense grid, and the allocation of a grid too large aborts the
process (a 4 KB XLSX with cells at A1 and XFD1048576 asks for 512 GB). So an XLSX sheet
passes documents/sheet_xml.py first (bounds, and the formula cells that hold no cached
value, which calamine does not report), and the binary and OpenDocument formats, which
have no such cheap look, are read in a child process (`python -m
generalAgent.documents.workbook`) under a memory limit and a time limit: a hostile file
ends the child, never the agent. The child sends its values back as JSON (never pickle:
its output is as untrusted as the file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from generalAgent.display import N_, N_plural
from generalAgent.documents.office import check_office_archive
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.sheet_xml import check_sheet, check_strings, shared_strings_member, sheet_members

_WHOLE = float(2**53)  # past this a float is not an exact integer anyway
# The formats read in-process behind sheet_xml.py, and those read in the child.
XML_SUFFIXES = frozenset({".xlsx", ".xlsm"})
CHILD_SUFFIXES = frozenset({".xls", ".et", ".xlsb", ".ods"})
SHEET_SUFFIXES = XML_SUFFIXES | CHILD_SUFFIXES
# The child's address space and time: a real workbook of 5M cells takes well under both
# (calamine's grid is 32 bytes a cell), a hostile one is stopped by them.
CHILD_MEMORY_BYTES = 3 << 30
CHILD_SECONDS = 120.0


@dataclass
class SheetCells:
    """A sheet's values as rows (a rectangle as wide as its rightmost value, as long as its
    last row with one; None for an empty cell) and {(row, column) (0-based): formula} of
    the formula cells that hold no cached value."""

    rows: list[list[Any]]
    uncached: dict[tuple[int, int], str]


def read_sheets(handle: BinaryIO, path: Path, max_cells: int) -> Iterator[tuple[str, SheetCells]]:
    """(sheet name, its cells) for each worksheet of the workbook in `handle`, in order;
    `DocumentError` when the file is not one, or a sheet breaks a bound (the sheet named)."""
    if path.suffix.lower() in CHILD_SUFFIXES:
        for title, rows in _child(handle, path, max_cells, "cells"):
            yield title, SheetCells(_python_rows(rows, {}), {})
        return
    import python_calamine

    check_office_archive(handle, path, ".xlsx")
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise DocumentError(N_("{name} is not a valid .xlsx file (damaged?)."), name=path.name) from None
    with archive:
        members = sheet_members(archive, path.name)
        strings = shared_strings_member(archive)
        if strings is not None:
            check_strings(archive, strings, path.name, max_cells)
        handle.seek(0)
        try:
            workbook = python_calamine.CalamineWorkbook.from_filelike(handle)
        except python_calamine.CalamineError as exc:
            raise _damaged(path, exc) from None
        with workbook:
            for sheet in workbook.sheets_metadata:
                if sheet.typ not in (
                    python_calamine.SheetTypeEnum.WorkSheet,
                    python_calamine.SheetTypeEnum.DialogSheet,
                ):
                    continue  # a chart sheet has no cells
                member = members.get(sheet.name)
                if member is None:
                    continue  # a sheet whose part is missing is skipped, as openpyxl skips it
                xml = check_sheet(archive, member, path.name, sheet.name, max_cells)
                try:
                    rows = workbook.get_sheet_by_name(sheet.name).to_python(skip_empty_area=False)
                except python_calamine.CalamineError as exc:
                    raise _damaged(path, exc) from None
                yield sheet.name, SheetCells(_python_rows(rows, xml.errors), xml.uncached)


def sheet_names(handle: BinaryIO, path: Path) -> list[str]:
    """Every sheet's name, chart sheets too, in the workbook's order (no cell is read)."""
    if path.suffix.lower() in CHILD_SUFFIXES:
        return [title for title, _ in _child(handle, path, 0, "names")]
    import python_calamine

    check_office_archive(handle, path, ".xlsx")
    try:
        with python_calamine.CalamineWorkbook.from_filelike(handle) as workbook:
            return list(workbook.sheet_names)
    except python_calamine.CalamineError as exc:
        raise _damaged(path, exc) from None


def _python_rows(rows: list[list[Any]], errors: dict[tuple[int, int], str]) -> list[list[Any]]:
    """calamine's rows as openpyxl gave them (see the module docstring), with the error
    cells' text put back, trailing empty rows and columns dropped."""
    converted = [
        [
            None
            if value == ""
            else (int(value) if value.is_integer() and -_WHOLE < value < _WHOLE else value)
            if type(value) is float
            else datetime(value.year, value.month, value.day)
            if type(value) is date
            else value
            for value in row
        ]
        for row in rows
    ]
    for (row, column), text in errors.items():
        if row < len(converted) and column < len(converted[row]):
            converted[row][column] = text
    while converted and all(value is None for value in converted[-1]):
        converted.pop()
    width = max((_width(row) for row in converted), default=0)
    if converted and width < len(converted[0]):
        converted = [row[:width] for row in converted]
    return converted


def _width(row: list[Any]) -> int:
    for index in range(len(row) - 1, -1, -1):
        if row[index] is not None:
            return index + 1
    return 0


def _damaged(path: Path, exc: Exception) -> DocumentError:
    return DocumentError(
        N_("{name} could not be read ({error}: {details}); it may be damaged."),
        name=path.name,
        error=type(exc).__name__,
        details=" ".join(str(exc).split())[:160],
    )


# -- the child process for .xls, .xlsb and .ods --------------------------------------------------
def _child(handle: BinaryIO, path: Path, max_cells: int, what: str) -> list[tuple[str, list[list[Any]]]]:
    """[(sheet name, rows)] read by the child (rows empty when `what` is "names")."""
    if path.suffix.lower() == ".ods":
        check_office_archive(handle, path, ".ods")  # a zip: the bomb check applies
    handle.seek(0)
    data = handle.read()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "generalAgent.documents.workbook",
                what,
                str(max_cells),
                str(CHILD_MEMORY_BYTES),
                # calamine picks its reader by the suffix (by content it only says "cannot
                # detect" of a file it refused); .et is an .xls
                ".xls" if path.suffix.lower() == ".et" else path.suffix.lower(),
            ],
            input=data,
            capture_output=True,
            timeout=CHILD_SECONDS,
            env={**os.environ, "RUST_BACKTRACE": "0"},
        )
    except subprocess.TimeoutExpired:
        raise DocumentError(
            N_("{name} was not read within {seconds:g} s; the file may be damaged, or save it as .xlsx."),
            name=path.name,
            seconds=CHILD_SECONDS,
        ) from None
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    if done.returncode != 0 or not lines:
        said = " ".join(done.stderr.decode("utf-8", "replace").split())
        if "memory allocation" in said or "MemoryError" in said:
            raise DocumentError(
                N_(
                    "{name} needs more than {size} GB of memory to read (a sheet far larger than its data); "
                    "it was not loaded."
                ),
                name=path.name,
                size=CHILD_MEMORY_BYTES >> 30,
            )
        raise DocumentError(
            N_("{name} could not be read ({error}: {details}); it may be damaged."),
            name=path.name,
            error="calamine",
            details=said[-160:] or f"exit status {done.returncode}",
        )
    found = []
    for line in lines:
        record = json.loads(line, object_hook=_decode)
        if "too_many" in record:
            height, wide = record["height"], record["wide"]
            raise DocumentError(
                N_plural(
                    "{name}: sheet {sheet} has more than {count:,} cell ({height:,} rows by {wide:,} columns), "
                    "too many to load; split the sheet.",
                    "{name}: sheet {sheet} has more than {count:,} cells ({height:,} rows by {wide:,} columns), "
                    "too many to load; split the sheet.",
                ),
                name=path.name,
                sheet=record["too_many"],
                count=max_cells,
                height=height,
                wide=wide,
            )
        if "error" in record:
            raise DocumentError(
                N_("{name} could not be read ({error}: {details}); it may be damaged."),
                name=path.name,
                error="calamine",
                details=str(record["error"])[:160],
            )
        found.append((str(record["name"]), record.get("rows", [])))
    return found


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, time):
        return {"$time": value.isoformat()}
    if isinstance(value, timedelta):
        return {"$seconds": value.total_seconds()}
    raise TypeError(type(value).__name__)


def _decode(record: dict[str, Any]) -> Any:
    if len(record) == 1:
        ((key, value),) = record.items()
        if key == "$datetime":
            return datetime.fromisoformat(value)
        if key == "$date":
            return date.fromisoformat(value)
        if key == "$time":
            return time.fromisoformat(value)
        if key == "$seconds":
            return timedelta(seconds=value)
    return record


def _child_main(what: str, max_cells: int, memory: int, suffix: str) -> None:
    """The child: the workbook from stdin, one JSON line per sheet on stdout."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ImportError, ValueError, OSError):
        pass  # no such limit on this system: the time limit still holds
    import tempfile

    import python_calamine

    out = sys.stdout
    with tempfile.TemporaryDirectory(prefix="generalagent-sheet-") as folder:
        copy = Path(folder) / f"workbook{suffix}"
        copy.write_bytes(sys.stdin.buffer.read())
        try:
            workbook = python_calamine.CalamineWorkbook.from_path(copy)
        except python_calamine.CalamineError as exc:
            out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
            return
        _child_sheets(workbook, what, max_cells)


def _child_sheets(workbook: Any, what: str, max_cells: int) -> None:
    import python_calamine

    out = sys.stdout
    try:
        for sheet in workbook.sheets_metadata:
            if what == "names":
                out.write(json.dumps({"name": sheet.name}) + "\n")
                continue
            if sheet.typ not in (
                python_calamine.SheetTypeEnum.WorkSheet,
                python_calamine.SheetTypeEnum.DialogSheet,
            ):
                continue
            cells = workbook.get_sheet_by_name(sheet.name)
            end = cells.end
            height, wide = (end[0] + 1, end[1] + 1) if end else (0, 0)
            if height * wide > max_cells:
                out.write(json.dumps({"too_many": sheet.name, "height": height, "wide": wide}) + "\n")
                return
            rows = cells.to_python(skip_empty_area=False)
            out.write(json.dumps({"name": sheet.name, "rows": rows}, default=_encode) + "\n")
    except python_calamine.CalamineError as exc:
        out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")


if __name__ == "__main__":
    _child_main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
