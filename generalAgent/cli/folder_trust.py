"""Folder trust at the terminal: the one question, the one line, and `generalagent trust`.

The chat asks once in any folder not decided yet (config/trust.py) and remembers the
answer; `-p`, `index`, `kb`, `search` and everything else that cannot ask use the stored
answer and, when the folder's configuration is ignored, say so in one line on stderr with
the command that trusts it. In a trusted folder, what relaxes approvals (AUTO_APPROVE_TOOLS or COMMAND_ENV
from the folder's .env, `"trust": true` in the folder's mcp.json) is shown at start-up,
one line each, so it is never silent.

    generalagent trust [PATH]           trust PATH (default: this folder)
    generalagent trust --revoke [PATH]  stop trusting it
    generalagent trust list             the remembered folders
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from generalAgent.cli.invocation import command_hint
from generalAgent.cli.settings_errors import settings_error_line
from generalAgent.cli.terminal_text import one_line, terminal_console, typed_answer
from generalAgent.config.settings import Settings, SettingsError, load_settings
from generalAgent.config.trust import (
    FolderTrust,
    TrustStore,
    TrustStoreError,
    folder_trust,
    project_configuration,
)
from generalAgent.display import public_url
from generalAgent.i18n import _

YES = {"y", "yes", "是", "是的", "好", "信任"}
# The settings from a folder's .env that relax what asks the user first.
RELAXING_SETTINGS = ("AUTO_APPROVE_TOOLS", "COMMAND_ENV", "SANDBOX")


def settle_folder_trust(settings: Settings, interactive: bool, console: Console) -> Settings:
    """The settings to run with: asks about an undecided folder when `interactive`, then
    reports what is ignored (one line) or what relaxes approvals (one line each)."""
    trust = settings.sources.trust
    if trust.undecided and interactive:
        trusted = ask_about_folder(trust, console)
        if trusted:
            try:
                settings = load_settings(trust=trust.decided(True))
            except SettingsError as exc:  # the folder's .env has a value that cannot be used
                console.print(f"[red]{escape(settings_error_line(exc))}[/]")
                raise typer.Exit(2) from None
        trust = trust.decided(trusted)
    elif trust.ignored:
        console.print(escape(ignored_line(trust)), style="yellow", markup=True)
    if trust.applies:
        for line in relaxed_approval_lines(settings, Path.cwd()):
            console.print(escape(line), style="yellow")
    return settings


def ask_about_folder(trust: FolderTrust, console: Console) -> bool:
    """The question, once; the answer is remembered (an interrupted question is a "no" for now)."""
    assert trust.folder is not None
    if trust.found:
        console.print(
            escape(
                _("This folder carries project configuration: {names}").format(names=", ".join(trust.found))
            ),
            style="bold",
        )
        console.print(f"  {escape(one_line(str(trust.folder)))}")  # its name is the author's: one line
        console.print(
            escape(
                _(
                    "It can change the model endpoint and key, start programs (MCP servers), relax "
                    "approvals and instruct the model. Trust it only if you trust whoever made it."
                )
            )
        )
    else:
        console.print(escape(_("The agent works in this folder:")), style="bold")
        console.print(f"  {escape(one_line(str(trust.folder)))}")  # its name is the author's: one line
        console.print(
            escape(
                _(
                    "Trusted, its files are read in place (writing one still asks first); "
                    "not trusted, the agent sees only what you attach with #."
                )
            )
        )
    try:
        answer = console.input(escape(_("Trust this folder? [y/N] ")))
    except (EOFError, KeyboardInterrupt):
        console.print()
        console.print(escape(ignored_line(trust)), style="yellow")
        return False
    trusted = typed_answer(answer) in YES
    try:
        TrustStore().remember(trust.folder, trusted)
    except TrustStoreError as exc:
        console.print(
            escape(_("The answer holds for this run only: {reason}").format(reason=exc)), style="yellow"
        )
    if trusted:
        console.print(
            escape(
                _("Trusted {folder} ({command} trust --revoke takes it back).").format(
                    folder=one_line(str(trust.folder)), command=command_hint()
                )
            ),
            style="green",
        )
    else:
        console.print(escape(ignored_line(trust)), style="yellow")
    return trusted


def ignored_line(trust: FolderTrust) -> str:
    """One line: what of this folder is ignored, and what trusts it."""
    if not (trust.ignored or trust.found):
        return _(
            "This folder is not trusted: the agent reads only what you attach with # (to trust it: {command} trust)."
        ).format(command=command_hint())
    return _("Ignored this folder's {names}: it is not trusted (to use them: {command} trust).").format(
        names=", ".join(trust.ignored or trust.found), command=command_hint()
    )


def relaxed_approval_lines(settings: Settings, cwd: Path) -> list[str]:
    """What the trusted folder relaxes or redirects: the endpoint, AUTO_APPROVE_TOOLS and
    COMMAND_ENV from its .env, `"trust": true` servers of its mcp.json. Empty when nothing
    from the folder does."""
    lines = []
    if settings.from_folder("OPENAI_BASE_URL") and settings.model.openai_base_url:
        lines.append(
            _("This folder's .env sets OPENAI_BASE_URL={url}: the model's requests and key go there").format(
                url=public_url(settings.model.openai_base_url)
            )
        )
    for variable in RELAXING_SETTINGS:
        if settings.from_folder(variable):
            value = {
                "AUTO_APPROVE_TOOLS": settings.tools.auto_approve_tools,
                "COMMAND_ENV": settings.tools.command_env,
                "SANDBOX": settings.tools.sandbox,
            }[variable]
            lines.append(
                _("This folder's .env sets {variable}={value}").format(variable=variable, value=value)
            )
    from generalAgent.tools.mcp.config import environment_variables, load_mcp_config

    config = load_mcp_config(
        settings.mcp,
        cwd,
        environment_variables(settings.sources.in_order),
        folder_trusted=settings.sources.trust.covers(cwd),
        explicit_scope="folder" if settings.from_folder("MCP_CONFIG") else "user",
    )
    for server in config.servers:
        if server.scope == "folder" and server.trust:
            lines.append(
                _('MCP server @{handle} of {file} is "trust": true: its tools run without asking').format(
                    handle=server.handle, file=server.source
                )
            )
    return lines


# -- generalagent trust ------------------------------------------------------------------------


def register(parent: typer.Typer) -> None:
    parent.command(
        "trust",
        help=_("Trust a folder's configuration (.env, mcp.json, AGENTS.md ...), --revoke it, or list them."),
    )(trust_command)


def trust_command(
    path: Optional[str] = typer.Argument(  # noqa: UP045 - typer reads the annotation
        None, help=_("The folder (default: this one), or 'list' for the remembered folders.")
    ),
    revoke: bool = typer.Option(False, "--revoke", help=_("Stop trusting the folder.")),
) -> None:
    """Trust a folder's configuration, stop trusting it, or list the remembered folders."""
    console = terminal_console(highlight=False, soft_wrap=True)
    if path == "list" and not revoke:
        _list(console)
        return
    folder = Path(path).expanduser() if path else Path.cwd()
    if not folder.is_dir():
        console.print("[red]" + escape(_("{path} is not a folder.").format(path=folder)) + "[/]")
        raise typer.Exit(2)
    try:
        real = TrustStore().remember(folder, not revoke)
    except TrustStoreError as exc:
        console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(1) from None
    found = ", ".join(project_configuration(real)) or _("nothing yet")
    if revoke:
        message = _("No longer trusted: {folder}. Its configuration ({names}) is ignored from now on.")
    else:
        message = _("Trusted: {folder}. Its configuration ({names}) is used from now on.")
    console.print(escape(message.format(folder=one_line(str(real)), names=found)))


def _list(console: Console) -> None:
    decisions = TrustStore().decisions()
    if not decisions:
        console.print(escape(_("No folder has been trusted or refused yet.")))
        return
    here = folder_trust().folder
    for folder, (trusted, decided) in sorted(
        decisions.items(), key=lambda item: (not item[1][0], str(item[0]))
    ):
        state = _("trusted") if trusted else _("not trusted")
        mark = " ←" if folder == here else ""
        console.print(f"{escape(state)}  {escape(one_line(str(folder)))}  [dim]{escape(decided)}{mark}[/]")
