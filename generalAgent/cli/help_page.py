"""The command line's help pages and usage errors, drawn by us in the UI language.

Typer words the frame of its help ("Usage:", "Options", "[default: …]") and its usage
errors in English without a catalog, and from 0.29 prints a type after every flag
(`--dry <bool>`). Rather than patch its modules, this layer uses only what any Click
command offers in public: `format_help(ctx, formatter)` is given to each command of the
tree `typer.main.get_command` built (`speak_in_ui_language`), and draws the page from the
command's parameters, usage pieces and sub-commands; `run` calls the command with
`standalone_mode=False` and says a usage error itself (`typer.TyperException`: its
`format_message()` and context), through the same catalog shapes Click's words have.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache, partial
from types import MethodType
from typing import Any

import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from generalAgent.i18n import N_, _

# Words of the frame and Click's help option, in the catalog.
FRAME = (N_("Usage:"), N_("Options"), N_("Arguments"), N_("Commands"), N_("Aborted."))
# The error line, "Error: …" ("错误：…": the colon is the language's own).
ERROR_LINE = N_("Error: {message}")
DEFAULT = N_("[default: {}]")
REQUIRED = N_("[required]")
HELP_OPTION = N_("Show this message and exit.")
TRY_HELP = N_("Try '{command} {option}' for help.")
# Click's and Typer's usage errors, as their English reads; matched whole, first match wins,
# so the longer shapes come first. A release that words one differently fails
# tests/unit/cli/test_help_page.py, not the user: the English is then shown as it is.
USAGE_ERRORS = (
    N_("{message} (Possible options: {possibilities})"),
    N_("No such option: {name}"),
    N_("No such command {name!r}."),
    N_("Invalid value for {param_hint}: {message}"),
    N_("Invalid value: {message}"),
    N_("Got unexpected extra argument(s) ({args})"),
    N_("Option {name!r} does not take a value."),
    N_("Option {name!r} requires an argument."),
    N_("Option {name!r} requires {nargs} arguments."),
    N_("Argument {name!r} takes {nargs} values."),
    # Typer 0.29 checks values with pydantic: its words, with the value left out.
    N_("Input should be a valid integer, unable to parse string as an integer"),
    N_("Input should be a valid number, unable to parse string as a number"),
    N_("Input should be less than or equal to {limit}"),
    N_("Input should be greater than or equal to {limit}"),
    N_("Input should be less than {limit}"),
    N_("Input should be greater than {limit}"),
    N_("Value error, {message}"),
    N_("{value!r} is not a valid boolean. Recognized values: {states}"),
    N_("{value!r} is not one of {choices}."),
    N_("{value!r} is not a valid {number_type}."),
    N_("{value} is not in the range {range}."),
    # A path argument Click checked (Typer asks it to check that an existing one is readable).
    N_("{path_kind} {filename!r} does not exist."),
    N_("{path_kind} {filename!r} is not readable."),
    N_("{path_kind} {filename!r} is not writable."),
    N_("{path_kind} {filename!r} is not executable."),
    N_("{path_kind} {filename!r} is a directory."),
    N_("{path_kind} {filename!r} is a file."),
    N_("Missing command."),
    # A missing one as a whole sentence (its full stop is the language's own); other
    # shapes ("Missing option '--x'. Choose from: …") keep their tail (MISSING, below).
    N_("Missing argument {name}."),
    N_("Missing option {name}."),
    N_("Missing parameter {name}."),
)
NESTED_FIELDS = frozenset({"message"})  # a field that is itself a message of the list
WORD_FIELDS = frozenset({"number_type", "path_kind"})  # a field that is a word of the catalog
TYPE_NAMES = (N_("int"), N_("int range"), N_("float"), N_("float range"), N_("integer"))
# The kind of path a check names: Click's title-cased words, and Typer's own (from 0.29 it
# checks a pathlib.Path argument itself, in lower case, "dir" for a folder).
PATH_KINDS = (N_("File"), N_("Directory"), N_("Path"), N_("file"), N_("dir"), N_("path"))
MISSING = (N_("Missing argument"), N_("Missing option"), N_("Missing parameter"))
_FIELD = re.compile(r"\{(\w+)(?:![rsa])?\}")
USAGE_ERROR_EXIT = 2


def speak_in_ui_language(command: Any) -> Any:
    """`command` and every sub-command draw their help with `draw_help`; returns `command`."""
    command.format_help = MethodType(draw_help, command)
    for sub in (getattr(command, "commands", None) or {}).values():
        speak_in_ui_language(sub)
    return command


def draw_help(command: Any, ctx: Any, formatter: Any = None) -> None:
    """The help page of `command`: usage, its help text, then panels of arguments, options
    and commands, every word of the frame through the catalog."""
    console = Console(highlight=False, soft_wrap=False)
    console.print(help_page(command, ctx))


def help_page(command: Any, ctx: Any) -> Group:
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    parts: list[Any] = [Padding(Text(_("Usage:") + " " + usage, style="bold"), (1, 1, 0, 1))]
    if command.help:
        # Through the catalog again: a help text made at import in another language (the
        # .env's UI_LANGUAGE is read later) is said in this one.
        parts.append(Padding(Text.from_markup(_(command.help.split("\f")[0].strip())), (1, 1, 0, 1)))
    params = [param for param in command.get_params(ctx) if not getattr(param, "hidden", False)]
    arguments = [param for param in params if param.param_type_name == "argument"]
    options = [param for param in params if param.param_type_name == "option"]
    if arguments:
        parts.append(_panel(_("Arguments"), [_argument_row(param) for param in arguments]))
    if options:
        parts.append(_panel(_("Options"), [_option_row(param, ctx) for param in options]))
    names = command.list_commands(ctx) if hasattr(command, "list_commands") else []
    rows = []
    for name in names:
        sub = command.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            summary = _(sub.short_help or (sub.help or "").split("\f")[0].strip()).split("\n\n")[0]
            rows.append([Text(name, style="bold cyan"), Text.from_markup(" ".join(summary.split()))])
    if rows:
        parts.append(_panel(_("Commands"), rows))
    return Group(*parts, Text(""))


def _panel(title: str, rows: Sequence[Sequence[Any]]) -> Panel:
    table = Table.grid(padding=(0, 2), expand=False)
    for _column in rows[0]:
        table.add_column()
    for row in rows:
        table.add_row(*row)
    return Panel(table, title=title, title_align="left", border_style="dim")


def _argument_row(param: Any) -> list[Any]:
    name = param.metavar or (param.name or "").upper()
    notes = [_(param.help)] if getattr(param, "help", None) else []
    if param.required:
        notes.append(_(REQUIRED))
    return [Text(name, style="bold cyan"), Text.from_markup(" ".join(notes))]


def _option_row(param: Any, ctx: Any) -> list[Any]:
    every = [*param.opts, *param.secondary_opts]
    long = ",".join(name for name in every if name.startswith("--"))
    short = ",".join(name for name in every if not name.startswith("--"))
    value = "" if param.is_flag or param.count else (param.metavar or _value_name(param))
    notes = [_(param.help)] if param.help else []
    default = param.default
    if (
        param.show_default
        and default not in (None, "", False, ())
        and not param.is_flag
        and not callable(default)
    ):
        shown = ", ".join(map(str, default)) if isinstance(default, list | tuple) else str(default)
        notes.append(escape(_(DEFAULT).format(shown)))
    if param.required:
        notes.append(escape(_(REQUIRED)))
    return [
        Text(long, style="bold cyan"),
        Text(short, style="bold green"),
        Text(value, style="yellow"),
        Text.from_markup(" ".join(notes)),
    ]


def _value_name(param: Any) -> str:
    """What the value of an option is called: its choices, else its type, as Click names them."""
    kind = getattr(param, "type", None)  # Click's; Typer 0.29's options have none
    choices = getattr(kind, "choices", None)
    if choices:
        return "[" + "|".join(str(getattr(choice, "value", choice)) for choice in choices) + "]"
    name = str(getattr(kind, "name", "text")).upper()
    return {"STR": "TEXT", "INT": "INTEGER", "INTEGER RANGE": "INTEGER RANGE"}.get(name, name)


def run(command: Any, args: list[str], prog_name: str, err: Console | None = None) -> int:
    """Run the command line; a usage error is said in the UI language, as Click would say it."""
    err = err or Console(stderr=True, highlight=False)
    try:
        result = command.main(args=args, prog_name=prog_name, standalone_mode=False)
    except typer.Abort:
        err.print(_("Aborted."))
        return 1
    except typer.Exit as exit_:
        return int(getattr(exit_, "exit_code", 0) or 0)
    except typer.TyperException as error:
        say_usage_error(error, err)
        return int(getattr(error, "exit_code", 1))
    return result if isinstance(result, int) else 0


def say_usage_error(error: Any, err: Console) -> None:
    """Click's three lines (usage, the help hint, the error) in the UI language."""
    ctx = getattr(error, "ctx", None)
    if ctx is not None:
        usage = " ".join([ctx.command_path, *ctx.command.collect_usage_pieces(ctx)])
        err.print(_("Usage:") + " " + escape(usage))
        names = ctx.help_option_names or ["--help"]
        err.print(escape(_(TRY_HELP).format(command=ctx.command_path, option=names[0])))
        err.print()
    message = error.format_message() if hasattr(error, "format_message") else str(error)
    head, _field, tail = _(ERROR_LINE).partition("{message}")
    err.print(
        "[bold red]"
        + escape(head.rstrip())
        + "[/]"
        + escape(head[len(head.rstrip()) :])
        + escape(said_in_ui_language(message))
        + escape(tail)
    )


