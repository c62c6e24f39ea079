"""fetch_web: an http(s) page's main content as Markdown, within size and time limits.

The page's chrome is dropped twice: its semantic chrome elements (nav, header, footer,
aside, forms, scripts) before anything else, then what readability-lxml (Apache-2.0, the
port of Mozilla's Readability other agents use) scores as not the main content (menus,
cookie banners, "related" boxes and footers written as plain divs). markdownify (MIT)
writes the rest as Markdown, links and tables kept. On a set of pages built from real
pages' structure (bench/web_extraction.py) that keeps every main-content sentence, drops
every boilerplate one (the plain HTMLParser kept them all) and keeps link targets and
tables, which the plain text lost. A page readability finds nothing in (or cannot parse:
nesting too deep for markdownify's recursion) is read by `ReadableText`, the plain
converter, as before.

Only http and https; by default only public addresses: never loopback, private,
link-local, shared (100.64.0.0/10, where cloud metadata services live), reserved or
multicast ones, nor their IPv4-mapped, NAT64, 6to4 or Teredo forms. Every address a
name resolves to is checked, at every redirect, and the connection goes to the address
that was checked (the Host header and TLS name stay the URL's), so a name that resolves
differently the second time (DNS rebinding) cannot reach the user's own network.
FETCH_ALLOW_PRIVATE=true lifts that for intranet use. FETCH_TIMEOUT bounds the whole
fetch, redirects included, however slowly a server drips its answer.

Which requests ask the user first is decided by who named the host (tools/named_hosts.py):
a host the user typed or allowed runs, a query string the model chose asks, a host nobody
named asks. A redirect is a new request: to the same host it is followed; to another host
only when that host passes the same rule, otherwise the fetch stops and says where it
leads, so that following it is a new call, asked like any other.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from langchain_core.tools import BaseTool, tool

from generalAgent.config.settings import ToolSettings
from generalAgent.display import N_
from generalAgent.tools.approval import NEEDS_APPROVAL, CallContext, Reason
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError, said_of
from generalAgent.tools.named_hosts import CREDENTIALS, DATA_TO_NAMED, NamedHosts, host_of

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


class RedirectNotFollowed(Exception):
    """A redirect leads to a host nobody the user trusts named: `target` is where."""

    def __init__(self, source: str, target: str) -> None:
        super().__init__(target)
        self.source, self.target = source, target


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


# Dropped before readability scores the page: chrome by its element, whatever its class.
_CHROME = (
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "svg",
)
# readability's shortest block of text worth keeping: its default (25 characters) drops a
# short list or a table of figures, which is often the answer.
_MIN_TEXT = 5
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


def html_to_text(html: str) -> tuple[str, str]:
    """(title, the main content as Markdown) of an HTML page (see the module docstring)."""
    plain = ReadableText()
    plain.feed(html)
    plain.close()
    title = " ".join(plain.title.split())
    try:
        main = _main_content(html)
    except Exception:  # noqa: BLE001 - a hostile page defeating a library: the plain reading stands
        main = ""
    return title, main or plain.text()


def _main_content(html: str) -> str:
    import lxml.html
    from markdownify import markdownify
    from readability import Document

    if not html.strip():
        return ""
    tree = lxml.html.document_fromstring(html)
    for element in tree.xpath(" | ".join(f"//{tag}" for tag in _CHROME)):
        element.drop_tree()
    summary = Document(lxml.html.tostring(tree, encoding="unicode"), min_text_length=_MIN_TEXT).summary(
        html_partial=True
    )
    markdown = markdownify(summary, heading_style="ATX", bullets="-", strip=["img"], escape_underscores=False)
    lines = (line.rstrip() for line in markdown.strip().splitlines())
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


NAT64 = ipaddress.ip_network("64:ff9b::/96")  # an IPv4 address in the last 32 bits


class FetchTimedOut(Exception):
    """The whole fetch took longer than FETCH_TIMEOUT."""


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether `address` is on the public internet, and so is every IPv4 address it carries."""
    if not address.is_global or address.is_multicast:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        embedded = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
        if address in NAT64:
            embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        return all(is_public(inner) for inner in embedded if inner is not None)
    return True


