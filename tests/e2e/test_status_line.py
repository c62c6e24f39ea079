"""The live status line in a real terminal: every wait says what it waits for and how to stop it."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt

pytestmark = pytest.mark.e2e


def test_waiting_for_the_first_token_shows_a_line_and_esc_interrupts(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env
) -> None:
    openai_server.add(Reply(hang=True), Reply(text="Back again."))
    # MODEL_TIMEOUT must not end the wait before Esc does, however slowly the line comes.
    child = spawn_chat(env={**cli_env, "MODEL_TIMEOUT": "300"})
    expect_prompt(child)
    child.sendline("a slow question")
    child.expect("waiting for the model")
    child.expect(r"Ctrl-C or Esc to interrupt")
    child.expect(r"[1-9] s ·", timeout=60)  # the seconds count up while nothing arrives
    child.send("\x1b")
    child.expect("Cancelled")
    expect_prompt(child)
    child.sendline("again")
    child.expect("Back again")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_an_arrow_key_during_a_turn_does_not_interrupt(
    openai_server: ScriptedOpenAIServer, spawn_chat
) -> None:
    openai_server.add(Reply(text="Finished in its own time.", chunk_delay=0.2, chunk_chars=8))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("take your time")
    child.expect("waiting for the model|Finished")
    child.send("\x1b[A")
    child.expect("in its own time")
    expect_prompt(child)
    assert "Cancelled" not in child.before
    child.sendeof()
    child.expect(pexpect.EOF)


def test_a_rate_limit_retry_is_shown_with_its_delay(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env
) -> None:
    openai_server.add(Reply(status=429, retry_after=2), Reply(text="After the wait."))
    child = spawn_chat(env={**cli_env, "MODEL_MAX_RETRIES": "2"})
    expect_prompt(child)
    child.sendline("busy?")
    child.expect(r"rate limited \(429\): retrying in 2 s \(retry 1 of 2\)")
    child.expect("After the wait")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_the_line_comes_back_while_an_approved_command_runs(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    # The command runs until the test has seen its line (three seconds could pass unseen).
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "until [ -e go ]; do sleep 0.1; done"})]),
        Reply(text="It slept."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command sleep a little")
    child.expect("Approve run_bash_command")
    child.expect(r"\[a\]lways")
    child.sendline("y")
    child.expect(r"run_bash_command\(.*running…")
    child.expect("Esc to interrupt")
    for workspace in (data_dir / "workspaces").iterdir():  # where the command runs
        (workspace / "go").touch()
    child.expect("It slept")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