def said_in_ui_language(text: str) -> str:
    """An English usage error in the UI language: the first shape of USAGE_ERRORS that
    matches it whole, filled with the same values (a nested message translated too); the
    text as it is when none matches."""
    for english, pattern in _error_patterns():
        match = pattern.fullmatch(text)
        if match is None:
            continue
        values = {name: _field_value(name, value) for name, value in match.groupdict().items()}
        translated = _(english)
        if set(_FIELD.findall(translated)) != set(values):
            return text  # a translation that drops or renames a field: say it in English
        # `{name!r}` was written with its quotes already: the value goes in as it was matched.
        return _FIELD.sub(partial(_value_of, values), translated)
    for english in MISSING:
        if text.startswith(english):
            return _(english) + text[len(english) :]
    return text


def _field_value(name: str, value: str) -> str:
    if name in NESTED_FIELDS:
        return said_in_ui_language(value)
    return _(value) if name in WORD_FIELDS else value


def _value_of(values: dict[str, str], field: re.Match[str]) -> str:
    return values[field.group(1)]


@cache
def _error_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each English shape with the pattern that matches a message written in it."""
    patterns = []
    for english in USAGE_ERRORS:
        parts, at = [], 0
        for field in _FIELD.finditer(english):
            parts += [re.escape(english[at : field.start()]), f"(?P<{field.group(1)}>.+?)"]
            at = field.end()
        parts.append(re.escape(english[at:]))
        patterns.append((english, re.compile("".join(parts), re.DOTALL)))
    return tuple(patterns)
