"""End-to-end fixtures: the real `generalagent` process against the local model server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.support.environment import decline_if_plain
from tests.support.langgraph_server import langgraph_url, model_server  # noqa: F401 - fixtures (test_langgraph_server.py)
from tests.support.openai_server import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The folder the CLI runs in (no .env unless a test writes one)."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def cli_env(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> dict[str, str]:
    # The autouse cleanup (tests/conftest.py) has already removed every setting from the
    # shell's environment and pointed the user-level config at an empty folder.
    env = dict(os.environ)
    env.update(
        MODEL_NAME="test-model",
        OPENAI_API_KEY="sk-test-SECRET-0123456789",
        OPENAI_BASE_URL=openai_server.base_url,
        MODEL_MAX_RETRIES="0",
        MODEL_TIMEOUT="10",
        DATA_DIR=str(tmp_path / "data"),
        PROMPT_TOOLKIT_NO_CPR="1",
        TERM="xterm-256color",
        COLUMNS="120",
        NO_COLOR="1",
    )
    return env


def run_cli(
    args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """The CLI as a script runs it; without `stdin`, stdin is /dev/null (nothing piped)."""
    return subprocess.run(
        [sys.executable, "-m", "generalAgent", *args],
        env=env,
        cwd=cwd,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def spawn_chat(cli_env: dict[str, str], workdir: Path) -> Iterator:
    children: list[pexpect.spawn] = []

    def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
        # A plain workdir is one the user already declined, so the chat opens at its prompt;
        # a test that writes configuration into it first (or trusts it) meets the question.
        decline_if_plain(workdir)
        child = pexpect.spawn(
            sys.executable,
            ["-m", "generalAgent", *args],
            env=env or cli_env,
            cwd=str(workdir),
            encoding="utf-8",
            # Every expect waits for its text; the minute is for the agent's first load on a
            # machine as busy as CI's (three workers on two cores), never a delay in itself.
            timeout=60,
            dimensions=(50, 120),
        )
        children.append(child)
        return child

    yield spawn
    for child in children:
        if child.isalive():
            child.terminate(force=True)
