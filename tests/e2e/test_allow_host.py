"""`--allow-host HOST`: fetch_web reaches HOST without asking, query strings included."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e


@pytest.fixture
def intranet() -> Iterator[tuple[str, list[str]]]:
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            asked.append(self.path)
            body = b"status: green"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", asked
    server.shutdown()


def test_an_allowed_host_is_fetched_without_a_question(
    openai_server: ScriptedOpenAIServer,
    cli_env: dict[str, str],
    workdir: Path,
    intranet: tuple[str, list[str]],
) -> None:
    base, asked = intranet
    env = {**cli_env, "FETCH_ALLOW_PRIVATE": "true"}
    url = f"{base}/status?service=build"
    openai_server.add(Reply(tool_calls=[ToolCall("fetch_web", {"url": url})]), Reply(text="Green."))
    # Piped text names nothing; the command line's --allow-host does.
    result = run_cli(["-p", "-", "--allow-host", "127.0.0.1"], env, workdir, stdin="is the build green?")
    assert result.returncode == 0, result.stderr
    assert asked == ["/status?service=build"] and result.stdout.strip() == "Green."

    openai_server.add(Reply(tool_calls=[ToolCall("fetch_web", {"url": url})]), Reply(text="Not asked."))
    without = run_cli(["-p", "-"], env, workdir, stdin="is the build green?")
    assert without.returncode == 3 and asked == ["/status?service=build"]  # refused: not sent again


def test_an_allow_host_without_a_host_stops_at_once(cli_env: dict[str, str], workdir: Path) -> None:
    result = run_cli(["-p", "hello", "--allow-host", "http://"], cli_env, workdir)
    assert result.returncode == 2 and "--allow-host 'http://': not a host name" in result.stderr
