"""Render PDF pages to PNG images: scanned PDFs, previews, pages the user wants as pictures."""

from __future__ import annotations

import argparse
from pathlib import Path

from _pdf_access import (
    EXIT_USAGE,
    PdfSkillError,
    load_page,
    opened_pdf,
    output_path,
    parse_page_ranges,
    password_from,
    plural,
    run_cli,
    shown,
)

POINTS_PER_INCH = 72


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Render pages of a PDF to PNG files, one per page.",
        epilog="Example: render_pages.py uploads/scan.pdf --pages 1-2 --output outputs/scan-pages/",
    )
    parser.add_argument("pdf", help="the PDF, e.g. uploads/report.pdf")
    parser.add_argument("--pages", help="1-based pages, e.g. 1-3,7 (default: all)")
    parser.add_argument(
        "--output", "-o", required=True, help="folder for the PNG files, under outputs/ or temp/"
    )
    parser.add_argument(
        "--dpi", type=int, default=150, help="resolution, 36-600 (default 150: readable on screen)"
    )
    parser.add_argument("--password", help="password of an encrypted PDF (or set PDF_PASSWORD)")
    return parser


def main() -> int:
    args = build_parser().parse_args()
    if not 36 <= args.dpi <= 600:
        raise PdfSkillError("--dpi must be between 36 and 600.", EXIT_USAGE)
    folder = output_path(args.output, folder=True)
    stem = Path(args.pdf).stem
    written = []
    with opened_pdf(args.pdf, password_from(args.password)) as pdf:
        indices = parse_page_ranges(args.pages, len(pdf))
        digits = max(3, len(str(len(pdf))))
        for index in indices:
            page = load_page(pdf, index, args.pdf)
            bitmap = page.render(scale=args.dpi / POINTS_PER_INCH)
            target = folder / f"{stem}-page-{index + 1:0{digits}d}.png"
            bitmap.to_pil().save(target, format="PNG")
            bitmap.close()
            page.close()
            written.append(shown(target))
    print(f"Wrote {plural(len(written), 'PNG image')} at {args.dpi} dpi:")
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    run_cli(main)
