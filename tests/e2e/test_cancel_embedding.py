"""Ctrl-C while an embedding request is in flight ends the work within a second.

The endpoint may take EMBEDDING_TIMEOUT (60 s and more on a loaded local server) to answer.
Here the test server holds the request until the test ends. `generalagent index` embeds in
its main thread, where SIGINT interrupts the read itself (it ended 0.7-0.9 s after the
signal before this change too: a guard). In the chat the request runs in the tool's thread:
Ctrl-C used to end the turn only when the request timed out (119.8 s with
EMBEDDING_TIMEOUT=120); the wait now watches the call's cancel event.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generalAgent.config.trust import TrustStore
from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("target", ["guide.md", "manuals"])
def test_ctrl_c_during_an_embedding_batch_ends_index_within_a_second(
    target: str, cli_env: dict[str, str], tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    (tmp_path / "manuals").mkdir()
    (tmp_path / "manuals" / "notes.md").write_text("# gamma\n\nprinter toner\n", encoding="utf-8")
    (tmp_path / "guide.md").write_text(
        "# alpha\n\nthe walrus migrates north\n\n# beta\n\nbackup archive copies\n", encoding="utf-8"
    )
    openai_server.hold_embeddings_of = "e"  # answered only when the test ends
    env = {**cli_env, "EMBEDDING_MODEL": "test-embed", "EMBEDDING_TIMEOUT": "120"}
    child = subprocess.Popen(
        [sys.executable, "-m", "generalAgent", "index", target],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not [r for r in openai_server.requests if r.path.endswith("/embeddings")]:
            assert time.monotonic() < deadline, "the chunks were never sent to be embedded"
            assert child.poll() is None, child.communicate()
            time.sleep(0.05)
        time.sleep(0.3)  # the request is in flight, its answer held
        pressed = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=30)
        stopped = time.monotonic() - pressed
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert stopped < 2.0, f"index ended {stopped:.1f} s after Ctrl-C: {stderr}"
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr


def test_ctrl_c_while_a_search_waits_for_its_query_embedding_ends_the_turn_within_a_second(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    (workdir / "notes.md").write_text("# Walrus\n\nThe walrus migrates north in spring.\n", encoding="utf-8")
    env = {**cli_env, "EMBEDDING_MODEL": "test-embed", "EMBEDDING_TIMEOUT": "120"}
    TrustStore().remember(workdir, True)
    indexed = run_cli(["index", "notes.md"], env, workdir)
    assert indexed.returncode == 0 and "Embedded 1 chunk." in indexed.stderr, indexed.stderr
    openai_server.hold_embeddings_of = "zebra"  # the query's vector never comes
    openai_server.add(
        Reply(tool_calls=[ToolCall("search_file", {"file_path": "notes.md", "query": "zebra walrus"})]),
        Reply(text="Stopped, as you asked."),
    )
    child = spawn_chat(env=env)
    expect_prompt(child)
    child.sendline("where does the walrus go?")
    deadline = time.monotonic() + 60
    while not [r for r in openai_server.requests if "zebra" in str(r.body.get("input"))]:
        assert time.monotonic() < deadline, "the query was never sent to be embedded"
        time.sleep(0.05)
    time.sleep(0.3)
    pressed = time.monotonic()
    child.sendcontrol("c")
    child.expect("Cancelled", timeout=150)
    stopped = time.monotonic() - pressed
    expect_prompt(child)
    assert stopped < 2.0, f"the turn ended {stopped:.1f} s after Ctrl-C"
    child.sendeof()
