"""`config` and `config show` with an invalid setting: the commands a user runs to find it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli

pytestmark = pytest.mark.e2e


def test_config_show_runs_and_names_the_invalid_setting(workdir: Path, cli_env: dict[str, str]) -> None:
    """It refused to run ("Invalid setting ..." and nothing else): the other settings and
    where they came from were out of reach exactly when something was wrong."""
    env = {**cli_env, "MAX_MESSAGE_HISTORY": "5", "MAX_LOOPS": "12"}
    shown = run_cli(["config", "show"], env, workdir)
    assert shown.returncode == 2, shown.stderr
    out = " ".join(shown.stdout.split())
    assert "MAX_LOOPS 12 environment" in out  # the valid ones, as ever
    assert "MAX_MESSAGE_HISTORY invalid (see below) environment" in out
    assert "Invalid setting MAX_MESSAGE_HISTORY='5'" in out and "10..100" in out
    summary = run_cli(["config"], env, workdir)
    assert summary.returncode == 2
    assert "data folder:" in summary.stdout and "Invalid setting MAX_MESSAGE_HISTORY='5'" in " ".join(
        summary.stdout.split()
    )
    other = run_cli(["sessions"], env, workdir)  # any other command still stops at it
    assert other.returncode == 2 and "Invalid setting MAX_MESSAGE_HISTORY" in other.stderr
