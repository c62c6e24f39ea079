"""A web page that answers slowly, for cancellation and timeout cases."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class SlowPage:
    """A loopback page that answers only when the test ends, so a fetch_web call stays running."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.release = threading.Event()
        page = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
                return

            def do_GET(self) -> None:
                page.requested.set()
                page.release.wait(30)
                body = b"<html><body><p>late page</p></body></html>"
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/slow"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
