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


# Query parameters that carry credentials in an endpoint URL (?key=..., ?access_token=...).
_SECRET_PARAMETERS = ("key", "api_key", "apikey", "token", "access_token", "secret", "password", "sig")


def public_url(url: str) -> str:
    """`url` as it may be shown or logged: without a user name and password, and with the
    values of credential-looking query parameters replaced by `***`."""
    from urllib.parse import parse_qsl, urlencode, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "(an unreadable URL)"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if k.lower() in _SECRET_PARAMETERS else v) for k, v in pairs], safe="*")
    return parts._replace(netloc=netloc, query=query).geturl()


def url_secrets(url: str | None) -> list[str]:
    """The credentials written into `url` (password, user name, secret query values), to mask."""
    from urllib.parse import parse_qsl, urlsplit

    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [value for value in (parts.password, parts.username) if value]
    found += [v for k, v in parse_qsl(parts.query) if k.lower() in _SECRET_PARAMETERS and v]
    return [value for value in found if len(value) >= 4]


def N_(message: str) -> str:
    """Marks an English message for the terminal's catalog where it is written (a table, a
    constant, a tool's approval reason; `make i18n` extracts it); the terminal translates
    it with `_()` where it shows it, while the model keeps reading the English."""
    return message
