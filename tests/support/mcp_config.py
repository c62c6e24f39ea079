"""mcp.json entries for the test MCP server (tests/support/mcp_server.py), and a file to hold them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SERVER_SCRIPT = Path(__file__).resolve().parent / "mcp_server.py"


def stdio_entry(*flags: str, **settings: Any) -> dict[str, Any]:
    """A stdio server running the test server with this interpreter (so `mcp` is importable)."""
    return {"command": sys.executable, "args": [str(SERVER_SCRIPT), *flags], **settings}


def write_mcp_json(folder: Path, servers: dict[str, Any], name: str = "mcp.json") -> Path:
    path = folder / name
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    return path
