"""How values are written in one line for people and the model: sizes, files, exception messages."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Plural = Callable[[str, str, int], str]


def english_plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


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


def describe_file(file: Mapping[str, Any], ngettext: Plural = english_plural) -> str:
    """`uploads/2025-Q3.pdf (pdf, 2.3 MB, 48 pages)`, from an attached file's description.

    What a document's pages are called depends on its type (a deck's slides, a workbook's
    sheets); `ngettext` translates them (the terminal passes the UI's; the model reads English)."""
    details = [str(file.get("type", "file")), human_size(file.get("size", 0))]
    pages = file.get("pages")
    if pages:
        kind = str(file.get("type", ""))
        if kind == "pptx":
            unit = ngettext("{count} slide", "{count} slides", pages)
        elif kind == "xlsx":
            unit = ngettext("{count} sheet", "{count} sheets", pages)
        else:
            unit = ngettext("{count} page", "{count} pages", pages)
        details.append(unit.format(count=pages))
    return f"{file.get('path', file.get('name', '?'))} ({', '.join(details)})"


# Query (and fragment) parameters that carry credentials: any name containing one of
# these (?key=, ?api_key=, ?access_token=, ?auth=, ?X-Amz-Signature=, ?sig=, ?client_secret=,
# ?password=, ?session=, #id_token=). Masking a harmless one costs nothing; missing one
# leaks a credential into a log or onto the screen.
_SECRET_NAME = re.compile(
    r"key|token|secret|passw|pwd|auth|sig|credential|session|jwt|bearer|cookie|private|otp|code",
    re.IGNORECASE,
)
# A URL inside free text (a log line, a tool's arguments or error).
_URL_IN_TEXT = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s<>\"'`]+", re.IGNORECASE)


def _secret_parameter(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def public_url(url: str) -> str:
    """`url` as it may be shown or logged: without a user name and password, and with the
    values of credential-looking query and fragment parameters replaced by `***`."""
    from urllib.parse import parse_qsl, urlencode, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "(an unreadable URL)"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query, fragment = parts.query, parts.fragment
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if _secret_parameter(k) else v) for k, v in pairs], safe="*")
    if "=" in fragment:
        pairs = parse_qsl(fragment, keep_blank_values=True)
        fragment = urlencode([(k, "***" if _secret_parameter(k) else v) for k, v in pairs], safe="*")
    return parts._replace(netloc=netloc, query=query, fragment=fragment).geturl()


def url_secrets(url: str | None) -> list[str]:
    """The credentials written into `url` (password, user name, secret query and fragment
    values), to mask."""
    from urllib.parse import parse_qsl, urlsplit

    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [value for value in (parts.password, parts.username) if value]
    for part in (parts.query, parts.fragment):
        found += [v for k, v in parse_qsl(part) if _secret_parameter(k) and v]
    return [value for value in found if len(value) >= 4]


def mask_urls(text: str) -> str:
    """`text` with every URL in it that carries a credential shown as `public_url` does;
    URLs without one are left exactly as written."""
    if "://" not in text:
        return text

    def masked(match: re.Match[str]) -> str:
        url = match.group(0)
        try:
            carries = "@" in url.split("/", 3)[2] if url.count("/") >= 2 else False
        except IndexError:
            carries = False
        return public_url(url) if carries or url_secrets(url) else url

    return _URL_IN_TEXT.sub(masked, text)


def N_(message: str) -> str:
    """Marks an English message for the terminal's catalog where it is written (a table, a
    constant, a tool's approval reason; `make i18n` extracts it); the terminal translates
    it with `_()` where it shows it, while the model keeps reading the English."""
    return message


def N_plural(singular: str, plural: str) -> tuple[str, str]:
    """Marks a message with a `{count}` field, its singular and plural forms, as `N_` marks
    one without (`make i18n` extracts both forms); the terminal picks the form with its
    `ngettext`, the model reads the English one."""
    return singular, plural
