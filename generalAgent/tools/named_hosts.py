"""Who named a host: the records fetch_web's approval rule reads, and how a typed line names hosts.

Reaching a host the user chose is what the user asked for; reaching one that a document,
a web page or the model chose is how data leaves without anyone noticing. So every host
that may be reached without a question is recorded in the state (`named_hosts`) together
with *who* named it, and the rule reads only those records, never the messages:

=============  ======================================================================
`by`           what wrote it down
=============  ======================================================================
`user`         the user typed it: a chat line or a `-p "…"` argument (a URL, or a bare
               domain such as `docs.python.org`); `url` is the URL as typed, if any
`allow-host`   `--allow-host HOST` on the command line (the host, every URL on it)
`search`       a web search returned this URL (`url`); the search named it, not the user
=============  ======================================================================

Nothing else names a host: text piped to `-p -`, the names and contents of attached
files, tool results (pages, documents, MCP answers), the model's own words and a
sub-agent's task. What each kind of record lets through without a question:

- a URL recorded exactly (typed by the user, or a search result): that URL;
- a host typed by the user: any URL on it without a query string (a query string is data
  the model chose, sent to that host: it asks, unless the user typed that very URL);
- a host given with `--allow-host`: any URL on it;
- a URL carrying a user name or password (`https://user:pass@host/`) always asks: the
  records compare URLs without that part, and credentials are data sent to the host
  whoever named it;
- anything else asks. fetch_web sends GET requests only; a tool that sends a body
  counts it as data like a query string (`carries_data`).

A redirect is a new request: fetch_web follows one to another host only when that host
passes the same rule for a plain request, and otherwise stops and says where it leads,
so the model's next call asks. Records are kept per session (a reducer merges each turn's)
and handed to sub-agents; the graph's turn builder takes them from the CLI. A tool that
finds URLs (a web search) records them by returning
`Command(update={"named_hosts": searched_urls(urls), "messages": [its ToolMessage]})`:
named by the search, never by the user.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict
from urllib.parse import urlsplit

BY_USER = "user"
BY_ALLOW_HOST = "allow-host"
BY_SEARCH = "search"
NAMERS = frozenset({BY_USER, BY_ALLOW_HOST, BY_SEARCH})
# A session keeps at most this many records (the newest): enough for any real session,
# and a bound on what a long one stores and re-reads at every call.
MAX_RECORDS = 1_000


class NamedHost(TypedDict, total=False):
    host: str  # canonical: lower-case, without "www." and a trailing dot
    by: str  # one of NAMERS
    url: str  # the exact URL named (without its fragment), "" when only the host was


# A URL with a scheme, as typed; Chinese text or punctuation right after it ends it
# (`看https://example.com/a，然后…`).
_URL = re.compile(
    r"(?<![A-Za-z0-9+.-])[a-z][a-z0-9+.-]*://[^\s<>\"'`\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+",
    re.IGNORECASE,
)
# A `#path` attachment reference (chat_input.py): a file, never a host.
_REFERENCE = re.compile(r"""#(?:"[^"\n]*"|'[^'\n]*'|[^\s#"']\S*)""")
# A bare domain: labels and a letters-only last label, standing apart from a path, an
# e-mail address or a longer name. ASCII look-arounds, so Chinese text may touch it
# (`看docs.python.org的`).
_BARE_HOST = re.compile(
    r"(?<![A-Za-z0-9_@./\\~#:-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})(?![A-Za-z0-9_-])",
    re.IGNORECASE,
)
# Last parts that are file types as well as (some of them) top-level domains: `main.py`,
# `data.zip`, `logo.ai`, `invoice-2024.md` are files. A site under one of them is named
# with its scheme (`https://bun.sh`) or --allow-host.
FILE_SUFFIXES = frozenset(
    """
    md markdown mdx txt rst tex bib csv tsv json jsonl yaml yml toml ini cfg conf env log xml html
    htm css scss less map pdf doc docx xls xlsx xlsm ppt pptx odt ods odp rtf epub mobi pages
    numbers key py pyi pyc ipynb js mjs cjs jsx ts tsx vue svelte java class jar war kt kts go rs c
    cc h hh cpp hpp cs rb php pl pm swift scala sh bash zsh fish ps psm sql lua dart ex exs erl hs
    ml r jl nim zig wasm png jpg jpeg gif webp bmp tif tiff svg ico heic psd ai eps sketch fig xcf
    mp3 mp4 m4a mov avi mkv wav flac ogg webm zip tar gz tgz bz2 xz zst rar dmg iso img exe msi dll
    so dylib bin app apk ipa deb rpm pkg lock bak tmp swp db sqlite pem crt cer der csr p12 pfx pkl
    npy npz parquet feather onnx pt pth ckpt safetensors gguf h5
    """.split()  # noqa: SIM905 - a list of words reads better as words
)


def canonical_host(host: str) -> str:
    """A host name as records keep it: lower-case, without a trailing dot or "www."."""
    return host.strip().rstrip(".").lower().removeprefix("www.")


