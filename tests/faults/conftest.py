"""Fault-injection fixtures and the plugin that reports each fault case's result.

The CLI fixtures are the end-to-end ones (`workdir`, `cli_env`, `spawn_chat`); the model
server here is strict: like a real provider it refuses a request whose history has a tool
call without its answer, so such a bug shows up as a failed turn as well as in
`openai_server.invalid_history_requests`. `stored_messages` reads a session back from its
checkpoint, the way a resumed session would find it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from tests.e2e.conftest import cli_env, spawn_chat, workdir  # noqa: F401 - fixtures
from tests.faults.report import REPORT_ENV, FaultCase, render_report
from tests.support.history import stored_history_problems
from tests.support.langgraph_server import langgraph_url, model_server  # noqa: F401 - test_egress_faults.py
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.tools import root  # noqa: F401 - fixture (test_attack_faults.py)
from tests.support.web_site import site  # noqa: F401 - fixture (test_attack_faults.py)

ROOT = Path(__file__).resolve().parents[2]


# -- the report plugin ---------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fault(area, fault, outcome, found=''): a fault case of docs/reliability.md (tests/faults/report.py)",
    )
    config.stash[_CASES] = {}


_CASES = pytest.StashKey[dict[str, FaultCase]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    cases = config.stash[_CASES]
    for item in items:
        mark = item.get_closest_marker("fault")
        if mark is not None:
            cases[item.nodeid] = FaultCase(test=item.nodeid, **mark.kwargs)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """Under xdist the controller collects nothing: each worker sends the cases it collected."""
    cases = node.config.stash.setdefault(_CASES, {})
    for case in getattr(node, "workeroutput", {}).get("fault_cases", []):
        cases.setdefault(case["test"], FaultCase(**case))


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get(REPORT_ENV)
    cases = session.config.stash.get(_CASES, {})
    worker_output = getattr(session.config, "workeroutput", None)
    if worker_output is not None:  # an xdist worker: the controller writes the report
        worker_output["fault_cases"] = [asdict(case) for case in cases.values()]
        return
    if not target or not cases:
        return
    results: dict[str, str] = {}
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for outcome in ("passed", "failed", "skipped", "error"):
        for report in reporter.stats.get(outcome, []) if reporter else []:
            nodeid = getattr(report, "nodeid", "")
            if nodeid in cases and (outcome != "passed" or report.when == "call"):
                previous = results.get(nodeid)
                results[nodeid] = outcome if previous in (None, "passed") else previous
    ordered = [
        FaultCase(c.area, c.fault, c.outcome, c.test, results.get(c.test, "not run"), c.found)
        for c in cases.values()
    ]
    Path(target).write_text(render_report(ordered), encoding="utf-8")


# -- fixtures ------------------------------------------------------------------------
@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(strict_history=True) as server:
        yield server


def sessions_db(data_dir: Path) -> Path:
    return data_dir / "sessions.db"


def latest_session(data_dir: Path) -> str:
    from generalAgent.sessions import SessionCatalog

    catalog = SessionCatalog(sessions_db(data_dir))
    try:
        latest = catalog.latest(unlisted=True)  # -p sessions are recorded, not listed
    finally:
        catalog.close()
    assert latest is not None, "no session was recorded"
    return latest.id


def stored_messages(
    data_dir: Path, session_id: str | None = None, database_url: str | None = None
) -> list[BaseMessage]:
    """The messages of a session's last checkpoint (SQLite in DATA_DIR, or PostgreSQL)."""
    thread = session_id or latest_session(data_dir)
    config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if database_url:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(database_url) as saver:
            checkpoint = saver.get_tuple(config)
    else:
        from generalAgent.graph.checkpoints import open_sqlite_checkpointer

        saver = open_sqlite_checkpointer(sessions_db(data_dir))
        try:
            checkpoint = saver.get_tuple(config)
        finally:
            saver.conn.close()
    assert checkpoint is not None, f"no checkpoint for {thread}"
    return list(checkpoint.checkpoint["channel_values"].get("messages", []))


def assert_history_intact(messages: list[BaseMessage]) -> None:
    problems = stored_history_problems(messages)
    assert not problems, "stored history is broken: " + "; ".join(problems)


API_KEY = "sk-test-SECRET-0123456789"  # the key cli_env gives the CLI


def assert_no_secret_kept(data_dir: Path, *shown: str, secrets: tuple[str, ...] = (API_KEY,)) -> None:
    """No secret on screen (`shown`: what the user saw) nor anywhere in DATA_DIR (logs,
    sessions.db and its checkpoints, indexes.db, the workspaces)."""
    for secret in secrets:
        for text in shown:
            assert secret not in text, "a secret reached the terminal"
        for path in data_dir.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert secret.encode() not in path.read_bytes(), f"a secret is stored in {path}"


def assert_requests_valid(server: ScriptedOpenAIServer) -> None:
    invalid = server.invalid_history_requests
    assert not invalid, f"{len(invalid)} request(s) with invalid history: {invalid[0].history_problems}"


# -- a private mount namespace, for a read-only or full data directory ---------------
def mount_namespace_available() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True, timeout=10
    )
    return probe.returncode == 0


def in_mount_namespace(setup: str, argv: list[str]) -> list[str]:
    """`argv` run after the shell commands `setup`, in a mount namespace of its own.

    The mounts (a read-only bind, a tiny tmpfs) exist only for that process tree, so a
    test needs neither root nor cleanup; a user namespace maps the caller to root there.
    """
    return [
        "unshare",
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        f'{setup} && exec "$@"',
        "sh",
        *argv,
    ]


@pytest.fixture
def mounts() -> None:
    if not mount_namespace_available():
        if os.environ.get("CI"):
            pytest.fail("unshare --user --mount is needed for the storage faults and does not work here")
        pytest.skip("needs unshare --user --mount (user and mount namespaces)")
