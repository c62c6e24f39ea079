"""`generalagent config`: where settings come from, and a user-level .env to start from.

generalagent config          the .env files in effect, the data folder, and the user-level path
generalagent config init     write the user-level .env from the template (never overwrites)
"""

from __future__ import annotations

import typer
from rich.markup import escape

from generalAgent.cli.i18n import _
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.config.settings import SettingsError, load_settings, render_env_example
from generalAgent.config.sources import ENV_FILE_NAME, ConfigFiles, user_config_dir

config_app = typer.Typer(help=_("Where settings come from; a user-level .env for every folder."))


@config_app.callback(
    invoke_without_command=True,
    help=_("The .env files in effect (first wins), the data folder, and the user-level file."),
)
def show(ctx: typer.Context) -> None:
    """The .env files in effect (first wins), the data folder, and the user-level file."""
    if ctx.invoked_subcommand is not None:
        return
    console = terminal_console(highlight=False)
    files = ConfigFiles.find()
    console.print(escape(_("settings from: environment + {files}").format(files=files.describe())))
    console.print(escape(_("user-level file: {path}").format(path=user_config_dir() / ENV_FILE_NAME)))
    try:
        settings = load_settings()
    except SettingsError as exc:
        console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2) from None
    console.print(escape(_("data folder: {path}").format(path=settings.paths.data_dir.resolve())))


@config_app.command(
    "init", help=_("Write the user-level .env from the template, to fill in MODEL_NAME and OPENAI_API_KEY.")
)
def init() -> None:
    """Write the user-level .env from the template, to fill in MODEL_NAME and OPENAI_API_KEY."""
    console = terminal_console(highlight=False)
    target = user_config_dir() / ENV_FILE_NAME
    if target.exists():
        console.print(escape(_("{path} already exists; edit it (nothing was changed).").format(path=target)))
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_env_example(), encoding="utf-8")
        target.chmod(0o600)  # it will hold an API key
    except OSError as exc:
        reason = exc.strerror or str(exc)
        console.print(
            "[red]" + escape(_("Cannot write {path}: {reason}").format(path=target, reason=reason)) + "[/]"
        )
        raise typer.Exit(1) from None
    console.print(
        escape(
            _(
                "Wrote {path}. Set MODEL_NAME and OPENAI_API_KEY there (and OPENAI_BASE_URL for any "
                "provider but OpenAI); it applies in every folder, and a folder's own .env overrides it."
            ).format(path=target)
        )
    )
