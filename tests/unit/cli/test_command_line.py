"""The command line itself: -h and --version everywhere, flags shown as flags, /help as written."""

from __future__ import annotations

import io
import re
from importlib.metadata import version

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from generalAgent.cli.app import SUBCOMMANDS, app, command_line, may_name_a_subcommand, register_subcommands
from generalAgent.cli.builtin_commands import help_text
from generalAgent.cli.help_page import run
from generalAgent.cli.invocation import first_message_argv, split_tool_names
from generalAgent.config.install import DISTRIBUTION

runner = CliRunner()
register_subcommands()  # as `generalagent` does when the command line may name one


def test_the_words_that_load_the_subcommands_are_their_names() -> None:
    """main() imports the sub-commands' modules only for these words (or help): a command
    added without its word here would never be found."""
    command = typer.main.get_command(app)
    defined_here = {"doctor", "acp"}
    assert set(command.commands) - defined_here == SUBCOMMANDS  # type: ignore[attr-defined]
    assert may_name_a_subcommand(["index", "docs/"]) and may_name_a_subcommand(["-h"])
    assert not may_name_a_subcommand(["-p", "search the web for the index"])
    assert not may_name_a_subcommand(["--model", "m", "总结一下"])


@pytest.mark.parametrize(
    "args", [["-h"], ["--help"], ["search", "-h"], ["kb", "search", "-h"], ["config", "-h"]]
)
def test_help_is_there_with_h_and_shows_flags_without_a_type(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    register_subcommands()
    assert run(command_line(), args, "generalagent") == 0
    output = capsys.readouterr().out
    assert "Usage:" in output
    assert "<bool>" not in output
    help_line = next(line for line in output.splitlines() if "--help" in line)
    assert re.search(r"--help\s+-h\s+Show this message", help_line)


def test_version_prints_the_installed_version() -> None:
    for flag in ("--version", "-V"):
        result = runner.invoke(app, [flag])
        assert result.exit_code == 0 and result.output.strip() == f"generalagent {version(DISTRIBUTION)}"


def test_chat_help_shows_one_backslash_for_a_continued_line() -> None:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(help_text())
    assert "a trailing \\ adds a line" in out.getvalue()
    assert "\\\\" not in out.getvalue()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["你好"], ["--message", "你好"]),
        (["--model", "m", "总结一下"], ["--model", "m", "--message", "总结一下"]),
        (["--resume", "last", "go on"], ["--resume", "last", "--message", "go on"]),
        (["-c", "go on"], ["-c", "--message", "go on"]),
        (["-p", "question"], ["-p", "question"]),  # -p's value, not a first message
        (["index", "docs/"], ["index", "docs/"]),  # a sub-command stays one
        (["kb", "search", "x"], ["kb", "search", "x"]),
        (["--", "-v?"], ["--message", "-v?"]),
        ([], []),
    ],
)
def test_a_first_word_that_is_no_command_is_the_first_message(argv: list[str], expected: list[str]) -> None:
    assert first_message_argv(argv, typer.main.get_command(app)) == expected


def test_allowed_tools_may_be_repeated_or_comma_separated() -> None:
    assert split_tool_names(["run_bash_command,fetch_web", "now fetch_web"]) == (
        "run_bash_command",
        "fetch_web",
        "now",
    )


def test_the_help_names_the_scripting_options(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert run(command_line(), ["-h"], "generalagent") == 0
    output = capsys.readouterr().out
    for option in (
        "--continue",
        "--model",
        "--max-turns",
        "--allowed-tools",
        "--approve",
        "--output-format",
        "--save",
    ):
        assert option in output
    assert "--message" not in output  # hidden: the first word is how it is given
