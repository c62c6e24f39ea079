"""The MCP servers an editor passes: taken as a trusted folder's mcp.json entries are."""

from __future__ import annotations

from pathlib import Path

from acp.schema import AcpMcpServer, EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from generalAgent.cli.acp.mcp_servers import EDITOR_SOURCE, editor_server_configs


def test_stdio_and_http_servers_become_the_users_own_untrusted_configuration(tmp_path: Path) -> None:
    servers = [
        McpServerStdio(
            name="notes",
            command="python",
            args=["server.py", "--quiet"],
            env=[EnvVariable(name="NOTES_TOKEN", value="tok-0123456789abcdef")],
        ),
        HttpMcpServer(
            type="http",
            name="docs",
            url="https://mcp.example.com/mcp",
            headers=[HttpHeader(name="Authorization", value="Bearer abcdef0123456789")],
        ),
    ]
    configs, problems = editor_server_configs(servers, tmp_path)
    assert problems == []
    stdio, http = configs
    assert (stdio.handle, stdio.transport, stdio.command, stdio.args) == (
        "notes",
        "stdio",
        "python",
        ("server.py", "--quiet"),
    )
    assert stdio.env == {"NOTES_TOKEN": "tok-0123456789abcdef"} and stdio.cwd == tmp_path
    assert stdio.source == tmp_path / EDITOR_SOURCE and stdio.scope == "folder"
    # Every call of their tools asks, as for any server the user has not marked trusted.
    assert not stdio.trust and not http.trust and stdio.problem is None and http.problem is None
    assert http.url == "https://mcp.example.com/mcp" and http.headers["Authorization"].startswith("Bearer")
    # Their keys are secrets: never shown in /mcp, doctor or an error.
    assert "tok-0123456789abcdef" in stdio.secrets and "Bearer abcdef0123456789" in http.secrets


def test_transports_the_agent_lacks_are_reported_not_started(tmp_path: Path) -> None:
    servers = [
        SseMcpServer(type="sse", name="old", url="https://mcp.example.com/sse", headers=[]),
        AcpMcpServer(type="acp", name="inside", server_id="srv-1"),
    ]
    configs, problems = editor_server_configs(servers, tmp_path)
    assert [c.name for c in configs] == ["old"] and "SSE" in (configs[0].problem or "")
    assert len(problems) == 1 and "inside" in problems[0]


def test_an_editors_http_server_is_started_and_its_tools_answer(tmp_path: Path) -> None:
    from generalAgent.cli.acp.mcp_servers import start_editor_servers
    from generalAgent.config.settings import MCPSettings
    from generalAgent.tools.mcp.config import MCPConfig
    from generalAgent.tools.mcp.manager import MCPServerManager
    from tests.support.mcp_server import serve_http

    settings = MCPSettings(mcp_startup_timeout=20.0)
    manager = MCPServerManager(MCPConfig(), settings, log_dir=tmp_path / "logs").start()
    try:
        with serve_http("remote") as url:
            given = [
                HttpMcpServer(type="http", name="remote", url=url, headers=[]),
                McpServerStdio(name="broken", command=str(tmp_path / "no-such-program"), args=[], env=[]),
            ]
            held, problems = start_editor_servers(manager, given, tmp_path)
            assert held == ["remote", "broken"]
            assert len(problems) == 1 and "broken" in problems[0]
            assert manager.loaded_handles() == ["remote"] and manager.is_enabled("remote")
            assert "remote__add" in manager.tool_names("remote")
            assert manager.call("remote", "add", {"a": 20, "b": 22}) == "42"
            # Passed again with the next session: the running server is kept as it is.
            assert start_editor_servers(manager, given[:1], tmp_path) == (["remote"], [])
            assert manager.handles() == ["remote", "broken"]
            # The first session closes: the second still holds "remote", which goes on.
            manager.let_go("remote")
            manager.let_go("broken")
            assert manager.handles() == ["remote"]
            assert manager.call("remote", "add", {"a": 1, "b": 2}) == "3"
            # The last one closes: the server is stopped and forgotten.
            manager.let_go("remote")
            assert manager.handles() == [] and manager.loaded_handles() == []
    finally:
        manager.close()


def test_letting_go_never_stops_a_configured_server(tmp_path: Path) -> None:
    """An editor passing a server of the same name as one in mcp.json shares it; its
    session closing leaves the configured one running."""
    from generalAgent.cli.acp.mcp_servers import start_editor_servers
    from generalAgent.config.settings import MCPSettings
    from generalAgent.tools.mcp.config import MCPConfig, parse_server
    from generalAgent.tools.mcp.manager import MCPServerManager
    from tests.support.mcp_server import serve_http

    settings = MCPSettings(mcp_startup_timeout=20.0)
    with serve_http("remote") as url:
        configured = parse_server(
            "remote", {"type": "http", "url": url}, tmp_path / "mcp.json", {}, scope="user"
        )
        manager = MCPServerManager(
            MCPConfig(servers=[configured]), settings, log_dir=tmp_path / "logs"
        ).start()
        try:
            manager.wait_for_startup()
            given = [HttpMcpServer(type="http", name="remote", url=url, headers=[])]
            held, problems = start_editor_servers(manager, given, tmp_path)
            assert problems == []
            for handle in held:
                manager.let_go(handle)
            assert manager.handles() == ["remote"]
            assert manager.call("remote", "add", {"a": 20, "b": 22}) == "42"
        finally:
            manager.close()
