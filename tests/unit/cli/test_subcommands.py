"""What the sub-commands share (cli/subcommands.py, cli/progress_bar.py): a setting that
cannot be used stops each of them with its one line and exit 2, as the README's exit codes
say; their progress bars draw what they are at, done of total and the time so far."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from generalAgent.cli.app import app, register_subcommands
from generalAgent.cli.progress_bar import progress_bar
from generalAgent.cli.subcommands import EXIT_USAGE

runner = CliRunner()
register_subcommands()  # as `generalagent` does when the command line names one


@pytest.mark.parametrize(
    "args",
    [
        ["index", "--stats"],
        ["search", "--all", "budget"],
        ["kb", "list"],
        ["mcp", "list"],
        ["mcp", "add", "notes", "--", "python", "notes.py"],
        ["mcp", "remove", "notes"],
        ["models", "list"],
        ["models", "pull", "potion-base-8M"],
        ["sessions"],
        ["config", "show"],
        ["sessions", "delete", "--older-than", "30", "--yes"],
    ],
    ids=" ".join,
)
def test_a_bad_setting_stops_every_subcommand_with_exit_2(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(
        app, args, env={"MAX_LOOPS": "many", "DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}
    )
    assert result.exit_code == EXIT_USAGE == 2, result.output
    assert "Invalid setting MAX_LOOPS='many'" in result.output
    assert not (tmp_path / "mcp.json").exists() and not (tmp_path / "data").exists()  # nothing done


def test_the_progress_bar_shows_the_task_its_count_and_rate() -> None:
    console = Console(record=True, width=100, color_system=None)
    bar = progress_bar(console, rate=True)
    task = bar.add_task("report.pdf", total=40, rate="")
    bar.update(task, completed=10, rate="12.5 pages/s, OCR")
    console.print(bar.get_renderable())
    shown = console.export_text()
    assert "report.pdf" in shown and "10/40" in shown and "12.5 pages/s, OCR" in shown
    assert "0:00:0" in shown  # the time so far
    assert bar.live.transient  # gone once the work is: the lines printed meanwhile stay


def test_without_a_rate_the_bar_needs_no_rate_field() -> None:
    console = Console(record=True, width=100, color_system=None)
    bar = progress_bar(console)
    bar.add_task("docs", total=None)  # a folder whose size is not known yet
    console.print(bar.get_renderable())
    assert "docs" in console.export_text()
