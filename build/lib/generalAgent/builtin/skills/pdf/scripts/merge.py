"""Merge PDFs (whole, or chosen pages of each) into one new PDF, in the order given."""

from __future__ import annotations

import argparse
from pathlib import Path

import pypdfium2 as pdfium
from _pdf_access import (
    EXIT_USAGE,
    PAGE_SPEC,
    PdfSkillError,
    is_encrypted,
    open_pdf,
    output_path,
    parse_page_ranges,
    password_from,
    plural,
    run_cli,
    shown,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Merge PDFs into one. Each input is FILE or FILE:PAGES (e.g. a.pdf:1-3).",
        epilog="Example: merge.py uploads/cover.pdf uploads/report.pdf:2-9 uploads/annex.pdf "
        "--output outputs/combined.pdf",
    )
    parser.add_argument("inputs", nargs="+", help="PDFs in order; FILE or FILE:PAGES")
    parser.add_argument(
        "--output", "-o", required=True, help="the new .pdf, under outputs/ or temp/"
    )
    parser.add_argument(
        "--password", help="password for encrypted inputs (or set PDF_PASSWORD); tried on each"
    )
    return parser


def split_input(argument: str) -> tuple[str, str | None]:
    """ "a.pdf:1-3" -> ("a.pdf", "1-3"); a file whose own name has a colon is taken whole."""
    if Path(argument).exists() or ":" not in argument:
        return argument, None
    path, _, pages = argument.rpartition(":")
    if PAGE_SPEC.match(pages):
        return path, pages
    return argument, None


def main() -> int:
    args = build_parser().parse_args()
    if len(args.inputs) < 2:
        raise PdfSkillError(
            "merge needs at least two inputs; to take pages from one PDF use split.py --pages.",
            EXIT_USAGE,
        )
    target = output_path(args.output, suffix=".pdf")
    password = password_from(args.password)
    sources: list[pdfium.PdfDocument] = []
    merged = pdfium.PdfDocument.new()
    try:
        any_encrypted = False
        for argument in args.inputs:
            path, spec = split_input(argument)
            if Path(path).exists() and Path(path).resolve() == target:
                raise PdfSkillError(
                    f"{args.output}: is one of the inputs; choose another name.", EXIT_USAGE
                )
            source = open_pdf(path, password)
            sources.append(source)
            any_encrypted = any_encrypted or is_encrypted(source)
            indices = parse_page_ranges(spec, len(source))
            merged.import_pages(source, pages=indices, index=len(merged))
        merged.save(target)
        print(
            f"Merged {plural(len(args.inputs), 'input')} into {shown(target)} "
            f"({plural(len(merged), 'page')})."
        )
        if any_encrypted:
            print("note: some inputs are password-protected; the merged PDF is not.")
    finally:
        merged.close()
        for source in sources:
            source.close()
    return 0


if __name__ == "__main__":
    run_cli(main)
