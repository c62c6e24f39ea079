"""Nothing typed is lost: keys typed while a turn runs or ends reach the next input line."""

from __future__ import annotations

import pexpect
import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.terminal import expect_prompt

pytestmark = pytest.mark.e2e
REMINDER = "\n\n<system_reminder>"


def typed_text(content: str) -> str:
    """The user's text of a request's last message (a reminder may follow it)."""
    return content.split(REMINDER, 1)[0]


def test_twenty_messages_typed_the_moment_each_answer_appears_arrive_whole(
    openai_server: ScriptedOpenAIServer, spawn_chat
) -> None:
    messages = [f"turn {n}: alpha beta gamma delta epsilon zeta eta theta" for n in range(1, 21)]
    messages[6] = "@run_bash_command list the files here, turn 7"
    messages[13] = "第 14 轮：甲乙丙丁 戊己庚辛 alpha beta"
    # A streamed answer: the next message is typed while its last pieces still arrive.
    openai_server.add(*(Reply(text=f"Answer number {n} is here.", chunk_delay=0.01) for n in range(1, 21)))
    child = spawn_chat()
    expect_prompt(child)
    child.send(messages[0] + "\r")
    for number, message in enumerate(messages[1:], 1):
        child.expect(f"Answer number {number} ")
        child.send(message + "\r")
    child.expect("Answer number 20 ")
    child.expect("tokens:")
    expect_prompt(child)
    requests = openai_server.chat_requests
    assert [typed_text(r.messages[-1]["content"]) for r in requests] == messages
    child.sendeof()
    child.expect(pexpect.EOF)


def test_keys_typed_while_a_turn_runs_wait_for_the_prompt(
    openai_server: ScriptedOpenAIServer, spawn_chat
) -> None:
    openai_server.add(
        Reply(text="A slow answer, in many small pieces.", chunk_delay=0.15, chunk_chars=2),
        Reply(text="Second answer."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.send("first question\r")
    child.expect("A slow")
    child.send("second ")  # while the answer streams
    child.send("question\r")
    child.expect("Second answer")
    expect_prompt(child)
    assert [typed_text(r.messages[-1]["content"]) for r in openai_server.chat_requests] == [
        "first question",
        "second question",
    ]
    child.sendeof()
    child.expect(pexpect.EOF)
