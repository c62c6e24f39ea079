"""MCP servers from the command line: `generalagent mcp list | add | remove`, and the `/mcp` table.

    generalagent mcp list
    generalagent mcp add notes -- python notes_server.py --db notes.db
    generalagent mcp add search --url https://mcp.example.com/mcp --header 'Authorization: Bearer ${SEARCH_KEY}'
    generalagent mcp add github --env 'GITHUB_TOKEN=${GITHUB_TOKEN}' --disabled -- npx -y @modelcontextprotocol/server-github
    generalagent mcp remove notes

`add` and `remove` edit the working folder's mcp.json (MCP_CONFIG's file when it is set,
the user-level file with --user) and keep everything else in it. Nothing here starts a
server (`generalagent doctor` does); values of `env` and `headers` are never printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from generalAgent.cli.invocation import command_hint
from generalAgent.cli.subcommands import EXIT_USAGE, fail, settings_or_fail
from generalAgent.config.settings import Settings
from generalAgent.i18n import N_, _
from generalAgent.tools.mcp.config import (
    MCPConfigError,
    add_server_entry,
    config_files,
    load_mcp_config,
    remove_server_entry,
    user_config_file,
)

if TYPE_CHECKING:  # the manager imports LangChain, which `generalagent` must not load at start-up
    from generalAgent.tools.mcp.manager import ServerStatus

app = typer.Typer(
    help=_("List, add and remove MCP servers (tools from other programs; see docs/mcp.md)."),
    no_args_is_help=True,
    rich_markup_mode="rich",
)

NO_SERVERS = N_("No MCP servers configured. Add one with: generalagent mcp add NAME -- COMMAND [ARGS...]")
ADDED = N_("Added {name} to {path}{note}.")
REMOVED = N_("Removed {name} from {path}.")
NOT_FOUND = N_("No MCP server named {name} in {files}.")
NEEDS_TARGET = N_("Give the server's command after --, or --url for a streamable HTTP server (not both).")
BAD_PAIR = N_("{option} takes {form}; got {value}.")
STATES = {
    "ready": N_("ready"),
    "starting": N_("starting…"),
    "failed": N_("failed: {detail}"),
    "stopped": N_("stopped: {detail} (the next call restarts it)"),
    "off": N_("off: @{handle} starts it"),
}


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="mcp")


@app.command("list", help=_("Show the configured servers (without starting them)."))
def list_command() -> None:
    """Show the configured servers (without starting them)."""
    settings = settings_or_fail()
    config = load_mcp_config(
        settings.mcp,
        folder_trusted=settings.sources.trust.covers(Path.cwd()),
        explicit_scope="folder" if settings.from_folder("MCP_CONFIG") else "user",
    )
    console = Console(highlight=False)
    for problem in config.problems:
        console.print(f"[yellow]{escape(problem)}[/]")
    for path in config.ignored:
        console.print(
            "[yellow]"
            + escape(
                _("{path} is not read: this folder is not trusted ({command} trust).").format(
                    path=path, command=command_hint()
                )
            )
            + "[/]"
        )
    if not config.servers:
        console.print(escape(_(NO_SERVERS)))
        return
    table = Table(box=None, header_style="bold")
    for column in (N_("server"), N_("starts"), N_("trust"), N_("command or URL"), N_("file")):
        table.add_column(_(column))
    for server in config.servers:
        starts = _("at start-up") if server.enabled else _("on @{handle}").format(handle=server.handle)
        table.add_row(
            Text(f"@{server.handle}"),
            starts,
            _("trusted") if server.trust else _("asks"),
            Text(server.shown_target or "?"),
            Text(str(server.source)),
        )
        for line in ([server.problem] if server.problem else []) + list(server.warnings):
            table.add_row("", Text(f"⚠ {line}", style="yellow"), "", "", "")
    console.print(table)


@app.command("add", help=_("Add a server to mcp.json."))
def add_command(
    name: Annotated[
        str, typer.Argument(help=_("The server's name: @NAME mentions it, NAME__tool names its tools."))
    ],
    command: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer reads the annotation
        typer.Argument(
            help=_("After --: the command that starts a local (stdio) server, and its arguments.")
        ),
    ] = None,
    url: Annotated[Optional[str], typer.Option("--url", help=_("A streamable HTTP server's URL."))] = None,  # noqa: UP045
    env: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--env", "-e", help=_("KEY=VALUE for the server process; ${VAR} is expanded at start.")),
    ] = None,
    header: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--header", "-H", help=_("'Name: value' sent to an HTTP server; ${VAR} is expanded.")),
    ] = None,
    cwd: Annotated[Optional[str], typer.Option("--cwd", help=_("Working folder of a stdio server."))] = None,  # noqa: UP045
    tool: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--tool", help=_("Offer only this tool of the server (repeat for more).")),
    ] = None,
    disabled: Annotated[
        bool, typer.Option("--disabled", help=_("Start it only when you @mention it in the chat."))
    ] = False,
    trust: Annotated[
        bool, typer.Option("--trust", help=_("Run its tools without asking each time."))
    ] = False,
    timeout: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option("--timeout", help=_("Seconds one call may take (default MCP_CALL_TIMEOUT).")),
    ] = None,
    user: Annotated[bool, typer.Option("--user", help=_("Write the user-level mcp.json."))] = False,
) -> None:
    """Add a server to mcp.json."""
    settings = settings_or_fail()
    if bool(command) == bool(url):
        fail(_(NEEDS_TARGET), EXIT_USAGE)
    entry: dict[str, Any] = {}
    if url:
        entry.update(type="http", url=url)
    else:
        assert command is not None
        entry.update(command=command[0], args=command[1:])
    if env:
        entry["env"] = dict(_pair(item, "=", "--env", "KEY=VALUE") for item in env)
    if header:
        entry["headers"] = dict(_pair(item, ":", "--header", "'Name: value'") for item in header)
    if cwd:
        entry["cwd"] = cwd
    if tool:
        entry["tools"] = list(tool)
    if disabled:
        entry["enabled"] = False
    if trust:
        entry["trust"] = True
    if timeout is not None:
        entry["timeout"] = timeout
    path = _target_file(settings, user)
    try:
        add_server_entry(path, name, entry)
    except MCPConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    note = _("; @mention it in the chat to start it") if disabled else ""
    console = Console(highlight=False)
    console.print(_(ADDED).format(name=name, path=path, note=note), markup=False)
    if not user and not settings.mcp.mcp_config and not settings.sources.trust.covers(Path.cwd()):
        console.print(
            _("This folder is not trusted: its servers start once you run {command} trust here.").format(
                command=command_hint()
            ),
            markup=False,
            style="yellow",
        )


@app.command("remove", help=_("Remove a server from mcp.json."))
def remove_command(
    name: Annotated[str, typer.Argument(help=_("The server's name as written in mcp.json."))],
    user: Annotated[bool, typer.Option("--user", help=_("Remove it from the user-level mcp.json."))] = False,
) -> None:
    """Remove a server from mcp.json."""
    settings = settings_or_fail()
    path = _target_file(settings, user)
    try:
        removed = remove_server_entry(path, name)
    except MCPConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    if not removed:
        fail(_(NOT_FOUND).format(name=name, files=path), EXIT_USAGE)
    Console(highlight=False).print(_(REMOVED).format(name=name, path=path), markup=False)


def describe_state(status: ServerStatus) -> str:
    """The state column: what the server is doing, and what the user can do about it."""
    text = _(STATES[status.state]).format(detail=status.shown_detail(_), handle=status.handle)
    if status.state == "ready" and status.started_in is not None:
        text += f" ({status.started_in:.1f} s)"
    return text


def servers_table(statuses: list[ServerStatus], in_session: set[str]) -> Group:
    """What `/mcp` shows: each server's state, trust and tools, and which ones this session uses."""
    table = Table(box=None, header_style="bold")
    for column in (N_("server"), N_("state"), N_("trust"), N_("session"), N_("tools")):
        table.add_column(_(column))
    for status in statuses:
        names = ", ".join(name for name, _description in status.tools)
        table.add_row(
            Text(f"@{status.handle}"),
            Text(describe_state(status)),
            _("trusted") if status.trust else _("asks"),
            "✓" if status.handle in in_session else "",
            Text(names or "-"),
        )
    hint = Text(
        _(
            "Tools of a server that starts after your message join from the next one. "
            "Untrusted servers' tools ask before each call."
        ),
        style="dim",
    )
    return Group(table, hint)


def _pair(item: str, separator: str, option: str, form: str) -> tuple[str, str]:
    key, found, value = item.partition(separator)
    if not found or not key.strip():
        fail(_(BAD_PAIR).format(option=option, form=form, value=repr(item)), EXIT_USAGE)
    return key.strip(), value.strip()


def _target_file(settings: Settings, user: bool) -> Path:
    if user:
        return user_config_file()
    if settings.mcp.mcp_config:
        return Path(settings.mcp.mcp_config).expanduser()
    return config_files(settings.mcp, Path.cwd())[-1][0]