def resolve_host(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address `host` resolves to (the one lookup of a hop: the connection is pinned to it)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def check_url(url: str, settings: ToolSettings) -> str | None:
    """The address to connect to for `url` (every one its host resolves to checked), or
    None when private addresses are allowed and the client may resolve it itself."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"}:
        raise FetchRefused(f"only http and https URLs can be fetched, not {parts.scheme or 'a bare path'!r}")
    if not parts.hostname:
        raise FetchRefused("the URL has no host name")
    if settings.fetch_allow_private:
        return None
    try:
        addresses = resolve_host(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except socket.gaierror as exc:
        raise FetchRefused(f"cannot resolve {parts.hostname}: {exc.strerror}") from None
    for address in addresses:
        if not is_public(address):
            raise FetchRefused(
                f"{parts.hostname} resolves to {address}, a local, private or reserved address; "
                "set FETCH_ALLOW_PRIVATE=true to allow it"
            )
    if not addresses:
        raise FetchRefused(f"cannot resolve {parts.hostname}")
    return str(addresses[0])


def pinned_request(url: str, address: str | None) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(URL to send, extra headers, request extensions) that reach `address` for `url`:
    the host is replaced by the checked address, and the Host header and the TLS server
    name (SNI and certificate check) stay the URL's own."""
    if address is None:
        return url, {}, {}
    parts = urlsplit(url)
    host = f"[{address}]" if ":" in address else address
    netloc = f"{host}:{parts.port}" if parts.port else host
    extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
    return parts._replace(netloc=netloc).geturl(), {"Host": parts.netloc.rsplit("@", 1)[-1]}, extensions


def fetch(url: str, settings: ToolSettings, names: NamedHosts | None = None) -> tuple[str, str, str]:
    """(final URL, content type, body text) following redirects, each hop checked and
    pinned, all within FETCH_TIMEOUT. A hop to another host is a new request: it is
    followed only when `names` let it through (RedirectNotFollowed otherwise)."""
    names = names or NamedHosts()
    deadline = time.monotonic() + settings.fetch_timeout

    def remaining() -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise FetchTimedOut
        return left

    with httpx.Client(follow_redirects=False, headers={"User-Agent": "generalAgent (+fetch_web)"}) as client:
        for _ in range(MAX_REDIRECTS + 1):
            target, headers, extensions = pinned_request(url, check_url(url, settings))
            request = client.build_request(
                "GET", target, headers=headers, extensions=extensions, timeout=remaining()
            )
            response = client.send(request, stream=True)
            try:
                if response.is_redirect and response.headers.get("location"):
                    target = urljoin(url, response.headers["location"])
                    if host_of(target) != host_of(url) and not names.may_follow(target):
                        raise RedirectNotFollowed(url, target)
                    url = target
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
                    remaining()  # a server dripping a byte at a time still ends at the deadline
                content_type = response.headers.get("content-type", "")
                return url, content_type, bytes(body).decode(response.encoding or "utf-8", errors="replace")
            finally:
                response.close()
    raise FetchRefused(f"more than {MAX_REDIRECTS} redirects")


def reaches_unnamed_host(args: Mapping[str, Any], context: CallContext) -> Reason | None:
    """fetch_web's approval rule: a request carries data out (in its URL) to its host, so
    a host nobody the user trusts named, or a query string the model chose, asks first
    (tools/named_hosts.py says who named what)."""
    url = str(args.get("url", "")).strip()
    question = context.named_hosts.question(url)
    if question is None:
        return None
    host = host_of(url) or url
    if question == CREDENTIALS:
        return Reason(N_("sends a user name or password written in the URL to {host}"), {"host": host})
    if question == DATA_TO_NAMED:
        return Reason(N_("sends a query string you did not type to {host}"), {"host": host})
    return Reason(N_("sends a request to {host}, a host you did not name"), {"host": host})


def create_tool(env: ToolEnvironment) -> BaseTool:
    settings = env.settings.tools

    @tool("fetch_web")
    def fetch_web(url: str, runtime: ToolRuntime, max_chars: int = DEFAULT_MAX_CHARS, offset: int = 0) -> str:
        """Fetch an http(s) URL and return its readable text (HTML is converted).

        Long pages are cut at `max_chars`; call again with `offset` to read on.
        """
        state = runtime.state if isinstance(runtime.state, Mapping) else {}
        try:
            final_url, content_type, body = fetch(url.strip(), settings, NamedHosts.from_state(state))
        except FetchRefused as exc:
            raise ToolError(N_("{problem}."), problem=said_of(exc)) from exc
        except RedirectNotFollowed as exc:
            raise ToolError(
                N_(
                    "not followed: {source} redirects to {target}, on a host the user did not "
                    "name. To read it, call fetch_web with that URL (the user is asked first)."
                ),
                source=exc.source,
                target=exc.target,
            ) from None
        except (httpx.TimeoutException, FetchTimedOut):
            raise ToolError(
                N_("{url} did not answer in full within {seconds} s (FETCH_TIMEOUT)."),
                url=url,
                seconds=f"{settings.fetch_timeout:g}",
            ) from None
        except httpx.HTTPError as exc:
            raise ToolError(
                N_("cannot fetch {url}: {problem}."), url=url, problem=f"{type(exc).__name__}: {exc}"
            ) from exc
        if "html" in content_type or body.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
            title, text = html_to_text(body)
        elif content_type.startswith(("text/", "application/json", "application/xml")) or not content_type:
            title, text = "", body
        else:
            raise ToolError(
                N_("{url} is {type}, not a text page."), url=final_url, type=content_type.split(";")[0]
            )
        max_chars = max(500, min(max_chars, 100_000))
        window = text[offset : offset + max_chars]
        header = f"URL: {final_url}" + (f"\nTitle: {title}" if title else "")
        if offset + max_chars < len(text):
            header += f"\n[characters {offset:,}-{offset + len(window):,} of {len(text):,}; continue with offset={offset + len(window)}]"
        return f"{header}\n\n{window}" if window else f"{header}\n\n(no readable text)"

    fetch_web.metadata = {**(fetch_web.metadata or {}), NEEDS_APPROVAL: reaches_unnamed_host}
    return fetch_web
