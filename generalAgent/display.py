"""How values are written in one line for people and the model: sizes, files, exception messages."""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

Plural = Callable[[str, str, int], str]
E = TypeVar("E", bound=BaseException)


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


def describe_file(
    file: Mapping[str, Any], ngettext: Plural = english_plural, translate: Translate = str
) -> str:
    """`uploads/2025-Q3.pdf (pdf, 2.3 MB, 48 pages)`, from an attached file's description.

    What a document's pages are called depends on its type (a deck's slides, a workbook's
    sheets); `ngettext` and `translate` say them and the type (the terminal passes the UI's;
    the model reads English)."""
    kind = str(file.get("type", "file"))
    details = [translate(_TYPE_WORDS[kind]) if kind in _TYPE_WORDS else kind, human_size(file.get("size", 0))]
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


Translate = Callable[[str], str]

# The attach line's names of the file types that are words (pdf, docx ... are said as they are).
_TYPE_WORDS = {
    "markdown": N_("markdown"),
    "text": N_("text"),
    "code": N_("code"),
    "image": N_("image"),
    "other": N_("other"),
    "file": N_("file"),
}


def _same(message: str) -> str:
    return message


@dataclass(frozen=True)
class Message:
    """One sentence said twice: in English for the model, in the UI language for a person.

    `template` is an N_-marked format string (or an N_plural pair, chosen by the `count`
    field); `fields` fill it (a field may be a Message itself, e.g. the reason an OS error
    gives). A tool's error carries one from where it is raised to the terminal and the
    editor (tools/errors.py), as plain data, so a saved session shows it again in the
    language of whoever reads it."""

    template: str | tuple[str, str]
    fields: Mapping[str, str | int | Message] = field(default_factory=dict)

    def english(self) -> str:
        return self.shown(_same)

    def shown(self, translate: Translate, ngettext: Plural = english_plural) -> str:
        """The sentence with `translate` (the UI's `_`) applied to it and its inner messages."""
        values = {
            name: v.shown(translate, ngettext) if isinstance(v, Message) else v
            for name, v in self.fields.items()
        }
        if isinstance(self.template, tuple):
            count = values.get("count")
            text = ngettext(*self.template, count if isinstance(count, int) else 0)
            english = english_plural(*self.template, count if isinstance(count, int) else 0)
        else:
            text, english = translate(self.template), self.template
        if not values:
            return text
        try:
            return text.format(**values)
        except (KeyError, IndexError, ValueError):  # a damaged translation: the English is still right
            return english.format(**values)

    def to_data(self) -> dict[str, Any]:
        """Plain data for a message's artifact (checkpointed with the session)."""
        fields = {name: v.to_data() if isinstance(v, Message) else v for name, v in self.fields.items()}
        template = list(self.template) if isinstance(self.template, tuple) else self.template
        return {"template": template, "fields": fields}

    @classmethod
    def from_data(cls, data: object) -> Message | None:
        """The Message `to_data` wrote; None for anything else (an older session, a stranger's)."""
        if not isinstance(data, Mapping):
            return None
        template = data.get("template")
        if (
            isinstance(template, list | tuple)
            and len(template) == 2
            and all(isinstance(t, str) for t in template)
        ):
            template = (template[0], template[1])
        elif not isinstance(template, str):
            return None
        fields: dict[str, str | int | Message] = {}
        raw = data.get("fields")
        for name, value in raw.items() if isinstance(raw, Mapping) else []:
            inner = cls.from_data(value) if isinstance(value, Mapping) else None
            fields[str(name)] = (
                inner if inner is not None else value if isinstance(value, int) else str(value)
            )
        return cls(template, fields)


def carrying(kind: Callable[[str], E], said: Message) -> E:
    """An exception of `kind` whose text is `said` in English and whose `said` attribute
    keeps the sentence as data, for a layer whose exception takes only a string."""
    error = kind(said.english())
    error.said = said  # type: ignore[attr-defined]
    return error


def said_of_error(exc: BaseException) -> str | Message:
    """What `exc` says: its `said` Message when it carries one, a Message of its `template`
    and `fields` when it keeps them (a layer that may not import this one: front_matter.py,
    config/confined.py), an OS error's reason in words (not `[Errno 13] ...`), else its text."""
    said = getattr(exc, "said", None)
    if isinstance(said, Message):
        return said
    template, fields = getattr(exc, "template", None), getattr(exc, "fields", None)
    if isinstance(template, str) and isinstance(fields, dict):
        return Message(template, {name: str(value) for name, value in fields.items()})
    if isinstance(exc, OSError) and exc.errno is not None:
        return os_error_reason(exc)
    return str(exc)


# What an OS error means, by errno, in words a person can act on (strerror is English and
# `[Errno 13] Permission denied: '/x'` names the path twice in a programmer's form).
_OS_ERROR_REASONS = {
    errno.EACCES: N_("permission denied: your user may not open it (check its permissions)"),
    errno.EPERM: N_("the operation is not permitted"),
    errno.ENOENT: N_("it does not exist"),
    errno.EISDIR: N_("it is a folder, not a file"),
    errno.ENOTDIR: N_("a part of the path is not a folder"),
    errno.ENOSPC: N_("no space left on the disk"),
    errno.EROFS: N_("the disk is read-only"),
    errno.EEXIST: N_("it already exists"),
    errno.ENAMETOOLONG: N_("the name is too long"),
    errno.ELOOP: N_("too many symbolic links (a link loop)"),
    errno.EBUSY: N_("it is busy (in use by another program)"),
    errno.EMFILE: N_("too many files are open"),
    errno.EIO: N_("the disk reported an input/output error"),
}


def os_error_reason(exc: OSError) -> str | Message:
    """Why `exc` happened, as a Message to translate when its errno is known; else the
    system's own words (strerror), which are all there is."""
    reason = _OS_ERROR_REASONS.get(exc.errno or 0)
    if reason is not None:
        return Message(reason)
    return str(exc.strerror or exc)


def os_error_message(exc: OSError, path: object) -> Message:
    """`report.pdf cannot be opened: permission denied …`: an OS error naming the path as
    the user gave it, instead of `[Errno 13] Permission denied: '/abs/report.pdf'`."""
    return Message(
        N_("{path} cannot be opened: {reason}"), {"path": str(path), "reason": os_error_reason(exc)}
    )
