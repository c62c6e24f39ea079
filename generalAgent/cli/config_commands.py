"""`generalagent config`: where settings come from, and a user-level .env to start from.

generalagent config          the .env files in effect, the data folder, and the user-level path
generalagent config show     every setting that is not at its default, and where it came from
generalagent config init     write the user-level .env from the template (never overwrites)
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel, SecretStr
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from generalAgent.cli.settings_errors import settings_error_line
from generalAgent.cli.subcommands import EXIT_USAGE, fail
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.config.errors import SettingProblem
from generalAgent.config.reference import render_env_example
from generalAgent.config.settings import Settings, SettingsError, load_settings
from generalAgent.config.sources import ENV_FILE_NAME, ConfigFiles, SettingSource, user_config_dir
from generalAgent.display import public_url
from generalAgent.i18n import N_, _

config_app = typer.Typer(help=_("Where settings come from; a user-level .env for every folder."))


# Where a setting came from (config/sources.py: SourceKind), as the user reads it.
SOURCE_KINDS = {
    "environment": N_("environment"),
    "folder file": N_("folder file"),
    "user file": N_("user file"),
    "given": N_("given"),
    "default": N_("default"),
}


def describe_source(source: SettingSource) -> str:
    """Where one setting came from, in the UI language: `user file /path/.env`."""
    kind = _(SOURCE_KINDS[source.kind])
    return f"{kind} {source.path}" if source.path is not None else kind


def describe_files(files: ConfigFiles) -> str:
    """Which .env files were read, for `doctor`, `config` and the first-run message."""
    if not files.in_order:
        read = _("no .env in this folder and no user-level {path}").format(
            path=user_config_dir() / ENV_FILE_NAME
        )
    else:
        read = _("{files} (first wins)").format(
            files=" + ".join(str(path) for path in reversed(files.in_order))
        )
    if ENV_FILE_NAME in files.trust.ignored:
        read += _("; this folder's {name} is not read (the folder is not trusted)").format(name=ENV_FILE_NAME)
    return read


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
    console.print(escape(_("settings from: environment + {files}").format(files=describe_files(files))))
    console.print(escape(_("user-level file: {path}").format(path=user_config_dir() / ENV_FILE_NAME)))
    settings, problems = settings_and_problems()
    console.print(escape(_("data folder: {path}").format(path=settings.paths.data_dir.resolve())))
    console.print(escape(describe_folder_trust(settings)))
    report_problems(console, problems)


@config_app.command("show", help=_("Every setting that is not at its default, and where it came from."))
def show_settings(
    every: bool = typer.Option(False, "--all", help=_("Also the settings left at their default.")),
) -> None:
    """Every setting that is not at its default (all with --all), its value and its source."""
    console = terminal_console(highlight=False)
    settings, problems = settings_and_problems()
    table = Table(box=None, header_style="bold")
    # The name is what the user looks for: never cut or wrapped; a long value or path wraps.
    table.add_column(_("setting"), no_wrap=True)
    table.add_column(_("value"), overflow="fold")
    table.add_column(_("from"), overflow="fold")
    for variable, value, source in setting_rows(settings):
        if variable in problems:
            table.add_row(
                Text(variable), Text(_("invalid (see below)"), style="red"), Text(describe_source(source))
            )
        elif every or source.kind != "default":
            table.add_row(Text(variable), Text(value), Text(describe_source(source)))
    console.print(table)
    console.print(escape(describe_folder_trust(settings)))
    report_problems(console, problems)


def settings_and_problems() -> tuple[Settings, dict[str, SettingProblem]]:
    """The settings with every invalid one at its default, and a line for each: the
    commands that show the configuration are the ones a user runs to find what is wrong."""
    problems: dict[str, SettingProblem] = {}
    try:
        return load_settings(problems=problems), problems
    except SettingsError as exc:  # not one variable's (a rule across several)
        fail(settings_error_line(exc), EXIT_USAGE)


def report_problems(console: Console, problems: dict[str, SettingProblem]) -> None:
    """Each invalid setting in red, in the UI language, then exit 2 as any other command does on them."""
    for problem in problems.values():
        line = settings_error_line(SettingsError(problem.line(), problem))
        console.print("[red]" + escape(line) + "[/]")
    if problems:
        console.print(escape(_("Everything else above holds; an invalid setting stops every other command.")))
        raise typer.Exit(EXIT_USAGE)


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
        target.write_text(render_env_example(user_level=True), encoding="utf-8")
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
                "provider but OpenAI); it applies in every folder, and the .env of a folder you trust overrides it."
            ).format(path=target)
        )
    )


def setting_rows(settings: Settings) -> list[tuple[str, str, SettingSource]]:
    """(VARIABLE, value as it may be shown, source) for every setting, by group."""
    rows = []
    for group_field in fields(settings):
        group = getattr(settings, group_field.name)
        if not isinstance(group, BaseModel):
            continue
        for name in type(group).model_fields:
            variable = name.upper()
            rows.append((variable, shown_value(getattr(group, name)), settings.source_of(variable)))
    return rows


def shown_value(value: Any) -> str:
    """A setting's value without its secrets: a key shows only its length, a URL no password."""
    if value is None:
        return ""
    if isinstance(value, SecretStr):
        return _("set ({count} characters)").format(count=len(value.get_secret_value()))
    if isinstance(value, str) and "://" in value:
        return public_url(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def describe_folder_trust(settings: Settings) -> str:
    """One line: whether this folder's configuration is used (config/trust.py)."""
    return _("this folder: {state}").format(state=folder_trust_state(settings))


def folder_trust_state(settings: Settings) -> str:
    """Whether the folder is trusted and what of it is used or ignored."""
    trust = settings.sources.trust
    folder = trust.folder or Path.cwd()
    if not trust.found:
        return _("{folder} carries no project configuration").format(folder=folder)
    names = ", ".join(trust.found)
    if trust.applies:
        return _("{folder} is trusted (uses its {names})").format(folder=folder, names=names)
    return _("{folder} is not trusted (ignores its {names}; generalagent trust)").format(
        folder=folder, names=names
    )
