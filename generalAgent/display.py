"""How values are written in one line for people and the model: sizes and exception messages."""

from __future__ import annotations


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
