"""A LangGraph Server (`langgraph dev`) started for a test module, and SDK clients for it.

One in-memory server on a loopback port, with `langgraph.json` from the repository (its
custom auth included: two users with API keys) and the model pointed at the local
OpenAI-compatible test server.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client

from tests.support.environment import without_agent_variables
from tests.support.openai_server import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
GRAPH_ID = "generalAgent"
MAX_LOOPS = 4
STARTUP_SECONDS = 90
# The users of the served deployment (SERVER_API_KEYS) and their keys.
KEYS = {"alice": "key-alice-0123456789", "bob": "key-bob-9876543210"}


def client_of(url: str, user: str = "alice"):
    """An SDK client that proves it is `user` (the key goes in x-api-key)."""
    return get_sync_client(url=url, api_key=KEYS[user], timeout=60)


def sandbox_works() -> bool:
    from generalAgent.sandbox import find_sandbox

    return find_sandbox("auto").active


def needs_the_served_shell() -> None:
    """Skip (fail in CI) a test of the served shell where no sandbox works: a server offers
    the shell only with one (graph/served.py)."""
    if sandbox_works():
        return
    if os.environ.get("CI"):
        pytest.fail("bubblewrap must run in CI (.ci/run installs it): the served shell needs it")
    pytest.skip("bubblewrap cannot run here, and a served deployment offers the shell only in a sandbox")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(strict_history=True) as server:
        yield server


@pytest.fixture(scope="module")
def langgraph_url(
    model_server: ScriptedOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with langgraph_dev(model_server, tmp_path_factory.mktemp("langgraph-server")) as url:
        yield url


def served_environment(model_server: ScriptedOpenAIServer, workdir: Path, **settings: str) -> dict[str, str]:
    """The environment of a served deployment under test (`langgraph dev`, an Aegra replica):
    the shell's agent settings and tracing left out, the model at `model_server`, DATA_DIR
    and the user-level configuration inside `workdir`, the two users' keys; `settings` over it."""
    # A module-scoped server starts before the per-test environment cleanup: clean here.
    env = {
        k: v
        for k, v in without_agent_variables(os.environ).items()
        if not k.startswith(("LANGSMITH", "LANGCHAIN"))
    }
    env.update(
        GENERALAGENT_CONFIG_DIR=str(workdir / "user-config"),
        MODEL_NAME="test-model",
        OPENAI_API_KEY="sk-test-SECRET-0123456789",
        OPENAI_BASE_URL=model_server.base_url,
        MODEL_MAX_RETRIES="0",
        MODEL_TIMEOUT="20",
        MAX_LOOPS=str(MAX_LOOPS),
        DATA_DIR=str(workdir / "data"),
        SERVER_API_KEYS=",".join(f"{user}:{key}" for user, key in KEYS.items()),
    )
    env.update(settings)
    return env


@contextmanager
def running_server(
    name: str,
    command: list[str],
    workdir: Path,
    env: dict[str, str],
    probe: str,
    ready: Callable[[int], bool],
    startup_seconds: float,
    poll_seconds: float,
) -> Iterator[subprocess.Popen[bytes]]:
    """`command` started in `workdir` (its output in server.log there, its own process
    group), waited for until a GET of `probe` answers with a status `ready` accepts; the
    whole group stopped at the end of the block. A server that exits or does not get ready
    within `startup_seconds` fails the test with the end of its log."""
    workdir.mkdir(parents=True, exist_ok=True)
    log = (workdir / "server.log").open("w")
    process = subprocess.Popen(
        command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + startup_seconds
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"{name} exited ({process.returncode}):\n{(workdir / 'server.log').read_text()[-3000:]}"
                )
            try:
                if ready(httpx.get(probe, timeout=1).status_code):
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{name} did not start in {startup_seconds:g} s")
            time.sleep(poll_seconds)
        yield process
    finally:
        if process.poll() is None:  # a test may have killed it
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


@contextmanager
def langgraph_dev(
    model_server: ScriptedOpenAIServer,
    workdir: Path,
    extra_env: dict[str, str] | None = None,
    runs_at_once: int = 1,
) -> Iterator[str]:
    """`langgraph dev` serving the repository's graph from `workdir`, with `extra_env` in
    its environment, running up to `runs_at_once` runs at the same time (dev's own default
    is one: the others wait in its queue); its URL, the server stopped at the end of the block."""
    port = free_port()
    env = served_environment(model_server, workdir, LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false")
    if sandbox_works():
        # The deployment offers the shell (its users @mention it); it runs in the sandbox.
        env.update(SERVER_TOOLS="run_bash_command", SANDBOX="required")
    env.update(extra_env or {})
    command = [
        str(Path(sys.executable).parent / "langgraph"),
        "dev",
        "--config",
        str(ROOT / "langgraph.json"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",
        "--n-jobs-per-worker",
        str(runs_at_once),
    ]
    url = f"http://127.0.0.1:{port}"
    ok = running_server(
        "langgraph dev",
        command,
        workdir,
        env,
        f"{url}/ok",
        lambda status: status == 200,
        STARTUP_SECONDS,
        0.3,
    )
    with ok:
        yield url


def stored_messages(client, thread_id: str) -> list[dict]:
    return client.threads.get_state(thread_id)["values"]["messages"]
