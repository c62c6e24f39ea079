"""How values are written in one line for people and the model: sizes, files, exception messages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What a document's pages are called, by type (a PDF's pages, a deck's slides, a workbook's sheets).
PAGE_UNITS = {"pptx": ("slide", "slides"), "xlsx": ("sheet", "sheets")}


def human_size(size: float) -> str:
    """`2.3 MB`: bytes in the largest unit under 1,024 (1,024-based, as file managers show)."""
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def one_line(text: object, limit: int = 200) -> str:
    """`text` (an exception's message, a provider's reply) with its whitespace collapsed,
    cut to `limit` characters; "" when there is nothing to say."""
    return " ".join(str(text).split())[:limit]


def describe_file(file: Mapping[str, Any]) -> str:
    """`uploads/2025-Q3.pdf (pdf, 2.3 MB, 48 pages)`, from an attached file's description."""
    details = [str(file.get("type", "file")), human_size(file.get("size", 0))]
    pages = file.get("pages")
    if pages:
        one, many = PAGE_UNITS.get(str(file.get("type", "")), ("page", "pages"))
        details.append(f"{pages} {one if pages == 1 else many}")
    return f"{file.get('path', file.get('name', '?'))} ({', '.join(details)})"
