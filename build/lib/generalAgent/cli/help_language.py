"""Click's and Typer's own words (Usage, Options, their errors) in the UI language.

Click and Typer mark their messages with the standard library's `gettext` under its
default domain, which reads the process locale and no catalog of ours. Each of their
modules binds that function as `_` when it loads, so we rebind `_` in those modules to the
terminal's translator, and set again the texts Typer's rich help computes once at import
(panel titles, `[default: …]`). Typer's own copy of Click (typer._click, Typer 0.25 and
later) has no gettext at all: it writes "Usage:", the --help line and its usage errors as
plain English f-strings. Those are wrapped (`_translate_typers_click`): an error's English
text is matched against the shapes of TYPERS_CLICK_ERRORS and said again through `_`
(`said_in_ui_language`). Their English messages are listed here, so `make i18n` carries
them into our catalog and the catalog test holds them to a translation.
"""

from __future__ import annotations

import importlib
import re
import sys
from functools import cache, partial
from typing import Any

from generalAgent.i18n import N_, _

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
# Typer's copy of Click words its usage errors in these shapes (typer/_click: core.py,
# parser.py, types.py, exceptions.py; typer/_types.py, models.py), most of them as Click's
# gettext messages above do. Matched whole, first match wins, so the longer shapes come first.
TYPERS_CLICK_ERRORS = (
    N_("{message} (Possible options: {possibilities})"),
    N_("No such option: {name}"),
    N_("Invalid value for {param_hint}: {message}"),
    N_("Invalid value: {message}"),
    N_("Got unexpected extra argument(s) ({args})"),
    N_("Option {name!r} does not take a value."),
    N_("Option {name!r} requires an argument."),
    N_("Option {name!r} requires {nargs} arguments."),
    N_("Argument {name!r} takes {nargs} values."),
    N_("{value!r} is not a valid boolean. Recognized values: {states}"),
    N_("{value!r} is not one of {choices}."),
    N_("{value!r} is not a valid {number_type}."),
    N_("{value} is not in the range {range}."),
    N_("{name} {filename!r} does not exist."),
)
# Fields that are themselves a message of that list (an invalid value's reason) or a word
# of the catalog (the type a value should have: Typer's copy of Click names it "int" ...).
NESTED_FIELDS = frozenset({"message"})
WORD_FIELDS = frozenset({"number_type"})
TYPE_NAMES = (N_("int"), N_("int range"), N_("float"), N_("float range"))
# MissingParameter writes "Missing argument 'NAME'." with what the type adds after it (the
# three are marked in CLICK_MESSAGES).
MISSING = ("Missing argument", "Missing option", "Missing parameter")
_FIELD = re.compile(r"\{(\w+)(?:![rsa])?\}")
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

    def translated_usage(self: Any, prog: str, args: str = "", prefix: str | None = None) -> None:
        write_usage(self, prog, args, prefix if prefix is not None else _("Usage:") + " ")

    def translated_help_option(self: Any, ctx: Any) -> Any:
        option = help_option(self, ctx)
        if option is not None and option.help:
            option.help = _(option.help)
        return option

    translated_usage.translated = True  # type: ignore[attr-defined]
    formatting.HelpFormatter.write_usage = translated_usage  # type: ignore[method-assign]
    core.Command.get_help_option = translated_help_option  # type: ignore[method-assign]
    # ClickException (its message comes from Typer's base class) and every subclass that
    # words its own: the rest inherit one of these. Whether the terminal shows the error in
    # Typer's rich panel or as Click's plain "Error: ..." line, it asks format_message.
    base = exceptions.ClickException
    for error in vars(exceptions).values():
        if not (isinstance(error, type) and issubclass(error, base)):
            continue
        if error is base or "format_message" in vars(error):
            error.format_message = _said_through_catalog(error.format_message)  # type: ignore[method-assign]


def _said_through_catalog(format_message: Any) -> Any:
    def translated(self: Any) -> str:
        return said_in_ui_language(format_message(self))

    return translated


def said_in_ui_language(text: str) -> str:
    """An English usage error of Typer's copy of Click in the UI language: the first shape
    of TYPERS_CLICK_ERRORS that matches it whole, filled with the same values (a nested
    message translated too); the text as it is when none matches."""
    for english, pattern in _error_patterns():
        match = pattern.fullmatch(text)
        if match is None:
            continue
        values = {
            name: said_in_ui_language(value)
            if name in NESTED_FIELDS
            else _(value)
            if name in WORD_FIELDS
            else value
            for name, value in match.groupdict().items()
        }
        translated = _(english)
        if set(_FIELD.findall(translated)) != set(values):
            return text  # a translation that drops or renames a field: say it in English
        # `{name!r}` was written with its quotes already: the value goes in as it was matched.
        return _FIELD.sub(partial(_value_of, values), translated)
    for english in MISSING:
        if text.startswith(english):
            return _(english) + text[len(english) :]
    return text


def _value_of(values: dict[str, str], field: re.Match[str]) -> str:
    return values[field.group(1)]


@cache
def _error_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each English shape with the pattern that matches a message written in it."""
    patterns = []
    for english in TYPERS_CLICK_ERRORS:
        parts, at = [], 0
        for field in _FIELD.finditer(english):
            parts += [re.escape(english[at : field.start()]), f"(?P<{field.group(1)}>.+?)"]
            at = field.end()
        parts.append(re.escape(english[at:]))
        patterns.append((english, re.compile("".join(parts), re.DOTALL)))
    return tuple(patterns)
