"""A small MCP server for the tests, written with the `mcp` package's FastMCP.

    python tests/support/mcp_server.py                 # serves over stdio
    python tests/support/mcp_server.py --hang          # starts, then never answers
    python tests/support/mcp_server.py --fail-start    # prints an error on stderr and exits
    python tests/support/mcp_server.py --quick         # echo, add and pid, without the MCP SDK

`build_server()` gives the same tools for a streamable HTTP server on loopback
(`serve_http` runs one in a thread of the test). Tools with side effects write to the
file named by NOTES_FILE, so a test can tell whether a call really ran.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP


def build_server(name: str = "notes", json_response: bool = False) -> FastMCP:
    # Imported here, so that --hang and --fail-start cost only an interpreter's start.
    import anyio
    from mcp.server.fastmcp import FastMCP

    server = FastMCP(name, log_level="WARNING", json_response=json_response)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def write_note(text: str) -> str:
        """Append a line to the notes file."""
        with open(os.environ["NOTES_FILE"], "a", encoding="utf-8") as notes:
            notes.write(text + "\n")
        return f"noted: {text}"

    @server.tool()
    def fail(message: str) -> str:
        """Raise an error with this message."""
        raise ValueError(message)

    @server.tool()
    def crash() -> str:
        """End the server process at once, in the middle of the call."""
        os._exit(3)

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Wait, then answer (other calls are served meanwhile)."""
        await anyio.sleep(seconds)
        return f"slept {seconds} s"

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    def big(chars: int) -> str:
        """A text of this many characters."""
        return "x" * chars

    @server.tool()
    def big_mb(mb: int) -> str:
        """A text of `mb` megabytes (in UTF-8), Chinese first."""
        return "BIG-START " + "数据" * 1000 + "x" * (mb * 1_000_000 - 6000)

    @server.tool()
    def show_env(variable: str) -> str:
        """The value of an environment variable of the server process."""
        return os.environ.get(variable, "(unset)")

    @server.tool(name="files.read")
    def files_read(path: str) -> str:
        """A tool whose name needs changing to be valid for every provider."""
        return f"read {path}"

    return server


@contextmanager
def serve_http(name: str = "remote", port: int = 0, json_response: bool = False) -> Iterator[str]:
    """A streamable HTTP server on loopback (a free port, or `port` to stand in for a server
    that restarted), for the duration; yields its URL. It answers calls as event streams, or
    as JSON bodies with `json_response`."""
    import uvicorn

    app = build_server(name, json_response).streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


# --quick: the SDK's import takes a second or more of CPU, which a loaded machine stretches
# past a short MCP_STARTUP_TIMEOUT; this server answers as soon as the interpreter runs, so
# a test where one server must time out and another must not does not depend on speed.
QUICK_TOOLS = [
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "pid",
        "description": "The server's process id.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "big",
        "description": "A text answer of `mb` megabytes (written as it goes, never held).",
        "inputSchema": {"type": "object", "properties": {"mb": {"type": "integer"}}, "required": ["mb"]},
    },
]


def serve_quick(name: str) -> None:
    """MCP over stdio by hand (newline-delimited JSON-RPC): initialize, tools/list, tools/call."""
    import json

    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:  # a notification (notifications/initialized)
            continue
        method, params = message.get("method"), message.get("params") or {}
        answer: dict[str, object] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            answer["result"] = {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": name, "version": "1.0"},
            }
        elif method == "tools/list":
            answer["result"] = {"tools": QUICK_TOOLS}
        elif method == "tools/call" and params.get("name") == "big":
            # One JSON-RPC line of `mb` MB, streamed: the server stays small, the client gets it all.
            out = sys.stdout.buffer
            head = json.dumps({"jsonrpc": "2.0", "id": message["id"]})[:-1]
            out.write((head + ', "result": {"content": [{"type": "text", "text": "BIG-START ').encode())
            block = ("数据" * 1000 + "x" * (1_000_000 - 6000)).encode()  # 1 MB, Chinese included
            for _ in range(int((params.get("arguments") or {})["mb"])):
                out.write(block)
            out.write(b'"}], "isError": false}}\n')
            out.flush()
            continue
        elif method == "tools/call" and params.get("name") in {"echo", "add", "pid"}:
            arguments = params.get("arguments") or {}
            if params["name"] == "echo":
                text = arguments["text"]
            elif params["name"] == "add":
                text = str(arguments["a"] + arguments["b"])
            else:
                text = str(os.getpid())
            answer["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
        elif method == "ping":
            answer["result"] = {}
        else:
            answer["error"] = {"code": -32601, "message": f"no method {method}"}
        print(json.dumps(answer), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="notes")
    parser.add_argument("--hang", action="store_true", help="never answer, not even initialize")
    parser.add_argument("--fail-start", action="store_true", help="exit at once with an error")
    parser.add_argument("--quick", action="store_true", help="echo, add and pid, without the MCP SDK")
    options = parser.parse_args()
    if options.quick:
        serve_quick(options.name)
        return
    if options.fail_start:
        print("notes server: cannot open the database", file=sys.stderr, flush=True)
        sys.exit(1)
    if options.hang:
        time.sleep(3600)
    build_server(options.name).run("stdio")


if __name__ == "__main__":
    main()
