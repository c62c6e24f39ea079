"""Describe a PDF: pages, page sizes, metadata, encryption, text layer and outline."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from _pdf_access import (
    describe_pages,
    is_encrypted,
    load_page,
    opened_pdf,
    password_from,
    run_cli,
)

POINTS_PER_MM = 72 / 25.4
NAMED_SIZES_MM = {
    "A3": (297, 420),
    "A4": (210, 297),
    "A5": (148, 210),
    "Letter": (216, 279),
    "Legal": (216, 356),
}
OUTLINE_LIMIT = 40
_PDF_DATE = re.compile(r"^D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(.*)$")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Pages, page sizes, metadata, encryption, text layer and outline of a PDF.",
        epilog="Example: python skills/pdf/scripts/info.py uploads/report.pdf",
    )
    parser.add_argument("pdf", help="the PDF, e.g. uploads/report.pdf")
    parser.add_argument("--password", help="password of an encrypted PDF (or set PDF_PASSWORD)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def size_name(width_pt: float, height_pt: float) -> str:
    """ "A4 portrait (210 x 297 mm)" and the like; unnamed sizes are given in mm only."""
    width, height = round(width_pt / POINTS_PER_MM), round(height_pt / POINTS_PER_MM)
    short, long = sorted((width, height))
    orientation = "portrait" if height >= width else "landscape"
    for name, (named_short, named_long) in NAMED_SIZES_MM.items():
        if abs(short - named_short) <= 2 and abs(long - named_long) <= 2:
            return f"{name} {orientation} ({width} x {height} mm)"
    return f"{width} x {height} mm"


def readable_date(value: str) -> str:
    """PDF dates ("D:20240131093000+08'00'") as "2024-01-31 09:30:00 +08:00"."""
    match = _PDF_DATE.match(value)
    if not match:
        return value
    year, month, day, hour, minute, second, zone = match.groups()
    text = f"{year}-{month or '01'}-{day or '01'}"
    if hour:
        text += f" {hour}:{minute or '00'}:{second or '00'}"
    zone = zone.replace("'", "")
    if zone in {"Z", "+0000", "-0000"}:
        return text + " UTC"
    if len(zone) == 5 and zone[0] in "+-":
        return f"{text} {zone[:3]}:{zone[3:]}"
    return text


def outline_entry(item: Any) -> dict[str, Any]:
    """One bookmark as {level, title, page}; pypdfium2 5 gives objects, 4 gave named tuples."""
    if hasattr(item, "get_title"):
        destination = item.get_dest()
        index = destination.get_index() if destination is not None else None
        title = item.get_title()
    else:
        index, title = item.page_index, item.title
    return {"level": item.level + 1, "title": title, "page": None if index is None else index + 1}


def describe(path: str, password: str | None) -> dict[str, Any]:
    with opened_pdf(path, password) as pdf:
        sizes: Counter[str] = Counter()
        no_text: list[int] = []
        for index in range(len(pdf)):
            page = load_page(pdf, index, path)
            sizes[size_name(*page.get_size())] += 1
            textpage = page.get_textpage()
            if not textpage.get_text_range().strip():
                no_text.append(index)
            textpage.close()
            page.close()
        metadata = {
            key: readable_date(value) if key.endswith("Date") else value
            for key, value in pdf.get_metadata_dict(skip_empty=True).items()
        }
        outline = []
        for item in pdf.get_toc(max_depth=3):
            if len(outline) == OUTLINE_LIMIT:
                break
            outline.append(outline_entry(item))
        return {
            "file": path,
            "bytes": Path(path).stat().st_size,
            "pages": len(pdf),
            "pdf_version": pdf.get_version(),
            "encrypted": is_encrypted(pdf),
            "page_sizes": dict(sizes),
            "pages_without_text": [index + 1 for index in no_text],
            "metadata": metadata,
            "outline": outline,
        }


def as_text(info: dict[str, Any]) -> str:
    version = info["pdf_version"]
    lines = [
        f"File: {info['file']} ({info['bytes']:,} bytes"
        + (f", PDF {version // 10}.{version % 10})" if version else ")"),
        f"Pages: {info['pages']}",
        "Page size: " + "; ".join(f"{size} x{count}" for size, count in info["page_sizes"].items()),
        f"Encrypted: {'yes' if info['encrypted'] else 'no'}",
    ]
    missing = info["pages_without_text"]
    if not missing:
        lines.append("Text layer: on every page")
    elif len(missing) == info["pages"]:
        lines.append("Text layer: none (scanned/image-only PDF; text extraction will find nothing)")
    else:
        absent = describe_pages([number - 1 for number in missing])
        lines.append(f"Text layer: missing on {absent} (scanned images?)")
    for key, value in info["metadata"].items():
        lines.append(f"{key}: {value}")
    if info["outline"]:
        count = len(info["outline"])
        lines.append(f"Outline (first {count} {'entry' if count == 1 else 'entries'}):")
        for entry in info["outline"]:
            where = f" ... page {entry['page']}" if entry["page"] else ""
            lines.append(f"{'  ' * entry['level']}{entry['title']}{where}")
    return "\n".join(lines) + "\n"


def main() -> int:
    args = build_parser().parse_args()
    info = describe(args.pdf, password_from(args.password))
    if args.json:
        sys.stdout.write(json.dumps(info, ensure_ascii=False, indent=1) + "\n")
    else:
        sys.stdout.write(as_text(info))
    return 0


if __name__ == "__main__":
    run_cli(main)
