"""The command line itself: -h and --version everywhere, flags shown as flags, /help as written."""

from __future__ import annotations

import io
import re
from importlib.metadata import version

import pytest
from rich.console import Console
from typer.testing import CliRunner

from generalAgent.cli.app import app
from generalAgent.cli.chat import help_text

runner = CliRunner()


@pytest.mark.parametrize(
    "args", [["-h"], ["--help"], ["search", "-h"], ["kb", "search", "-h"], ["config", "-h"]]
)
def test_help_is_there_with_h_and_shows_flags_without_a_type(args: list[str]) -> None:
    result = runner.invoke(app, args, env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert "<bool>" not in result.output
    help_line = next(line for line in result.output.splitlines() if "--help" in line)
    assert re.search(r"--help\s+-h\s+Show this message", help_line)


def test_version_prints_the_installed_version() -> None:
    for flag in ("--version", "-V"):
        result = runner.invoke(app, [flag])
        assert result.exit_code == 0 and result.output.strip() == f"generalagent {version('generalAgent')}"


def test_chat_help_shows_one_backslash_for_a_continued_line() -> None:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(help_text())
    assert "a trailing \\ adds a line" in out.getvalue()
    assert "\\\\" not in out.getvalue()
