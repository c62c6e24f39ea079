"""Fixtures for the skill tests: a session-like workspace and a runner for skill scripts.

The runner does what the agent's run_bash_command does: `python skills/<skill>/scripts/<x>.py`
(a path relative to the workspace) with the workspace as the current directory, where `skills/`
is the skills folder that ships in the package.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from generalAgent.config.paths import builtin_path

SKILLS_DIR = builtin_path("skills")

RunScript = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    for name in ("uploads", "outputs", "temp"):
        (root / name).mkdir(parents=True)
    (root / "skills").symlink_to(SKILLS_DIR, target_is_directory=True)
    return root


@pytest.fixture
def run_script(workspace: Path) -> RunScript:
    def run(script: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        # A developer's own PDF_PASSWORD must not change what a test sees.
        environment = {k: v for k, v in os.environ.items() if k != "PDF_PASSWORD"}
        environment.update(env or {})
        return subprocess.run(
            [sys.executable, script, *args],
            cwd=workspace,
            env=environment,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
        )

    return run
