"""Extract the text of a PDF page by page, keeping page numbers (Chinese and English alike)."""

from __future__ import annotations

import argparse
import json
import sys

from _pdf_access import (
    EXIT_NO_TEXT,
    PdfSkillError,
    describe_pages,
    load_page,
    normalise_text,
    opened_pdf,
    output_path,
    parse_page_ranges,
    password_from,
    run_cli,
    shown,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Print (or save) the text of a PDF, page by page, with page numbers.",
        epilog="Example: python skills/pdf/scripts/extract_text.py uploads/report.pdf "
        "--pages 1-3 --output temp/report.txt",
    )
    parser.add_argument("pdf", help="the PDF, e.g. uploads/report.pdf")
    parser.add_argument("--pages", help="1-based pages, e.g. 1-3,7,9- (default: all)")
    parser.add_argument("--password", help="password of an encrypted PDF (or set PDF_PASSWORD)")
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help='text: "=== page N / TOTAL ===" headers (default); json: [{"page", "text"}]',
    )
    parser.add_argument(
        "--output", "-o", help="write here (under outputs/ or temp/) instead of printing"
    )
    return parser


def main() -> int:
    args = build_parser().parse_args()
    with opened_pdf(args.pdf, password_from(args.password)) as pdf:
        total = len(pdf)
        indices = parse_page_ranges(args.pages, total)
        texts: list[tuple[int, str]] = []
        for index in indices:
            page = load_page(pdf, index, args.pdf)
            textpage = page.get_textpage()
            texts.append((index + 1, normalise_text(textpage.get_text_range())))
            textpage.close()
            page.close()

    empty = [number - 1 for number, text in texts if not text]
    if len(empty) == len(texts):
        raise PdfSkillError(
            f"{args.pdf}: no text layer on {describe_pages(indices)}; the PDF looks scanned "
            "(image-only) and there is no OCR here. render_pages.py turns pages into PNG images.",
            EXIT_NO_TEXT,
        )

    if args.format == "json":
        records = [{"page": number, "text": text} for number, text in texts]
        rendered = json.dumps(records, ensure_ascii=False, indent=1) + "\n"
    else:
        rendered = "\n".join(
            f"=== page {number} / {total} ===\n"
            f"{text or '(no text on this page: a scanned image?)'}\n"
            for number, text in texts
        )

    if args.output:
        target = output_path(args.output)
        target.write_text(rendered, encoding="utf-8")
        characters = sum(len(text) for _, text in texts)
        print(
            f"Wrote the text of {len(texts)} of {total} pages ({characters:,} characters) "
            f"to {shown(target)}."
        )
    else:
        sys.stdout.write(rendered)
    if empty:
        print(
            f"note: no text layer on {describe_pages(empty)} (scanned images?).",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    run_cli(main)
