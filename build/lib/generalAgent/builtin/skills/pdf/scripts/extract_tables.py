"""Extract the tables of a PDF as Markdown, CSV files or JSON, with the page each came from.

PDFium (pypdfium2) gives text but no table structure, so tables come from pdfplumber, which
rebuilds cells from ruling lines (or, with --strategy text, from the alignment of words). Where
pdfplumber's text engine (pdfminer) cannot map a font's glyphs to characters - it then writes
"(cid:123)", which happens with Chinese CID fonts - the cells are read again with PDFium, which
maps them, so a table's text matches what extract_text.py prints.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
from _pdf_access import (
    EXIT_PASSWORD,
    EXIT_USAGE,
    PdfSkillError,
    describe_pages,
    load_page,
    normalise_text,
    opened_pdf,
    output_path,
    parse_page_ranges,
    password_from,
    plural,
    run_cli,
    shown,
)

try:
    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect
except ImportError:
    sys.exit(
        f"error: pdfplumber is not installed for {sys.executable}; "
        "run the script with the Python that runs generalAgent."
    )

# "text" finds tables without ruling lines, at the price of also finding some in plain columns.
STRATEGIES = {
    "lines": {"vertical_strategy": "lines", "horizontal_strategy": "lines"},
    "text": {"vertical_strategy": "text", "horizontal_strategy": "text"},
}


@dataclass(frozen=True)
class FoundTable:
    page: int
    index: int
    rows: list[list[str]]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Find the tables in a PDF and print them as Markdown, or save CSV/JSON.",
        epilog="Examples: extract_tables.py uploads/report.pdf --pages 2-4 ; "
        "extract_tables.py uploads/report.pdf --format csv --output outputs/tables/",
    )
    parser.add_argument("pdf", help="the PDF, e.g. uploads/report.pdf")
    parser.add_argument("--pages", help="1-based pages, e.g. 1-3,7 (default: all)")
    parser.add_argument("--password", help="password of an encrypted PDF (or set PDF_PASSWORD)")
    parser.add_argument(
        "--format",
        choices=("markdown", "csv", "json"),
        default="markdown",
        help="markdown (default, printed or saved), csv (one file per table into the --output "
        "folder), json ([{page, table, rows}])",
    )
    parser.add_argument(
        "--output",
        "-o",
        help="a file for markdown/json, a folder for csv; under outputs/ or temp/",
    )
    parser.add_argument(
        "--strategy",
        choices=tuple(STRATEGIES),
        default="lines",
        help="lines: tables drawn with ruling lines (default); text: borderless tables",
    )
    return parser


def clean_rows(raw_rows: list[list[str | None]]) -> list[list[str]]:
    """Cells as strings (empty for merged-away cells), dropping rows that are entirely empty."""
    rows = [[(cell or "").strip() for cell in row] for row in raw_rows]
    return [row for row in rows if any(row)]


def unmapped(rows: list[list[str | None]]) -> bool:
    return any("(cid:" in (cell or "") for row in rows for cell in row)


def cells_read_by_pdfium(table: Any, page_height: float, textpage: Any) -> list[list[str | None]]:
    """The table's cells read by PDFium; pdfplumber's top-down y becomes PDF's bottom-up y."""
    rows: list[list[str | None]] = []
    for row in table.rows:
        cells: list[str | None] = []
        for box in row.cells:
            if box is None:
                cells.append(None)
                continue
            x0, top, x1, bottom = box
            text = textpage.get_text_bounded(
                left=x0, bottom=page_height - bottom, right=x1, top=page_height - top
            )
            cells.append(normalise_text(text).strip())
        rows.append(cells)
    return rows


def find_tables(
    path: str, pdf: pdfium.PdfDocument, password: str | None, indices: list[int], strategy: str
) -> list[FoundTable]:
    found: list[FoundTable] = []
    try:
        with pdfplumber.open(path, password=password or "") as document:
            for index in indices:
                page = document.pages[index]
                tables = []
                textpage = None
                for table in page.find_tables(table_settings=STRATEGIES[strategy]):
                    rows = table.extract()
                    if unmapped(rows) and page.rotation == 0:
                        textpage = textpage or load_page(pdf, index, path).get_textpage()
                        rows = cells_read_by_pdfium(table, page.height, textpage)
                    tables.append(rows)
                kept = [rows for rows in map(clean_rows, tables) if rows]
                found.extend(
                    FoundTable(page=index + 1, index=n, rows=rows) for n, rows in enumerate(kept, 1)
                )
    except PDFPasswordIncorrect as error:
        raise PdfSkillError(
            f"{path}: wrong password for table extraction.", EXIT_PASSWORD
        ) from error
    return found


def markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def as_markdown(table: FoundTable) -> str:
    width = max(len(row) for row in table.rows)
    rows = [row + [""] * (width - len(row)) for row in table.rows]
    lines = [f"### Page {table.page}, table {table.index} ({len(rows)} rows x {width} columns)", ""]
    lines.append("| " + " | ".join(markdown_cell(cell) for cell in rows[0]) + " |")
    lines.append("|" + "---|" * width)
    lines.extend("| " + " | ".join(markdown_cell(cell) for cell in row) + " |" for row in rows[1:])
    return "\n".join(lines) + "\n"


def write_csv_files(tables: list[FoundTable], folder: str, stem: str) -> list[str]:
    target = output_path(folder, folder=True)
    written = []
    for table in tables:
        file = target / f"{stem}-page-{table.page:03d}-table-{table.index}.csv"
        # UTF-8 with a BOM: Excel otherwise opens Chinese CSV text as GBK mojibake.
        with file.open("w", encoding="utf-8-sig", newline="") as handle:
            csv.writer(handle).writerows(table.rows)
        written.append(shown(file))
    return written


def main() -> int:
    args = build_parser().parse_args()
    if args.format == "csv" and not args.output:
        raise PdfSkillError(
            "--format csv writes one file per table: give a folder, e.g. --output outputs/tables/",
            EXIT_USAGE,
        )
    password = password_from(args.password)
    with opened_pdf(args.pdf, password) as pdf:
        indices = parse_page_ranges(args.pages, len(pdf))
        tables = find_tables(args.pdf, pdf, password, indices, args.strategy)

    if not tables:
        hint = (
            " Try --strategy text if the tables have no ruling lines."
            if args.strategy == "lines"
            else ""
        )
        print(f"No tables found on {describe_pages(indices)} of {args.pdf}.{hint}")
        return 0

    if args.format == "csv":
        written = write_csv_files(tables, args.output, Path(args.pdf).stem)
        print(f"Wrote {plural(len(written), 'table')} as CSV (UTF-8): " + ", ".join(written))
        return 0

    if args.format == "json":
        records = [{"page": t.page, "table": t.index, "rows": t.rows} for t in tables]
        rendered = json.dumps(records, ensure_ascii=False, indent=1) + "\n"
    else:
        rendered = "\n".join(as_markdown(table) for table in tables)

    if args.output:
        target = output_path(args.output)
        target.write_text(rendered, encoding="utf-8")
        pages = describe_pages(sorted({t.page - 1 for t in tables}))
        print(f"Wrote {plural(len(tables), 'table')} from {pages} to {shown(target)}.")
    else:
        sys.stdout.write(rendered)
    return 0


if __name__ == "__main__":
    run_cli(main)
