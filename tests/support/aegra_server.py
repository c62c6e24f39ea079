"""Replicas of the served deployment on Aegra (an open server for LangGraph graphs, the
`aegra` extra): each its own process and DATA_DIR, all on one PostgreSQL database (threads,
runs, checkpoints), one search store and one shared workspaces folder, as a team runs them
behind a load balancer (docs/deployment.md).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.support.langgraph_server import ROOT, free_port, running_server, served_environment
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
    env = served_environment(
        model_server,
        workdir,
        AEGRA_CONFIG=str(ROOT / "aegra.json"),
        DATABASE_URL=database_url,
        HOST="127.0.0.1",
        PORT=str(port),
        MALLOC_ARENA_MAX="2",
    )
    env.update(extra_env)
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "aegra_api.main"]
    up = running_server(
        "aegra", command, workdir, env, f"{url}/health", lambda status: status < 500, STARTUP_SECONDS, 0.5
    )
    with up as process:
        if pids is not None:
            pids[url] = process.pid
        yield url


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
