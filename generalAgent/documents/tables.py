"""Tables of a document in an in-memory SQLite database, for exact answers (`query_table`).

A model that adds up numbers it read from a preview guesses; one `SELECT` over the sheet
does not. Each sheet of an XLSX, a CSV/TSV file, or each table of a DOCX or a PDF (read
as grids by pdf_tables.py, named table_1, table_2, ... with their pages and captions)
becomes one SQLite table, its columns typed from their values. The model's query runs read-only and
bounded:

- the connection is `query_only`, and an authorizer allows reading, selecting and calling
  functions only (no ATTACH, no PRAGMA, no writes, no `load_extension`);
- one statement per call (sqlite3 refuses a second);
- a progress handler stops a query past its time limit (a recursive CTE that would run for
  minutes), and strings/blobs are capped so no value can grow without bound;
- at most `max_rows` rows come back, each cell cut to a readable width.

Formula cells give their cached value (what Excel last computed); a formula never computed
(a file written by a script) has none, and the column's note says so with the formula.
"""

from __future__ import annotations

import gc
import io
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from datetime import time as day_time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from generalAgent.display import N_, Message
from generalAgent.documents.reading import OLD_OFFICE, DocumentError, OpenFile, open_plainly
from generalAgent.documents.table_grids import Grid, csv_rows, docx_grids, xlsx_grids
from generalAgent.documents.workbook import SHEET_SUFFIXES

if TYPE_CHECKING:
    from generalAgent.config.settings import DocumentSettings

TABLE_SUFFIXES = SHEET_SUFFIXES | {".csv", ".tsv", ".docx", ".pdf"}
# A sheet beyond this many cells is refused rather than loaded: the whole database lives in
# memory (50k rows x 20 columns is 1M cells, a few tens of MB).
MAX_TABLE_CELLS = 5_000_000
# Header rows above the data: a merged group header ("Sales" over Q1..Q4) and the names.
MAX_HEADER_ROWS = 3
QUERY_SECONDS = 5.0
DEFAULT_ROWS = 100
MAX_ROWS = 1_000
MAX_CELL_CHARS = 200
# No value a query builds may be longer than this (a recursive CTE doubling a string).
MAX_VALUE_BYTES = 1_000_000
# How often (in SQLite VM instructions) the time limit is checked; cheap, and well under a ms.
_PROGRESS_STEPS = 10_000

# What the model's SELECT may do: read columns, select, call (scalar/aggregate) functions,
# and recurse in a CTE (bounded by the time limit). Everything else is denied.
_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
_ALLOWED_ACTIONS.add(_RECURSIVE)
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


class QueryRefused(Exception):
    """The query cannot run: a write, a second statement, a syntax error, over time."""


@dataclass
class Column:
    name: str
    sql_type: str  # INTEGER | REAL | TEXT
    note: str = ""


