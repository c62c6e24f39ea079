"""query_table: exact answers from a sheet, a CSV or a document's (DOCX, PDF) tables, by one read-only SELECT.

The file's tables are loaded once into an in-memory SQLite database (documents/tables.py)
and kept, by the hash of the file's bytes, for the next questions of the session: loading a
50k-row sheet costs most of a second, a GROUP BY over it milliseconds. The same bytes under
another name (a copy in uploads/) are not loaded again; a changed file is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError, said_of

if TYPE_CHECKING:
    from generalAgent.documents.tables import TableDatabase

# Loaded files kept in memory (each one database); the oldest goes first.
KEPT_TABLE_FILES = 4
# Rows returned when the model does not say (the schema's default, as the docstring says).
# The table engine (documents/tables.py, table_grids) loads on the first call, not with
# the schema, so this default cannot be read from it; tables.py caps what is asked.
DEFAULT_ROWS = 100


def create_tool(env: ToolEnvironment) -> BaseTool:
    loaded: OrderedDict[str, TableDatabase] = OrderedDict()  # file hash -> its tables
    hashes: OrderedDict[tuple[str, int, int], str] = OrderedDict()  # (path, mtime, size) -> hash
    lock = threading.Lock()

    def tables_of(path: str, runtime: ToolRuntime) -> tuple[TableDatabase, str]:
        workspace = env.workspace(runtime)
        real = workspace.resolve(path)
        shown = workspace.display(real)
        if not real.is_file():
            raise ToolError(
                N_("{path} is not a file in the workspace; list_workspace_files shows what is there."),
                path=shown,
            )
        stat = real.stat()
        from generalAgent.documents.index import compute_file_hash
        from generalAgent.documents.reading import DocumentError
        from generalAgent.documents.tables import load_tables

        with lock:
            known = (str(real), stat.st_mtime_ns, stat.st_size)
            key = hashes.get(known)
            if key is None:
                key = hashes[known] = compute_file_hash(real, workspace.open_for_reading)
                while len(hashes) > KEPT_TABLE_FILES * 8:
                    hashes.popitem(last=False)
            database = loaded.get(key)
            if database is None:
                try:
                    database = load_tables(real, workspace.open_for_reading, settings=env.settings.documents)
                except DocumentError as exc:
                    raise ToolError.of(exc) from exc
                loaded[key] = database
                while len(loaded) > KEPT_TABLE_FILES:
                    loaded.popitem(last=False)[1].close()
            loaded.move_to_end(key)
        return database, shown

    @tool("query_table")
    def query_table(file_path: str, runtime: ToolRuntime, sql: str = "", max_rows: int = DEFAULT_ROWS) -> str:
        """Compute exact answers over a table file with one read-only SQLite SELECT.

        Works on XLSX sheets (one table per sheet, named after the sheet), CSV/TSV files
        (one table named after the file) and the tables of a DOCX or a PDF (table_1,
        table_2, ...; a PDF table is listed with its pages and caption, merged across
        the pages it spans).
        Use it for sums, counts, averages, group-bys, filters and lookups instead of
        adding numbers from a preview. Call it first without sql to see the tables, their
        columns and types; quote names with double quotes: SELECT "Region", SUM("Q3") FROM
        "Sales" GROUP BY "Region". Only SELECT (and WITH) is allowed; no writes.

        Args:
            file_path: workspace path, e.g. uploads/sales.xlsx
            sql: one SELECT statement; leave empty to list the tables and columns
            max_rows: rows to return (default 100, at most 1000)
        """
        from generalAgent.documents.tables import MAX_ROWS, QueryRefused, render_result

        database, shown = tables_of(file_path, runtime)
        if not sql.strip():
            return f"{shown}: tables (query them with sql=...)\n{database.describe()}"
        try:
            result = database.query(sql, max_rows=max(1, min(max_rows, MAX_ROWS)))
        except QueryRefused as exc:
            raise ToolError(
                N_("{problem}\nTables of {path}:\n{tables}"),
                problem=said_of(exc),
                path=shown,
                tables=database.describe(),
            ) from exc
        return render_result(result, shown)

    return query_table
