"""What users do to a running turn: Ctrl-C (SIGINT) at every stage, and killing the process.

The interactive chat runs in a pseudo-terminal (pexpect). After each fault the user goes
on (in the same chat, or with `--resume` in a new process) and the test checks that the
next request is valid, that the model hears what happened, and that the stored history is.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.faults.conftest import assert_history_intact, assert_requests_valid, sessions_db, stored_messages
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.slow_page import SlowPage
from tests.support.terminal import ask, expect_prompt, plain

fault = pytest.mark.fault


def roles(request) -> list[str]:
    return [m["role"] for m in request.messages]


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def checkpointed(data_dir: Path, text: str) -> bool:
    """A checkpoint of the session database holds `text` (LangGraph saves them in the background)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{sessions_db(data_dir)}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT 1 FROM checkpoints WHERE instr(checkpoint, ?) > 0", (text.encode(),))
        return row.fetchone() is not None
    except sqlite3.OperationalError:  # not created yet, or busy for a moment
        return False
    finally:
        conn.close()


def quit_chat(child: pexpect.spawn) -> None:
    child.sendeof()
    child.expect(pexpect.EOF)


@pytest.fixture
def slow_page() -> Iterator[SlowPage]:
    page = SlowPage()
    yield page
    page.close()


@fault(
    area="user",
    fault="Ctrl-C while the answer streams",
    outcome="Streaming stops at once ('Cancelled'); the part shown is stored marked '[answer interrupted by the user]'; the next message is answered.",
)
def test_ctrl_c_while_streaming(openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path) -> None:
    # A minute of streaming: the Ctrl-C lands in it however slowly the test reads.
    openai_server.add(
        Reply(text="word " * 3000, chunk_chars=5, chunk_delay=0.02), Reply(text="Fresh answer.")
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("Write a long essay.")
    child.expect("word word")
    child.kill(signal.SIGINT)
    child.expect("Cancelled")
    expect_prompt(child)
    ask(child, "Short version please.", "Fresh answer")
    expect_prompt(child)
    quit_chat(child)
    request = openai_server.chat_requests[-1]
    assert roles(request) == ["system", "user", "assistant", "user"]
    assert request.messages[2]["content"].endswith("[answer interrupted by the user]")
    messages = stored_messages(data_dir)
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "HumanMessage", "AIMessage"]
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="user",
    fault="/retry after Ctrl-C",
    outcome="/retry sends the cancelled message again, as if the cancelled attempt had never been made: no cancellation text, the question stored once.",
)
def test_retry_after_ctrl_c_sends_the_message_again(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    openai_server.add(Reply(text="word " * 3000, chunk_chars=5, chunk_delay=0.02), Reply(text="Short essay."))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("Write a long essay.")
    child.expect("word word")
    child.kill(signal.SIGINT)
    child.expect("Cancelled")
    expect_prompt(child)
    ask(child, "/retry", "Short essay")
    expect_prompt(child)
    quit_chat(child)
    request = openai_server.chat_requests[-1]
    assert roles(request) == ["system", "user"]
    assert request.messages[1]["content"] == "Write a long essay."
    messages = stored_messages(data_dir)
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage"]
    assert messages[1].text == "Short essay."
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="user",
    fault="Ctrl-C before the first token (the endpoint is slow to answer)",
    outcome="The turn is cancelled within a second, not after MODEL_TIMEOUT; nothing of it is stored but the question; the next message is answered.",
)
def test_ctrl_c_while_waiting_for_the_model(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(Reply(hang=True), Reply(text="Here now."))
    # Five minutes of MODEL_TIMEOUT: a cancel that waited for the model would be plain to see.
    child = spawn_chat(env={**cli_env, "MODEL_TIMEOUT": "300"})
    expect_prompt(child)
    child.sendline("Anyone home?")
    wait_until(lambda: openai_server.chat_requests, "the question never reached the model")
    pressed = time.monotonic()
    child.kill(signal.SIGINT)
    child.expect("Cancelled")
    assert time.monotonic() - pressed < 30  # not after MODEL_TIMEOUT (a second on an idle machine)
    expect_prompt(child)
    ask(child, "Hello again", "Here now")
    expect_prompt(child)
    quit_chat(child)
    assert roles(openai_server.chat_requests[-1]) == ["system", "user", "user"]
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="user",
    fault="Ctrl-C while a command runs (approved run_bash_command, sleep 30)",
    outcome="The command's process group is killed (its later write never happens); the call is answered 'Cancelled'; the next message is answered.",
)
def test_ctrl_c_during_a_tool_call(openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path) -> None:
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall(
                    "run_bash_command",
                    {"command": "touch outputs/started.txt; sleep 30; echo late > outputs/late.txt"},
                )
            ]
        ),
        Reply(text="Understood, cancelled."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command slow job")
    child.expect(r"\[a\]lways")
    child.sendline("y")
    wait_until(lambda: list(data_dir.glob("workspaces/*/outputs/started.txt")), "the command never started")
    child.kill(signal.SIGINT)
    child.expect("Cancelled")
    expect_prompt(child)
    ask(child, "what happened?", "Understood, cancelled")
    expect_prompt(child)
    quit_chat(child)
    request = openai_server.chat_requests[-1]
    assert roles(request) == ["system", "user", "assistant", "tool", "user"]
    assert request.messages[3]["content"].startswith("Error: cancelled")
    assert not list(data_dir.glob("workspaces/*/outputs/late.txt"))
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="user",
    fault="Ctrl-C at the approval question",
    outcome="Nothing runs; the call is answered 'Cancelled'; the chat returns to the prompt and the next message is answered.",
)
def test_ctrl_c_at_the_approval_prompt(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "touch outputs/ran.txt"})]),
        Reply(text="Not running it."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command make a file")
    child.expect(r"\[a\]lways")
    child.kill(signal.SIGINT)
    child.expect("Cancelled")
    expect_prompt(child)
    ask(child, "never mind", "Not running it")
    expect_prompt(child)
    quit_chat(child)
    assert not list(data_dir.glob("workspaces/*/outputs/ran.txt"))
    assert roles(openai_server.chat_requests[-1]) == ["system", "user", "assistant", "tool", "user"]
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="user",
    fault="Process killed (SIGKILL) while the answer streams, then --resume",
    outcome="--resume continues the session: the earlier turns are sent again, the broken answer is not, and the next message is answered.",
)
def test_killed_while_streaming_then_resume(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    openai_server.add(
        Reply(text="Noted: the code word is heron."),
        Reply(text="stream " * 3000, chunk_chars=7, chunk_delay=0.02),
        Reply(text="The code word was heron."),
    )
    child = spawn_chat()
    expect_prompt(child)
    ask(child, "Remember the code word heron.", "Noted")
    expect_prompt(child)
    child.sendline("Now write a long story.")
    child.expect("stream stream")
    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)

    resumed = spawn_chat("-c")  # the latest session of this folder, without the picker
    assert "Resumed" in expect_prompt(resumed)
    ask(resumed, "What was the code word?", "The code word was heron")
    expect_prompt(resumed)
    quit_chat(resumed)
    contents = [m["content"] for m in openai_server.chat_requests[-1].messages[1:]]
    assert contents[:2] == ["Remember the code word heron.", "Noted: the code word is heron."]
    assert contents[-1] == "What was the code word?"
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="user",
    fault="Process killed (SIGKILL) while a tool runs, then --resume",
    found="the call stayed unanswered in the stored history for good and the model never heard the tool had not finished",
    outcome="The call left open is answered 'Not run: the previous session stopped…' before the new message, so the model knows and the history is valid.",
)
def test_killed_during_a_tool_call_then_resume(
    openai_server: ScriptedOpenAIServer,
    spawn_chat,
    cli_env: dict[str, str],
    data_dir: Path,
    slow_page: SlowPage,
) -> None:
    fetch = ToolCall("fetch_web", {"url": slow_page.url})
    openai_server.add(
        Reply(text="Ready."),
        Reply(tool_calls=[fetch]),
        Reply(text="The fetch never finished; shall I try again?"),
    )
    env = {**cli_env, "FETCH_ALLOW_PRIVATE": "true"}
    child = spawn_chat(env=env)
    expect_prompt(child)
    ask(child, "hello", "Ready")
    expect_prompt(child)
    child.sendline(f"fetch the slow page at {slow_page.url}")  # a host the user names: no question
    assert slow_page.requested.wait(60), "fetch_web never reached the page"
    wait_until(lambda: checkpointed(data_dir, fetch.id), "the model's call was never checkpointed")
    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)

    resumed = spawn_chat("-c", env=env)  # the latest session of this folder, without the picker
    expect_prompt(resumed)
    ask(resumed, "did it work?", "never finished")
    expect_prompt(resumed)
    quit_chat(resumed)
    request = openai_server.chat_requests[-1]
    assert roles(request)[-4:] == ["user", "assistant", "tool", "user"]
    assert request.messages[-2]["content"].startswith("Not run: the previous session stopped")
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="user",
    fault="Process killed during the first turn of a new session, then --resume",
    found="the session was listed only after its first turn, so --resume said there was no session and the question was lost",
    outcome="The session is listed from the moment its first message is sent, so --resume finds it and the question is not lost.",
)
def test_killed_in_the_first_turn_then_resume(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    openai_server.add(Reply(text="slow " * 400, chunk_chars=5, chunk_delay=0.02), Reply(text="Back again."))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("First question ever")
    child.expect("slow slow")
    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)

    resumed = spawn_chat("-c")  # the latest session of this folder, without the picker
    shown = expect_prompt(resumed)
    assert "Resumed" in shown and "First question ever" in shown
    ask(resumed, "hello?", "Back again")
    expect_prompt(resumed)
    quit_chat(resumed)
    assert [m["content"] for m in openai_server.chat_requests[-1].messages[1:]] == [
        "First question ever",
        "hello?",
    ]
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="user",
    fault="Process killed while it waits for approval, then --resume",
    outcome="The unapproved command never runs; its call is answered 'Not run' when the user goes on; the history is valid.",
)
def test_killed_at_the_approval_prompt_then_resume(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "touch outputs/ran.txt"})]),
        Reply(text="Fine, nothing ran."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command make a file")
    child.expect(r"\[a\]lways")
    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)

    resumed = spawn_chat("-c")  # the latest session of this folder, without the picker
    expect_prompt(resumed)
    shown = ask(resumed, "forget it", "Fine, nothing ran")
    expect_prompt(resumed)
    quit_chat(resumed)
    assert "Approve" not in plain(shown)
    assert not list(data_dir.glob("workspaces/*/outputs/ran.txt"))
    request = openai_server.chat_requests[-1]
    assert roles(request) == ["system", "user", "assistant", "tool", "user"]
    assert request.messages[3]["content"].startswith("Not run")
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)
