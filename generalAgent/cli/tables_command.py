"""`generalagent tables`: every table of a PDF, DOCX, XLSX or CSV file, without a model.

    generalagent tables report.pdf            # each table as a Markdown table
    generalagent tables report.pdf --json     # one JSON object per line and table

A PDF's tables are read as grids (documents/pdf_tables.py), each printed once with the pages
it spans; `--json` prints `{"file", "pages", "caption", "header", "rows", "ocr"}` per table, one a
line, for a script to read. A scanned page's tables are read by OCR where it is installed
(`ocr` true); without it a line says which pages could not be read. Messages go to
stderr, tables to stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from generalAgent.cli.subcommands import EXIT_FAILED, fail, settings_from
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.i18n import _, ngettext


def register(app: typer.Typer) -> None:
    app.command("tables", help=_("Print every table of a PDF, DOCX, XLSX or CSV file."))(tables_command)


def tables_command(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help=_("The file whose tables to print"))],
    as_json: Annotated[
        bool, typer.Option("--json", help=_("One JSON object per table: file, pages, caption, header, rows"))
    ] = False,
) -> None:
    # A bad setting or an untrusted folder's configuration is said as for every command.
    settings = settings_from(ctx)
    from generalAgent.display import Message
    from generalAgent.documents.reading import DocumentError
    from generalAgent.documents.table_files import file_tables

    if not file.is_file():
        fail(
            _("{name} is not a file; give the path of a PDF, DOCX, XLSX or CSV file.").format(name=file),
            EXIT_FAILED,
        )
    notes: list[Message] = []  # pages OCR could not read (a scan without OCR installed)
    try:
        tables = file_tables(file, settings=settings.documents, notes=notes)
    except DocumentError as exc:
        fail(exc.shown(_, ngettext), EXIT_FAILED)
    out = terminal_console(highlight=False, soft_wrap=True)
    err = terminal_console(stderr=True, highlight=False, soft_wrap=True)
    for note in notes:
        err.print(note.shown(_, ngettext), markup=False)
    if as_json:
        for table in tables:
            print(json.dumps(table.as_json(str(file)), ensure_ascii=False))
        return
    if not tables:
        err.print(_("No table found in {name}.").format(name=file.name), markup=False)
        return
    for number, table in enumerate(tables, start=1):
        title = [f"{file.name} · {table.name}"]
        if table.pages:
            first, last = table.pages[0], table.pages[-1]
            title.append(
                _("page {page}").format(page=first)
                if first == last
                else _("pages {first}–{last}").format(first=first, last=last)
            )
        if table.caption and table.caption != table.name:
            title.append(table.caption)
        if table.ocr:
            title.append(_("read by OCR: a cell may be misread"))
        if number > 1:
            out.print()
        out.print(" · ".join(title), markup=False, style="bold")
        out.print(_markdown(table.column_names(), table.rows), markup=False)


def _markdown(names: list[str], rows: list[list[Any]]) -> str:
    def cell(value: Any) -> str:
        return "" if value is None else " ".join(str(value).split()).replace("|", "\\|")

    lines = ["| " + " | ".join(cell(n) for n in names) + " |", "| " + " | ".join("---" for _ in names) + " |"]
    width = len(names)
    lines.extend(
        "| " + " | ".join(cell(v) for v in [*row, *[None] * (width - len(row))][:width]) + " |"
        for row in rows
    )
    return "\n".join(lines)