def canonical_url(url: str) -> str | None:
    """`url` as it goes on the wire, for comparing one URL with another: scheme and host
    lower-case, "www." kept out of the host, no fragment, "/" for an empty path. None when
    it is not a URL with a host."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not host or not parts.scheme:
        return None
    netloc = canonical_host(host) + (f":{port}" if port else "")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}{query}"


def host_of(url: str) -> str | None:
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return canonical_host(host) if host else None


def hosts_typed(text: str) -> list[NamedHost]:
    """The hosts a person typed in `text`: URLs with a scheme (host and exact URL) and bare
    domains, minus `#path` references, paths and file names (`main.py`, `logo.ai`)."""
    records: list[NamedHost] = []
    for match in _URL.finditer(text):
        if match.start() and text[match.start() - 1] == "#":
            continue  # `#https://…` is an attachment reference gone wrong, not a site
        raw = match.group(0).rstrip(".,;:!?)]}，。；：！？）")
        host, url = host_of(raw), canonical_url(raw)
        if host and url:
            records.append({"host": host, "by": BY_USER, "url": url})
    rest = _REFERENCE.sub(" ", _URL.sub(" ", text))
    for match in _BARE_HOST.finditer(rest):
        name = match.group(1)
        if name.rsplit(".", 1)[-1].lower() not in FILE_SUFFIXES:
            records.append({"host": canonical_host(name), "by": BY_USER, "url": ""})
    return unique(records)


class HostError(ValueError):
    """An --allow-host value without a host name in it (`value`)."""

    def __init__(self, value: str) -> None:
        super().__init__(f"--allow-host {value!r}: not a host name")
        self.value = value


def allowed_hosts(values: Iterable[str]) -> list[NamedHost]:
    """--allow-host values (a host, host:port or a URL) as records; HostError names a bad one."""
    records: list[NamedHost] = []
    for value in values:
        text = value.strip()
        host = host_of(text if "://" in text else f"http://{text}")
        if not host or any(c.isspace() for c in host):
            raise HostError(
                f"--allow-host {value!r}: not a host name (example: --allow-host docs.python.org)"
            )
        records.append({"host": host, "by": BY_ALLOW_HOST, "url": ""})
    return unique(records)


def searched_urls(urls: Iterable[str]) -> list[NamedHost]:
    """Records for URLs a web search returned: each URL is named, by the search."""
    records: list[NamedHost] = []
    for url in urls:
        host, exact = host_of(url), canonical_url(url)
        if host and exact:
            records.append({"host": host, "by": BY_SEARCH, "url": exact})
    return unique(records)


def unique(records: Iterable[NamedHost]) -> list[NamedHost]:
    seen: dict[tuple[str, str, str], NamedHost] = {}
    for record in records:
        key = (record.get("host", ""), record.get("by", ""), record.get("url", ""))
        seen.pop(key, None)  # a record named again moves to the end (the newest)
        seen[key] = record
    return list(seen.values())


def merge_named_hosts(current: list[NamedHost] | None, added: list[NamedHost] | None) -> list[NamedHost]:
    """The state reducer: the session's records, then the new ones, each once, the newest kept."""
    return unique([*(current or []), *(added or [])])[-MAX_RECORDS:]


# Why a request to a URL needs a question (fetch_web words each for the user).
UNNAMED, DATA_TO_NAMED, CREDENTIALS = "unnamed", "data to a named host", "credentials"


def carries_credentials(url: str) -> bool:
    """Whether `url` has a user-info part (`user:pass@`), which goes out as credentials."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return True
    return "@" in parts.netloc


def carries_data(url: str, body: bool = False) -> bool:
    """Whether a request sends data the model chose besides the address: a query string or a body."""
    try:
        return body or bool(urlsplit(url.strip()).query)
    except ValueError:
        return True


@dataclass(frozen=True)
class NamedHosts:
    """A session's records, read by the approval rule and by fetch_web for redirects."""

    records: tuple[NamedHost, ...] = ()

    @classmethod
    def of(cls, records: Sequence[Mapping[str, Any]] | None) -> NamedHosts:
        kept = tuple(
            NamedHost(host=str(r.get("host", "")), by=str(r.get("by", "")), url=str(r.get("url") or ""))
            for r in records or ()
            if isinstance(r, Mapping) and r.get("by") in NAMERS and r.get("host")
        )
        return cls(kept)

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> NamedHosts:
        return cls.of((state or {}).get("named_hosts"))

    def _hosts(self, *by: str) -> set[str]:
        return {r["host"] for r in self.records if r.get("by") in by}

    def _urls(self) -> set[str]:
        return {r["url"] for r in self.records if r.get("url")}

    def question(self, url: str, *, body: bool = False) -> str | None:
        """Why a request to `url` must ask first (UNNAMED, DATA_TO_NAMED, CREDENTIALS), or
        None when the records say someone the user trusts named it. A URL without a host is
        None: the tool refuses it without sending anything."""
        host = host_of(url)
        if not host:
            return None
        if carries_credentials(url):
            return CREDENTIALS  # before every record: none of them was compared with this part
        if host in self._hosts(BY_ALLOW_HOST):
            return None
        if not body and canonical_url(url) in self._urls():
            return None  # exactly what the user typed or a search returned: nothing of the model's
        if host in self._hosts(BY_USER):
            return DATA_TO_NAMED if carries_data(url, body) else None
        return UNNAMED

    def may_follow(self, url: str) -> bool:
        """Whether a redirect to `url` on another host may be followed without a question:
        the server chose the URL, so only the host's own standing counts (named by the
        user, allowed, or that exact URL named)."""
        host = host_of(url)
        if not host or carries_credentials(url):
            return False
        return host in self._hosts(BY_USER, BY_ALLOW_HOST) or canonical_url(url) in self._urls()
