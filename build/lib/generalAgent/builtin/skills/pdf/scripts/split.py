"""Split a PDF: copy chosen pages into a new PDF, or cut it into parts of N pages each."""

from __future__ import annotations

import argparse
from pathlib import Path

import pypdfium2 as pdfium
from _pdf_access import (
    EXIT_USAGE,
    PdfSkillError,
    describe_pages,
    is_encrypted,
    opened_pdf,
    output_path,
    parse_page_ranges,
    password_from,
    plural,
    run_cli,
    shown,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Copy pages of a PDF into a new PDF (--pages), or cut it into parts (--every).",
        epilog="Examples: split.py uploads/report.pdf --pages 1-3,7 --output outputs/summary.pdf ; "
        "split.py uploads/report.pdf --every 10 --output outputs/report-parts/",
    )
    parser.add_argument("pdf", help="the PDF, e.g. uploads/report.pdf")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--pages", help="1-based pages for one new PDF, in this order: 1-3,7,9-")
    what.add_argument("--every", type=int, metavar="N", help="cut into parts of N pages each")
    parser.add_argument(
        "--output",
        "-o",
        required=True,
        help="with --pages a .pdf file, with --every a folder; under outputs/ or temp/",
    )
    parser.add_argument("--password", help="password of an encrypted PDF (or set PDF_PASSWORD)")
    return parser


def write_pages(source: pdfium.PdfDocument, indices: list[int], target: Path) -> None:
    part = pdfium.PdfDocument.new()
    try:
        part.import_pages(source, pages=indices)
        part.save(target)
    finally:
        part.close()


def refuse_overwriting_input(target: Path, source: str) -> None:
    if target.exists() and target.resolve() == Path(source).resolve():
        raise PdfSkillError(f"{shown(target)}: is the input PDF; choose another name.", EXIT_USAGE)


def main() -> int:
    args = build_parser().parse_args()
    if args.every is not None and args.every < 1:
        raise PdfSkillError("--every needs a page count of 1 or more.", EXIT_USAGE)
    with opened_pdf(args.pdf, password_from(args.password)) as source:
        total = len(source)
        if args.pages is not None:
            indices = parse_page_ranges(args.pages, total)
            target = output_path(args.output, suffix=".pdf")
            refuse_overwriting_input(target, args.pdf)
            write_pages(source, indices, target)
            count = plural(len(indices), "page")
            print(f"Wrote {shown(target)}: {count} ({describe_pages(indices)}).")
        else:
            folder = output_path(args.output, folder=True)
            stem = Path(args.pdf).stem
            written = []
            for start in range(0, total, args.every):
                indices = list(range(start, min(start + args.every, total)))
                first, last = indices[0] + 1, indices[-1] + 1
                name = f"{stem}-p{first}.pdf" if first == last else f"{stem}-p{first}-{last}.pdf"
                target = folder / name
                refuse_overwriting_input(target, args.pdf)
                write_pages(source, indices, target)
                written.append(shown(target))
            print(
                f"Wrote {plural(len(written), 'file')} of up to {plural(args.every, 'page')} each:"
            )
            print("\n".join(written))
        if is_encrypted(source):
            print("note: the source PDF is password-protected; the new files are not.")
    return 0


if __name__ == "__main__":
    run_cli(main)
