"""What the sub-commands (index, search, kb, mcp, models, sessions, config) and the chat
share: their settings, and how they stop.

The exit codes are the README's: 1 when the command failed (a file that cannot be read,
a download that broke, nothing found), 2 for a usage or configuration error, a setting
that cannot be used among them. Each failure is one red line on stderr, so what a script
reads on stdout stays clean.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer
from rich.markup import escape

from generalAgent.cli.settings_errors import settings_error_line
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.config.settings import Settings, SettingsError, load_settings

EXIT_FAILED = 1
EXIT_USAGE = 2


def fail(message: str, code: int) -> NoReturn:
    """Say `message` in one red line on stderr and exit with `code` (EXIT_FAILED or EXIT_USAGE)."""
    terminal_console(stderr=True, highlight=False, soft_wrap=True).print(f"[red]{escape(message)}[/]")
    raise typer.Exit(code)


def settings_or_fail() -> Settings:
    """The settings from the environment and the .env files; a bad one is its line and exit 2."""
    try:
        return load_settings()
    except SettingsError as exc:
        fail(settings_error_line(exc), EXIT_USAGE)


def settings_from(ctx: typer.Context) -> Settings:
    """The app's settings when it put them in ctx.obj, else read as `settings_or_fail` does;
    an untrusted folder's ignored configuration is said in one line (cli/folder_trust.py),
    and an older ./data moves into the data home once (cli/data_home.py)."""
    if isinstance(ctx.obj, Settings):
        return ctx.obj
    settings = settings_or_fail()
    from generalAgent.cli.data_home import move_older_store
    from generalAgent.cli.folder_trust import ignored_line

    err = terminal_console(stderr=True, highlight=False, soft_wrap=True)
    if settings.sources.trust.ignored:
        err.print(escape(ignored_line(settings.sources.trust)), style="yellow")
    move_older_store(settings, Path.cwd(), err)
    ctx.obj = settings  # read once per command
    return settings
