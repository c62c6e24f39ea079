"""A local web site for fetch_web tests, and settings that let the tool reach it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from generalAgent.config.settings import Settings, load_settings

PAGE = """<!doctype html><html><head><title>季度报告 Q3</title><style>p{color:red}</style>
<script>alert('x')</script></head><body><nav>Home | About</nav>
<h1>Revenue</h1><p>Revenue grew <b>12%</b> year on year.</p><ul><li>营收增长</li><li>客户满意度 4.6</li></ul>
<footer>© 2026</footer></body></html>"""


@pytest.fixture
def site() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            return

        def do_GET(self) -> None:
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", "/page")
                self.end_headers()
                return
            body = (PAGE if self.path == "/page" else "x" * 50_000).encode("utf-8")
            self.send_response(200)
            self.send_header(
                "Content-Type", "text/html; charset=utf-8" if self.path == "/page" else "text/plain"
            )
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def allowing_private(settings: Settings, **tools) -> Settings:
    return load_settings(
        env_file=None,
        paths={"data_dir": settings.paths.data_dir},
        tools={"fetch_allow_private": True, **tools},
    )
