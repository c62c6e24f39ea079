"""The MCP servers an editor passes with a session (`mcpServers` of session/new and load).

The editor is the user, so its servers are taken as the user's own configuration of the
project: parsed as a trusted folder's mcp.json entry is (tools/mcp/config.py, scope
"folder": no `trust`, so every call of their tools asks), then started by the agent's
MCP manager and joined to sessions as configured servers are (tools/visibility.py: at
the next turn), and stopped when the last session that passed them closes. A server already configured under the same name keeps its
configuration. Stdio and streamable HTTP servers are supported; SSE and ACP-transport
servers are not (the agent advertises so at initialize) and are reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from generalAgent.i18n import _
from generalAgent.tools.mcp.config import MCPServerConfig, parse_server
from generalAgent.tools.mcp.manager import MCPServerManager

# Where an editor's servers are said to come from (/mcp, doctor); their cwd is its parent.
EDITOR_SOURCE = "editor session"


def editor_server_entry(server: Any) -> dict[str, Any] | None:
    """An mcp.json entry for one ACP server description; None for a transport we lack."""
    kind = getattr(server, "type", None) or "stdio"
    if kind == "stdio" and getattr(server, "command", None):
        return {
            "command": server.command,
            "args": list(server.args or []),
            "env": {variable.name: variable.value for variable in server.env or []},
        }
    if kind in ("http", "sse"):  # sse: parse_server refuses it with the reason
        return {"type": kind, "url": server.url, "headers": {h.name: h.value for h in server.headers or []}}
    return None


def editor_server_configs(servers: Iterable[Any], cwd: Path) -> tuple[list[MCPServerConfig], list[str]]:
    """The editor's servers as configurations, and a line for each that cannot be used."""
    configs: list[MCPServerConfig] = []
    problems: list[str] = []
    for server in servers:
        name = str(getattr(server, "name", "") or "")
        entry = editor_server_entry(server)
        if entry is None or not name:
            problems.append(
                _("The editor's MCP server {name} uses a transport generalAgent does not support.").format(
                    name=name or "?"
                )
            )
            continue
        configs.append(parse_server(name, entry, cwd / EDITOR_SOURCE, {}, scope="folder"))
    return configs, problems


def start_editor_servers(
    manager: MCPServerManager, servers: Iterable[Any], cwd: Path
) -> tuple[list[str], list[str]]:
    """Start the editor's servers (blocking until each is ready or failed): the handles
    the session now holds on `manager` (each let go when it closes), and lines for the user."""
    configs, problems = editor_server_configs(servers, cwd)
    for config in configs:
        status = manager.add(config)
        if status.state != "ready":
            problems.append(
                _("The editor's MCP server {name} did not start: {detail}").format(
                    name=config.name, detail=status.shown_detail(_) or config.problem or status.state
                )
            )
    return [config.handle for config in configs], problems
