"""mcp.json: the shapes other agents write, `${VAR}` expansion, secrets, files and their order, edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generalAgent.config.settings import MCPSettings
from generalAgent.tools.mcp.config import (
    MCPConfigError,
    add_server_entry,
    hide_password,
    load_mcp_config,
    parse_server,
    redact,
    remove_server_entry,
    user_config_file,
)
from tests.support.mcp_config import write_mcp_json

CLAUDE_STYLE = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
        },
        "github": {
            "command": "docker",
            "args": [
                "run",
                "-i",
                "--rm",
                "-e",
                "GITHUB_PERSONAL_ACCESS_TOKEN",
                "ghcr.io/github/github-mcp-server",
            ],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"},
        },
        "docs": {
            "type": "http",
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer ${DOCS_KEY:-anonymous-key}"},
        },
    }
}


def settings_for(tmp_path: Path, **values: object) -> MCPSettings:
    return MCPSettings(**values)


def user_level_folder() -> Path:
    """The user-level config folder: tests/conftest.py makes an empty one per test."""
    return user_config_file().parent


def test_a_claude_style_file_is_read_as_is(tmp_path: Path) -> None:
    chosen = tmp_path / "mcp.json"  # named by MCP_CONFIG: the user's own file, every variable expands
    chosen.write_text(json.dumps(CLAUDE_STYLE), encoding="utf-8")
    settings = settings_for(tmp_path, mcp_config=str(chosen))
    config = load_mcp_config(settings, tmp_path, {"GITHUB_TOKEN": "ghp_secret_value_1"})
    assert config.problems == []
    assert [s.name for s in config.servers] == ["filesystem", "github", "docs"]
    filesystem, github, docs = config.servers
    assert filesystem.transport == "stdio" and filesystem.enabled and not filesystem.trust
    assert filesystem.cwd == tmp_path  # the folder of the file: "." is the user's documents
    assert github.env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret_value_1"}
    assert "ghp_secret_value_1" in github.secrets
    assert docs.transport == "http" and docs.url == "https://mcp.example.com/mcp"
    assert docs.headers == {"Authorization": "Bearer anonymous-key"}  # the default after :-
    assert all(s.problem is None for s in config.servers)


def test_a_missing_variable_disables_only_that_server(tmp_path: Path) -> None:
    user_config_file().write_text(json.dumps(CLAUDE_STYLE), encoding="utf-8")
    config = load_mcp_config(settings_for(tmp_path), tmp_path, {})
    github = config.get("github")
    assert github is not None
    assert github.problem == "needs GITHUB_TOKEN, which is not set; set it in the environment or .env"
    assert config.get("filesystem").problem is None  # type: ignore[union-attr]


def test_variables_come_from_dot_env_under_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generalAgent.tools.mcp.config import environment_variables

    user = tmp_path / "user.env"
    user.write_text("TOKEN_A=user\nTOKEN_B=user\nTOKEN_C=user\n", encoding="utf-8")
    folder = tmp_path / ".env"
    folder.write_text("TOKEN_A=folder\nTOKEN_B=folder\n", encoding="utf-8")
    monkeypatch.setenv("TOKEN_B", "environment")
    values = environment_variables([user, folder])  # lowest priority first, as settings read them
    assert (values["TOKEN_A"], values["TOKEN_B"], values["TOKEN_C"]) == ("folder", "environment", "user")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"type": "sse", "url": "https://x/sse"}, "SSE transport"),
        ({"command": "a", "url": "https://x"}, "both 'command' and 'url'"),
        ({}, "needs 'command'"),
        ({"command": ["python"]}, "'command' must be a string"),
        ({"command": "python", "args": "server.py"}, "'args' must be a list of strings"),
        ({"url": "ftp://x"}, "must start with http:// or https://"),
        ({"command": "python", "trust": "yes"}, "'trust' must be true or false"),
        ({"command": "python", "timeout": 0}, "'timeout' must be a number"),
        ({"type": "websocket", "url": "ws://x"}, "unknown type 'websocket'"),
        ("python server.py", "must be a JSON object"),
    ],
)
def test_a_bad_entry_is_a_one_line_problem_of_that_server(entry: object, problem: str) -> None:
    server = parse_server("x", entry, Path("/tmp/mcp.json"), {})
    assert server.problem is not None and problem in server.problem
    assert "\n" not in server.problem


def test_enabled_trust_tools_timeout_and_other_agents_keys(tmp_path: Path) -> None:
    entry = {
        "command": "python",
        "disabled": True,  # Cline's spelling
        "trust": True,
        "tools": ["search"],
        "timeout": 120,
        "autoApprove": [],
    }
    server = parse_server("search", entry, tmp_path / "mcp.json", {})
    assert not server.enabled and server.trust and server.tools == ("search",) and server.timeout == 120.0
    assert server.warnings == ("unknown key 'autoApprove' ignored",)
    assert parse_server("s", {"command": "python", "enabled": False}, tmp_path, {}).enabled is False


def test_files_in_order_later_ones_replace_a_server(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    write_mcp_json(user_level_folder(), {"a": {"command": "user-a"}, "b": {"command": "user-b"}})
    write_mcp_json(tmp_path, {"a": {"command": "claude-a"}}, name=".mcp.json")
    write_mcp_json(tmp_path, {"c": {"command": "folder-c"}})
    config = load_mcp_config(settings, tmp_path, {}, folder_trusted=True)
    assert [(s.name, s.command) for s in config.servers] == [
        ("b", "user-b"),
        ("a", "claude-a"),
        ("c", "folder-c"),
    ]
    assert len(config.files) == 3


def test_mcp_config_names_the_only_file(tmp_path: Path) -> None:
    write_mcp_json(tmp_path, {"folder": {"command": "x"}})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    chosen = write_mcp_json(elsewhere, {"chosen": {"command": "y"}}, name="servers.json")
    config = load_mcp_config(settings_for(tmp_path, mcp_config=str(chosen)), tmp_path, {})
    assert [s.name for s in config.servers] == ["chosen"]
    missing = load_mcp_config(settings_for(tmp_path, mcp_config=str(tmp_path / "nope.json")), tmp_path, {})
    assert missing.servers == [] and "no such file" in missing.problems[0]


def test_an_unreadable_file_is_one_problem_and_the_others_still_count(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    user_config_file().write_text("{not json", encoding="utf-8")
    write_mcp_json(tmp_path, {"ok": {"command": "x"}})
    config = load_mcp_config(settings, tmp_path, {}, folder_trusted=True)
    assert [s.name for s in config.servers] == ["ok"]
    assert len(config.problems) == 1 and "not valid JSON" in config.problems[0]


def test_two_names_that_become_one_handle_keep_the_first(tmp_path: Path) -> None:
    write_mcp_json(tmp_path, {"my.server": {"command": "a"}, "my server": {"command": "b"}})
    config = load_mcp_config(settings_for(tmp_path), tmp_path, {}, folder_trusted=True)
    assert [(s.name, s.handle) for s in config.servers] == [("my.server", "my-server")]
    assert "both become @my-server" in config.problems[0]


def test_secrets_are_cut_out_of_what_is_shown(tmp_path: Path) -> None:
    entry = {
        "command": "server",
        "args": ["--token", "${API_TOKEN}"],
        "env": {"DEBUG": "1", "DB_PASSWORD": "hunter2-long"},
    }
    server = parse_server("db", entry, tmp_path / "mcp.json", {"API_TOKEN": "tok-0123456789"})
    assert server.args == ("--token", "tok-0123456789")
    assert server.shown_target == "server --token ${API_TOKEN}"  # as written, never expanded
    assert server.secrets == {"tok-0123456789", "hunter2-long"}  # "1" is too short to redact
    assert server.redact("failed with tok-0123456789 and hunter2-long, DEBUG=1") == (
        "failed with *** and ***, DEBUG=1"
    )
    http = parse_server("h", {"url": "https://bob:pa55word-x@host.example/mcp"}, tmp_path, {})
    assert http.shown_target == "https://bob:***@host.example/mcp"
    assert "pa55word-x" in http.secrets


def test_redaction_takes_the_longest_secret_first() -> None:
    assert redact("key=abcdef123456", {"abcdef", "abcdef123456"}) == "key=***"
    assert hide_password("https://host/mcp") == "https://host/mcp"


def test_add_and_remove_keep_the_rest_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps({"mcpServers": {"a": {"command": "x"}}, "other": {"kept": True}}), encoding="utf-8"
    )
    add_server_entry(path, "b", {"type": "http", "url": "https://h/mcp"})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["other"] == {"kept": True} and list(data["mcpServers"]) == ["a", "b"]
    with pytest.raises(MCPConfigError, match="exists; remove it first"):
        add_server_entry(path, "a", {"command": "y"})
    assert remove_server_entry(path, "a") is True
    assert remove_server_entry(path, "a") is False
    assert list(json.loads(path.read_text(encoding="utf-8"))["mcpServers"]) == ["b"]
    fresh = tmp_path / "new" / "mcp.json"
    add_server_entry(fresh, "c", {"command": "z"})
    assert json.loads(fresh.read_text(encoding="utf-8")) == {"mcpServers": {"c": {"command": "z"}}}
