"""Click's and Typer's own words (Usage, Options, their errors) in the UI language.

Click and Typer mark their messages with the standard library's `gettext` under its
default domain, which reads the process locale and no catalog of ours. Each of their
modules binds that function as `_` when it loads, so we rebind `_` in those modules to the
terminal's translator, and set again the texts Typer's rich help computes once at import
(panel titles, `[default: …]`). Typer's own copy of Click has no gettext at all: its three
English phrases a user meets are wrapped (`_translate_typers_click`). Their English messages are listed here, so `make i18n`
carries them into our catalog and the catalog test holds them to a translation.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from generalAgent.cli.i18n import N_, _

# The messages of Click and Typer a user of this CLI meets: help pages and usage errors.
CLICK_MESSAGES = (
    N_("Usage:"),
    N_("Options"),
    N_("Arguments"),
    N_("Commands"),
    N_("Error"),
    N_("Aborted."),
    N_("Aborted!"),
    N_("Show this message and exit."),
    N_("Show the version and exit."),
    N_("[default: {}]"),
    N_("[required]"),
    N_("Try [blue]'{command_path} {help_option}'[/] for help."),
    N_("Try '{command} {option}' for help."),
    N_("Error: {message}"),
    N_("Missing command."),
    N_("Missing argument"),
    N_("Missing option"),
    N_("Missing parameter"),
    N_("Invalid value: {message}"),
    N_("Invalid value for {param_hint}: {message}"),
    N_("No such option: {name}"),
    N_("No such option {name!r}."),
    N_("No such command {name!r}."),
    N_("Option {name!r} does not take a value."),
    N_("{value!r} is not a valid {number_type}."),
    N_("{value} is not in the range {range}."),
    N_("{name} {filename!r} does not exist."),
)
# Typer carries its own copy of Click (typer._click); the installed click is patched too
# for whatever uses it directly.
CLICK_MODULES = tuple(
    f"{package}.{module}"
    for package in ("typer._click", "click")
    for module in ("core", "exceptions", "formatting", "parser", "types", "decorators")
)
# Typer's rich help: module constants made with `_()` when typer.rich_utils loads.
RICH_HELP_TEXTS = {
    "ARGUMENTS_PANEL_TITLE": "Arguments",
    "OPTIONS_PANEL_TITLE": "Options",
    "COMMANDS_PANEL_TITLE": "Commands",
    "ERRORS_PANEL_TITLE": "Error",
    "ABORTED_TEXT": "Aborted.",
    "DEFAULT_STRING": "[default: {}]",
    "REQUIRED_LONG_STRING": "[required]",
    "RICH_HELP": "Try [blue]'{command_path} {help_option}'[/] for help.",
}


def speak_help_in_ui_language(language: str) -> None:
    """Click's and Typer's messages in `language` (the one `use_language` chose) from now on.

    English needs nothing; for another language Typer's rich help module is loaded now
    (it is small, and rich is loaded by the terminal anyway) so its panel titles can be set."""
    if language == "en":
        return
    for name in (*CLICK_MODULES, "typer.core", "typer.rich_utils"):
        try:
            module = sys.modules.get(name) or importlib.import_module(name)
        except ImportError:  # another Typer or Click release arranged differently
            continue
        if hasattr(module, "_"):
            module._ = _  # type: ignore[attr-defined]  # their `from gettext import gettext as _`
    rich_utils = sys.modules["typer.rich_utils"]
    for constant, message in RICH_HELP_TEXTS.items():
        setattr(rich_utils, constant, _(message))
    _translate_typers_click()


def _translate_typers_click() -> None:
    """Typer's copy of Click writes "Usage:", the --help line and "Missing argument" as
    plain English, without gettext: the three places are wrapped to say them through `_`."""
    try:
        from typer._click import core, exceptions, formatting
    except ImportError:  # a Typer release without its own Click: the gettext path covers it
        return
    if getattr(formatting.HelpFormatter.write_usage, "translated", False):
        return
    write_usage = formatting.HelpFormatter.write_usage
    help_option = core.Command.get_help_option
    missing_message = exceptions.MissingParameter.format_message

    def translated_usage(self: Any, prog: str, args: str = "", prefix: str | None = None) -> None:
        write_usage(self, prog, args, prefix if prefix is not None else _("Usage:") + " ")

    def translated_help_option(self: Any, ctx: Any) -> Any:
        option = help_option(self, ctx)
        if option is not None and option.help:
            option.help = _(option.help)
        return option

    def translated_missing(self: Any) -> str:
        text = missing_message(self)
        for english in ("Missing argument", "Missing option", "Missing parameter"):
            text = text.replace(english, _(english))
        return text

    translated_usage.translated = True  # type: ignore[attr-defined]
    formatting.HelpFormatter.write_usage = translated_usage  # type: ignore[method-assign]
    core.Command.get_help_option = translated_help_option  # type: ignore[method-assign]
    exceptions.MissingParameter.format_message = translated_missing  # type: ignore[method-assign]
