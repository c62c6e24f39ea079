"""fetch_web: an http(s) page as readable text, within size and time limits.

Only http and https; by default never loopback, private, link-local or reserved
addresses (checked for every address the name resolves to, and again after each
redirect), so a page the model was told about cannot make the agent probe the user's
own network. FETCH_ALLOW_PRIVATE=true lifts that for intranet use.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from langchain_core.tools import BaseTool, tool

from generalAgent.config.settings import ToolSettings
from generalAgent.tools.approval import NEEDS_APPROVAL, CallContext, canonical_host
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.errors import ToolError

MAX_REDIRECTS = 5
DEFAULT_MAX_CHARS = 20_000
_SKIP = {"script", "style", "noscript", "svg", "template", "iframe", "head", "nav", "footer", "form"}
_BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "br",
    "li",
    "tr",
    "table",
    "ul",
    "ol",
    "pre",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "aside",
    "dd",
    "dt",
    "figcaption",
}


class FetchRefused(Exception):
    """The URL may not be fetched; the message says why."""


class ReadableText(HTMLParser):
    """HTML to plain text: drops scripts and chrome, keeps headings, paragraphs and list items."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip_depth = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _SKIP:
            self._skip_depth += 1
        elif tag in _BLOCK:
            self.parts.append("\n")
            if tag in {"h1", "h2", "h3", "h4", "h5", "h6"}:
                self.parts.append("#" * int(tag[1]) + " ")
            elif tag == "li":
                self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _SKIP and self._skip_depth:
            self._skip_depth -= 1
        elif tag in _BLOCK and tag not in {"li", "dt", "dd", "tr"}:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if not self._skip_depth:
            self.parts.append(data)

    def text(self) -> str:
        lines = [" ".join(line.split()) for line in "".join(self.parts).splitlines()]
        compact: list[str] = []
        for line in lines:
            if line or (compact and compact[-1]):
                compact.append(line)
        return "\n".join(compact).strip()


def html_to_text(html: str) -> tuple[str, str]:
    """(title, readable text) of an HTML page."""
    parser = ReadableText()
    parser.feed(html)
    parser.close()
    return " ".join(parser.title.split()), parser.text()


def check_url(url: str, settings: ToolSettings) -> None:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"}:
        raise FetchRefused(f"only http and https URLs can be fetched, not {parts.scheme or 'a bare path'!r}")
    if not parts.hostname:
        raise FetchRefused("the URL has no host name")
    if settings.fetch_allow_private:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except socket.gaierror as exc:
        raise FetchRefused(f"cannot resolve {parts.hostname}: {exc.strerror}") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if (
            address.is_private
            or address.is_loopback
            or address.is_link_local
            or address.is_reserved
            or address.is_multicast
            or address.is_unspecified
        ):
            raise FetchRefused(
                f"{parts.hostname} resolves to {address}, a local or private address; "
                "set FETCH_ALLOW_PRIVATE=true to allow it"
            )


def fetch(url: str, settings: ToolSettings) -> tuple[str, str, str]:
    """(final URL, content type, body text) following redirects, each hop checked."""
    with httpx.Client(
        timeout=settings.fetch_timeout,
        follow_redirects=False,
        headers={"User-Agent": "generalAgent/0.1 (+fetch_web)"},
    ) as client:
        for _ in range(MAX_REDIRECTS + 1):
            check_url(url, settings)
            with client.stream("GET", url) as response:
                if response.is_redirect and response.headers.get("location"):
                    url = urljoin(url, response.headers["location"])
                    continue
                if response.status_code >= 400:
                    raise FetchRefused(f"the server answered {response.status_code} {response.reason_phrase}")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > settings.fetch_max_bytes:
                        raise FetchRefused(
                            f"the page is larger than {settings.fetch_max_bytes:,} bytes (FETCH_MAX_BYTES)"
                        )
                content_type = response.headers.get("content-type", "")
                return url, content_type, bytes(body).decode(response.encoding or "utf-8", errors="replace")
    raise FetchRefused(f"more than {MAX_REDIRECTS} redirects")


def reaches_unnamed_host(args: Mapping[str, Any], context: CallContext) -> str | None:
    """fetch_web's approval rule: a request carries data out (in its URL) to its host, so
    a host the user did not name in their own messages asks first."""
    try:
        host = urlsplit(str(args.get("url", "")).strip()).hostname
    except ValueError:
        return None  # not a URL: the tool refuses it without sending anything
    if not host or canonical_host(host) in context.named_hosts:
        return None
    return f"sends a request to {host}, a host you did not name"


def create_tool(env: ToolEnvironment) -> BaseTool:
    settings = env.settings.tools

    @tool("fetch_web")
    def fetch_web(url: str, max_chars: int = DEFAULT_MAX_CHARS, offset: int = 0) -> str:
        """Fetch an http(s) URL and return its readable text (HTML is converted).

        Long pages are cut at `max_chars`; call again with `offset` to read on.
        """
        try:
            final_url, content_type, body = fetch(url.strip(), settings)
        except FetchRefused as exc:
            raise ToolError(f"{exc}.") from exc
        except httpx.TimeoutException:
            raise ToolError(f"{url} did not answer within {settings.fetch_timeout:g} s.") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"cannot fetch {url}: {type(exc).__name__}: {exc}.") from exc
        if "html" in content_type or body.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
            title, text = html_to_text(body)
        elif content_type.startswith(("text/", "application/json", "application/xml")) or not content_type:
            title, text = "", body
        else:
            raise ToolError(f"{final_url} is {content_type.split(';')[0]}, not a text page.")
        max_chars = max(500, min(max_chars, 100_000))
        window = text[offset : offset + max_chars]
        header = f"URL: {final_url}" + (f"\nTitle: {title}" if title else "")
        if offset + max_chars < len(text):
            header += f"\n[characters {offset:,}-{offset + len(window):,} of {len(text):,}; continue with offset={offset + len(window)}]"
        return f"{header}\n\n{window}" if window else f"{header}\n\n(no readable text)"

    fetch_web.metadata = {**(fetch_web.metadata or {}), NEEDS_APPROVAL: reaches_unnamed_host}
    return fetch_web
