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


def trust_folder(folder: Path, variables: dict[str, list[str]] | None = None) -> None:
    """Trust `folder` as `generalagent trust` does, and let its servers expand `variables`
    (by server name) through the user-level mcp.json's `folderVariables`."""
    from generalAgent.config.trust import TrustStore
    from generalAgent.tools.mcp.config import FOLDER_VARIABLES_KEY, user_config_file

    TrustStore().remember(folder, True)
    if variables:
        path = user_config_file()
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"mcpServers": {}}
        data[FOLDER_VARIABLES_KEY] = variables
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