@dataclass
class Table:
    name: str
    source: str  # "sheet Sales", "file data.csv", "table 2"
    columns: list[Column]
    rows: int
    header_rows: int = 1
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line per column, as the model needs them to write a query."""
        lines = [f'table "{self.name}" ({self.source}; {self.rows:,} rows)']
        if self.notes:
            lines.append("  " + " ".join(self.notes))
        for column in self.columns:
            line = f'  "{column.name}" {column.sql_type}'
            if column.note:
                line += f"  -- {column.note}"
            lines.append(line)
        return "\n".join(lines)


@dataclass
class QueryResult:
    sql: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    more: bool  # rows were left off
    seconds: float


class TableDatabase:
    """The tables of one file, loaded into a private in-memory SQLite database."""

    def __init__(
        self, tables: list[Table], connection: sqlite3.Connection, notes: list[Message] | None = None
    ) -> None:
        self.tables = tables
        self.notes = notes or []  # what of the file could not be read (a scan without OCR)
        self._connection = connection
        self._lock = threading.Lock()  # a connection serves one query at a time

    def describe(self) -> str:
        return "\n".join(
            [*(note.english() for note in self.notes), *(table.describe() for table in self.tables)]
        )

    def close(self) -> None:
        self._connection.close()

    def query(self, sql: str, max_rows: int = DEFAULT_ROWS, seconds: float = QUERY_SECONDS) -> QueryResult:
        """Run one read-only SELECT; `QueryRefused` says why it cannot run or was stopped."""
        statement = sql.strip().rstrip(";").strip()
        if not statement:
            raise QueryRefused("the query is empty; send one SELECT statement.")
        if not sqlite3.complete_statement(statement + ";"):
            raise QueryRefused("the query is incomplete (an unclosed quote or parenthesis?).")
        max_rows = max(1, min(max_rows, MAX_ROWS))
        with self._lock:
            deadline = time.monotonic() + seconds
            stopped = [False]

            def over_time() -> int:
                if time.monotonic() > deadline:
                    stopped[0] = True
                    return 1
                return 0

            self._connection.set_progress_handler(over_time, _PROGRESS_STEPS)
            self._connection.set_authorizer(_authorize)
            started = time.perf_counter()
            try:
                cursor = self._connection.execute(statement)
                fetched = cursor.fetchmany(max_rows + 1)
                names = [d[0] for d in cursor.description or []]
                cursor.close()
            except (sqlite3.Warning, sqlite3.ProgrammingError) as exc:  # "only one statement at a time"
                raise QueryRefused(f"{str(exc).rstrip('.')}; send a single SELECT.") from None
            except sqlite3.DatabaseError as exc:
                if stopped[0]:
                    raise QueryRefused(
                        f"the query ran past {seconds:g} s and was stopped; "
                        "narrow it (WHERE, LIMIT) or drop a recursive part."
                    ) from None
                message = str(exc)
                if (
                    "not authorized" in message
                    or "authorization denied" in message
                    or "prohibited" in message
                ):
                    raise QueryRefused(
                        "only a read-only SELECT is allowed (no writes, ATTACH, PRAGMA or extensions)."
                    ) from None
                raise QueryRefused(f"SQLite: {message.rstrip('.')}.") from None
            finally:
                self._connection.set_authorizer(None)
                self._connection.set_progress_handler(None, 0)
        return QueryResult(
            sql=statement,
            columns=names,
            rows=fetched[:max_rows],
            more=len(fetched) > max_rows,
            seconds=time.perf_counter() - started,
        )


def _authorize(
    action: int, first: str | None, second: str | None, database: str | None, source: str | None
) -> int:
    if action not in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (second or "").lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_READ and database not in (None, "main", "temp"):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def render_result(result: QueryResult, shown_as: str) -> str:
    """The answer as the model reads it: the query, a pipe table, and how many rows."""
    lines = [f"{shown_as}: SQL", result.sql, ""]
    if not result.columns:
        return "\n".join([*lines, "(the statement returned no columns)"])
    lines.append(" | ".join(result.columns))
    lines.append(" | ".join("---" for _ in result.columns))
    lines.extend(" | ".join(_cell(value) for value in row) for row in result.rows)
    count = len(result.rows)
    if result.more:
        lines.append(
            f"({count} rows shown; more rows matched: aggregate, add WHERE, or raise max_rows up to {MAX_ROWS})"
        )
    else:
        lines.append(f"({count} row{'s' if count != 1 else ''})")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        text = repr(value) if not value.is_integer() or abs(value) >= 1e16 else f"{value:.1f}"
    elif isinstance(value, bytes):
        text = f"<{len(value)} bytes>"
    else:
        text = " ".join(str(value).split())
    text = text.replace("|", "\\|")
    return text if len(text) <= MAX_CELL_CHARS else text[:MAX_CELL_CHARS] + "…"


# -- loading ---------------------------------------------------------------------------------
def load_tables(
    path: Path,
    open_file: OpenFile = open_plainly,
    max_cells: int = MAX_TABLE_CELLS,
    settings: DocumentSettings | None = None,
) -> TableDatabase:
    """The tables of the file at `path` in a fresh in-memory database; `DocumentError` if
    the file holds none or is not a table format. With `settings`, a PDF's scanned pages
    are read by OCR for their tables (table_files.pdf_tables)."""
    suffix = path.suffix.lower()
    if OLD_OFFICE.get(suffix, suffix) not in TABLE_SUFFIXES:
        raise DocumentError(
            N_(
                "{name} is not a table file; query_table reads XLSX sheets, CSV/TSV files, DOCX and PDF tables."
            ),
            name=path.name,
        )
    opened: Callable[[Path], BinaryIO] = open_file
    if suffix in OLD_OFFICE:  # .doc, .wps: read as the .docx LibreOffice makes
        from generalAgent.documents.convert import convert_legacy_office

        modern = convert_legacy_office(path, open_file)
        suffix = OLD_OFFICE[suffix]
        opened = lambda _path: io.BytesIO(modern)  # noqa: E731 - the converted bytes stand for the file
    notes: list[Message] = []
    with _cells_without_cycle_collection():
        headers: dict[str, int] = {}  # a PDF table's header rows, known from its layout
        with opened(path) as handle:
            if suffix == ".pdf":
                from generalAgent.documents.table_files import pdf_tables

                grids: list[Grid] = []
                for found in pdf_tables(handle, path, settings, notes):
                    grids.append((found.name, found.source, [*found.header, *found.rows], {}))
                    headers[found.name] = len(found.header)
            elif suffix in SHEET_SUFFIXES:
                grids = list(xlsx_grids(handle, path, max_cells))
            elif suffix == ".docx":
                grids = list(docx_grids(handle, path))
            else:
                rows = csv_rows(handle, path, suffix, max_cells)
                grids = [(path.stem or "data", f"file {path.name}", rows, {})]
        connection = sqlite3.connect(":memory:", check_same_thread=False)
        tables: list[Table] = []
        used: set[str] = set()
        for name, source, rows, formulas in grids:
            table = _store(connection, _unique(name, used), source, rows, formulas, headers.get(name))
            if table is not None:
                tables.append(table)
    if not tables:
        connection.close()
        if notes:  # a scan whose tables OCR could not read: say why, not only "no table"
            raise DocumentError(notes[0].template, **notes[0].fields)
        raise DocumentError(N_("{name} holds no table with data."), name=path.name)
    connection.execute("PRAGMA query_only = ON")
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    return TableDatabase(tables, connection, notes)


@contextmanager
def _cells_without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while a sheet's cells are read and stored: a 50k-row
    sheet allocates a million lists and tuples, none in a cycle, and the collector walking
    them again and again costs a fifth of the load (more as the sheet grows). It is resumed
    (if it ran before) however the load ends."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def _unique(name: str, used: set[str]) -> str:
    base = " ".join(name.replace('"', "'").split()) or "table"
    candidate, n = base, 2
    while candidate.lower() in used:
        candidate, n = f"{base}_{n}", n + 1
    used.add(candidate.lower())
    return candidate


# -- typing and storing --------------------------------------------------------------------
def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def header_rows(rows: list[list[Any]]) -> tuple[int, int]:
    """(first header row, number of header rows) of a grid.

    A title above the table (one filled cell in a wide sheet) is skipped; the header is
    the run of rows without numbers or dates that follows, up to MAX_HEADER_ROWS (a
    merged group header over the column names); a grid of text only has one header row."""
    width = max((len(r) for r in rows), default=0)
    start = 0
    while (
        start < len(rows) - 1
        and width > 2
        and sum(v is not None and str(v).strip() != "" for v in rows[start]) <= 1
        and start < 5
    ):
        start += 1
    count = 0
    for row in rows[start : start + MAX_HEADER_ROWS]:
        if any(_is_number(v) or isinstance(v, (datetime, date, day_time, timedelta)) for v in row):
            break
        count += 1
    if count == 0 or start + count >= len(rows):
        count = 1
    return start, count


def column_names(header: list[list[Any]], width: int) -> list[str]:
    """Column names from the header rows: an upper row's merged label (written once, in
    its first column) carries on to the right until the next label, and the rows' labels
    of one column are joined ("Sales Q1"); an unnamed column is called by its letter."""
    filled: list[list[str]] = []
    for depth, row in enumerate(header):
        cells = [("" if v is None else " ".join(str(v).split())) for v in row] + [""] * (width - len(row))
        if depth < len(header) - 1:  # merged cells leave the columns after the first empty
            carry = ""
            for i, text in enumerate(cells):
                carry = text or carry
                cells[i] = carry
        filled.append(cells[:width])
    names: list[str] = []
    used: set[str] = set()
    for column in range(width):
        parts: list[str] = []
        for row in filled:
            if row[column] and (not parts or parts[-1] != row[column]):
                parts.append(row[column])
        name = " ".join(parts).replace('"', "'") or _column_letter(column)
        names.append(_unique(name, used))
    return names


def _column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _sql_value(value: Any) -> Any:
    if value is None or isinstance(value, (int, float, str)):
        return value.strip() or None if isinstance(value, str) else value
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (date, day_time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    return str(value)


def _store(
    connection: sqlite3.Connection,
    name: str,
    source: str,
    grid: list[list[Any]],
    formulas: dict[tuple[int, int], str],
    header: int | None = None,
) -> Table | None:
    rows = [r for r in grid]
    while rows and all(v is None or (isinstance(v, str) and not v.strip()) for v in rows[-1]):
        rows.pop()
    if not rows:
        return None
    start, count = (0, header) if header else header_rows(rows)
    width = max(len(r) for r in rows[start:])
    while width and all(len(r) < width or r[width - 1] is None for r in rows[start:]):
        width -= 1
    if width == 0:
        return None
    names = column_names(rows[start : start + count], width)
    body_start = start + count
    padding = [None] * width
    plain = (int, float, type(None))  # most cells: stored as they are, without a call each
    body = [
        [
            v if (kind := type(v)) in plain else (v.strip() or None) if kind is str else _sql_value(v)
            for v in cells
        ]
        for cells in (
            (r[:width] if len(r) >= width else r + padding[: width - len(r)]) for r in rows[body_start:]
        )
        if any(v is not None and v != "" for v in cells)
    ]
    by_column = list(zip(*body, strict=True)) if body else [() for _ in range(width)]
    # 3.0 in an INTEGER column is stored as 3 by SQLite itself (INTEGER affinity).
    columns = [_column(names[i], by_column[i]) for i in range(width)]
    uncached: dict[int, list[tuple[int, str]]] = {}
    for (row, column), formula in formulas.items():
        if row >= body_start and column < width:
            uncached.setdefault(column, []).append((row, formula))
    for column, cells in uncached.items():
        row, formula = min(cells)
        extra = (
            f"{len(cells):,} formula cells have no cached value (the file was never recalculated) "
            f"and are NULL, e.g. row {row + 1}: {formula[:80]}"
        )
        columns[column].note = "; ".join(n for n in (columns[column].note, extra) if n)
    definition = ", ".join(f'"{c.name}" {c.sql_type}' for c in columns)
    connection.execute(f'CREATE TABLE "{name}" ({definition})')
    connection.executemany(f'INSERT INTO "{name}" VALUES ({", ".join("?" * width)})', body)
    connection.commit()
    notes = []
    if (count > 1 or start) and not header:  # a PDF table's header is its own, not rows of a sheet
        notes.append(f"header: rows {start + 1}-{start + count} of the {source.split()[0]}.")
    return Table(name=name, source=source, columns=columns, rows=len(body), header_rows=count, notes=notes)


def _column(name: str, values: Sequence[Any]) -> Column:
    """A column's SQL type from its values, and a note when they mix numbers and text."""
    numbers = texts = 0
    whole = True  # every number is an integer (3.0 counts)
    examples: list[str] = []
    for value in values:  # one pass, by exact type: most cells are int or float
        kind = type(value)
        if kind is int:
            numbers += 1
        elif kind is float:
            numbers += 1
            whole = whole and value.is_integer()
        elif value is None:
            continue
        elif isinstance(value, str):
            texts += 1
            if len(examples) < 50:
                examples.append(value)
        elif _is_number(value):  # an int or float subclass (not bool)
            numbers += 1
            whole = whole and float(value).is_integer()
    if numbers and not texts:
        return Column(name, "INTEGER" if whole else "REAL")
    if numbers and texts:
        sample = ", ".join(repr(t) for t in dict.fromkeys(examples))
        return Column(
            name,
            "NUMERIC",
            f"mixed: {numbers:,} numbers and {texts:,} text values (e.g. {sample[:120]}); "
            "text stays text, filter with typeof(col) = 'integer' or 'real' before arithmetic",
        )
    return Column(name, "TEXT")
