"""fetch_web: schemes, private addresses, HTML to text, size cap (against a loopback server)."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from generalAgent.config.settings import Settings
from generalAgent.tools.builtin.fetch_web import html_to_text, is_public
from generalAgent.tools.named_hosts import hosts_typed
from tests.support.tools import run_tool
from tests.support.web_pages import BOILERPLATE, LINK, MAIN, page, scores
from tests.support.web_site import PAGE, allowing_private


def test_html_becomes_markdown() -> None:
    title, text = html_to_text(PAGE)
    assert title == "季度报告 Q3"
    assert text == "# Revenue\n\nRevenue grew **12%** year on year.\n\n- 营收增长\n- 客户满意度 4.6"


def test_the_main_content_is_kept_and_boilerplate_in_plain_divs_dropped() -> None:
    """Cookie banners, menus, sidebars, newsletter boxes and footers written as divs (as
    most sites write them) are left out; the article's sentences, its link target and its
    table come through as Markdown."""
    texts = {kind: html_to_text(page(kind))[1] for kind in MAIN}
    assert scores(texts) == {
        "main_kept": sum(len(v) for v in MAIN.values()),
        "boilerplate_dropped": len(BOILERPLATE) * len(MAIN),
        "links_kept": len(MAIN),
        "tables_kept": len(MAIN),
    }
    assert f"[source]({LINK})" in texts["blog_zh"] and "| Stage | Seconds |" in texts["blog_zh"]


def test_a_page_nested_past_any_recursion_limit_is_still_read() -> None:
    _, text = html_to_text("<html><body>" + "<div>" * 100_000 + "deep text" + "</div>" * 100_000)
    assert text == "deep text"


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "/etc/passwd"]
)
def test_other_schemes_are_refused(settings: Settings, url: str) -> None:
    text, _ = run_tool(settings, "fetch_web", {"url": url})
    assert text.startswith("Error: only http and https")


def test_loopback_is_refused_by_default(settings: Settings, site: str) -> None:
    text, _ = run_tool(settings, "fetch_web", {"url": f"{site}/page"})
    assert "local, private or reserved address" in text and "FETCH_ALLOW_PRIVATE" in text
    text, _ = run_tool(settings, "fetch_web", {"url": "http://localhost:1/"})
    assert "local, private or reserved address" in text


def test_allowed_fetch_follows_redirects_and_converts(settings: Settings, site: str) -> None:
    text, _ = run_tool(allowing_private(settings), "fetch_web", {"url": f"{site}/moved"})
    assert text.startswith(f"URL: {site}/page\nTitle: 季度报告 Q3\n\n# Revenue")
    assert "alert" not in text and "Home | About" not in text


def test_size_cap_and_paging(settings: Settings, site: str) -> None:
    text, _ = run_tool(
        allowing_private(settings, fetch_max_bytes=10_000), "fetch_web", {"url": f"{site}/big"}
    )
    assert "larger than 10,000 bytes" in text
    text, _ = run_tool(allowing_private(settings), "fetch_web", {"url": f"{site}/big", "max_chars": 1000})
    assert "continue with offset=1000" in text and text.count("x") == 1000


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2001:4860:4860::8888"])
def test_public_addresses_pass(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


@pytest.fixture
def redirector() -> Iterator[tuple[int, list[str]]]:
    """A loopback server whose /to?url=U redirects to U; it records every path asked."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            return

        def do_GET(self) -> None:
            asked.append(self.path)
            if self.path.startswith("/to?url="):
                self.send_response(302)
                self.send_header("Location", self.path.removeprefix("/to?url="))
                self.end_headers()
                return
            body = b"arrived"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], asked
    server.shutdown()


def test_a_redirect_to_another_host_is_followed_only_when_that_host_was_named(
    settings: Settings, redirector: tuple[int, list[str]]
) -> None:
    port, asked = redirector
    start = f"http://127.0.0.1:{port}/to?url=http://localhost:{port}/end"
    named = {"named_hosts": hosts_typed(f"read http://127.0.0.1:{port}/")}
    text, _ = run_tool(allowing_private(settings), "fetch_web", {"url": start}, state=named)
    assert text.startswith("Error: not followed:") and f"http://localhost:{port}/end" in text
    assert asked == [f"/to?url=http://localhost:{port}/end"]  # the second host was never asked

    both = {"named_hosts": hosts_typed(f"http://127.0.0.1:{port}/ and http://localhost:{port}/")}
    text, _ = run_tool(allowing_private(settings), "fetch_web", {"url": start}, state=both)
    assert text == f"URL: http://localhost:{port}/end\n\narrived"

    same_host = f"http://127.0.0.1:{port}/to?url=/end"  # the same host: followed as before
    text, _ = run_tool(allowing_private(settings), "fetch_web", {"url": same_host}, state=named)
    assert text.endswith("arrived")


def test_every_redirect_hop_is_checked_against_the_address_rules(
    settings: Settings, redirector: tuple[int, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A named public host that redirects to a loopback address: the hop is refused."""
    from generalAgent.tools.builtin import fetch_web

    port, asked = redirector

    def resolve(host: str, port: int) -> list:
        return [ipaddress.ip_address("127.0.0.1" if host == "public.example" else host)]

    monkeypatch.setattr(fetch_web, "resolve_host", resolve)
    monkeypatch.setattr(fetch_web, "is_public", lambda address: str(address) == "127.0.0.1")
    target = f"http://127.0.0.2:{port}/secret"
    named = {"named_hosts": hosts_typed("public.example and http://127.0.0.2/")}
    text, _ = run_tool(
        settings, "fetch_web", {"url": f"http://public.example:{port}/to?url={target}"}, state=named
    )
    assert "127.0.0.2" in text and "local, private or reserved address" in text
    assert asked == [f"/to?url={target}"]
