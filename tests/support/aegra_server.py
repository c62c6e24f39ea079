"""Replicas of the served deployment on Aegra (an open server for LangGraph graphs, the
`aegra` extra): each its own process and DATA_DIR, all on one PostgreSQL database (threads,
runs, checkpoints), one search store and one shared workspaces folder, as a team runs them
behind a load balancer (docs/deployment.md).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from tests.support.environment import without_agent_variables
from tests.support.langgraph_server import KEYS, ROOT, free_port
from tests.support.openai_server import ScriptedOpenAIServer

STARTUP_SECONDS = 120


def needs_aegra() -> None:
    """Skip (fail in CI, where the dev extra installs it) without the `aegra` extra."""
    try:
        import aegra_api  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("aegra-api must be installed in CI (the dev extra includes the aegra extra)")
        pytest.skip("the aegra extra is not installed")


@contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """The URL of a new database on `server` (Aegra's tables live in its public schema),
    dropped afterwards."""
    import psycopg

    name = f"aegra_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = server.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def aegra_replica(
    model_server: ScriptedOpenAIServer,
    workdir: Path,
    database_url: str,
    extra_env: dict[str, str],
    pids: dict[str, int] | None = None,
) -> Iterator[str]:
    """One Aegra process serving the repository's graph (aegra.json) from `workdir`; its URL
    (and its process group's id in `pids[url]`, for a test that kills it)."""
    port = free_port()
    env = {
        k: v
        for k, v in without_agent_variables(os.environ).items()
        if not k.startswith(("LANGSMITH", "LANGCHAIN"))
    }
    env.update(
        AEGRA_CONFIG=str(ROOT / "aegra.json"),
        DATABASE_URL=database_url,
        HOST="127.0.0.1",
        PORT=str(port),
        GENERALAGENT_CONFIG_DIR=str(workdir / "user-config"),
        MODEL_NAME="test-model",
        OPENAI_API_KEY="sk-test-SECRET-0123456789",
        OPENAI_BASE_URL=model_server.base_url,
        MODEL_MAX_RETRIES="0",
        MODEL_TIMEOUT="20",
        MAX_LOOPS="4",
        DATA_DIR=str(workdir / "data"),
        SERVER_API_KEYS=",".join(f"{user}:{key}" for user, key in KEYS.items()),
        MALLOC_ARENA_MAX="2",
    )
    env.update(extra_env)
    workdir.mkdir(parents=True, exist_ok=True)
    log = (workdir / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "aegra_api.main"],
        cwd=workdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    if pids is not None:
        pids[url] = process.pid
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"aegra exited ({process.returncode}):\n{(workdir / 'server.log').read_text()[-3000:]}"
                )
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"aegra did not start in {STARTUP_SECONDS} s")
            time.sleep(0.5)
        yield url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


@contextmanager
def aegra_replicas(
    model_server: ScriptedOpenAIServer,
    root: Path,
    database_url: str,
    extra_env: dict[str, str],
    count: int = 2,
) -> Iterator[list[str]]:
    """`count` replicas on one database, started one after the other (the first migrates)."""
    with ExitStack() as stack:
        yield [
            stack.enter_context(aegra_replica(model_server, root / f"replica-{n}", database_url, extra_env))
            for n in range(count)
        ]
