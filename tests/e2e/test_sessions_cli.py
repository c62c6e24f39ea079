"""Sessions a user can pick up: the --resume picker, the recap, /rename and /model with any id."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import ask, expect_prompt, plain

pytestmark = pytest.mark.e2e
DOWN = "\x1b[B"


def test_resume_picks_with_the_arrow_keys_and_shows_where_it_left_off(
    openai_server: ScriptedOpenAIServer, spawn_chat
) -> None:
    openai_server.add(
        Reply(text="Apples are red.\nThey grow on trees."),
        Reply(text="Pears are sweet."),
        Reply(text="More about apples."),
        Reply(text="From the other model."),
    )
    first = spawn_chat()
    expect_prompt(first)
    answered = ask(first, "first session about apples", "tokens:")
    assert re.search(r"Apples are red\. *\n *They grow on trees\.", answered)  # a single newline kept
    expect_prompt(first)
    ask(first, "/rename   Apple   notes ", "Renamed to Apple notes")
    expect_prompt(first)
    first.sendline("/quit")
    first.expect(pexpect.EOF)
    second = spawn_chat()
    expect_prompt(second)
    ask(second, "second about pears", "tokens:")
    expect_prompt(second)
    second.sendline("/quit")
    second.expect(pexpect.EOF)

    child = spawn_chat("--resume")
    child.expect("Resume which session")
    child.expect("Apple notes")  # the older one, second in the list
    picker = plain(child.before)
    assert "second about pears" in picker and "1 turn" in picker
    child.send(DOWN)
    child.send("\r")
    child.expect("Resumed")
    child.expect(r"session \d{8}-")  # the banner, after the recap
    recap = plain(child.before)
    expect_prompt(child)
    assert "Apple notes" in recap and "Where you left off" in recap
    assert "› first session about apples" in recap
    assert "Apples are red." in recap and "They grow on trees." in recap
    ask(child, "tell me more", "More about apples")
    expect_prompt(child)
    resumed = openai_server.chat_requests[-1]
    assert [m["content"] for m in resumed.messages if m["role"] == "user"] == [
        "first session about apples",
        "tell me more",
    ]

    switched = ask(child, "/model deepseek-reasoner", "Now using")
    assert "deepseek-reasoner" in switched and "not in MODEL_CHOICES" not in switched.split("Now using")[0]
    expect_prompt(child)
    ask(child, "and now?", "From the other model")
    expect_prompt(child)
    assert openai_server.chat_requests[-1].body["model"] == "deepseek-reasoner"
    listing = ask(child, "/sessions", "second about pears")
    assert "Apple notes" in listing
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_esc_in_the_picker_starts_a_new_session(openai_server: ScriptedOpenAIServer, spawn_chat) -> None:
    openai_server.add(Reply(text="One."), Reply(text="Two."))
    child = spawn_chat()
    expect_prompt(child)
    ask(child, "the old one", "tokens:")
    expect_prompt(child)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child = spawn_chat("--resume")
    child.expect("Resume which session")
    child.send("\x1b")
    child.expect("No session picked")
    expect_prompt(child)
    ask(child, "a new start", "Two")
    expect_prompt(child)
    assert [m["role"] for m in openai_server.chat_requests[-1].messages] == ["system", "user"]
    child.sendeof()
    child.expect(pexpect.EOF)


def test_a_session_whose_only_message_failed_is_not_listed_and_one_that_did_work_is(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    """A wrong key or a model that is down made every first try a one-turn session in
    /sessions and the picker. Such a session is now taken off the list once its turn fails
    with nothing done; a turn that ran a tool before failing keeps its session listed."""
    openai_server.add(
        Reply(status=401, error_message="Incorrect API key provided"),
        Reply(tool_calls=[ToolCall("now", {})]),
        Reply(status=401, error_message="Incorrect API key provided"),
    )
    failed = spawn_chat()
    expect_prompt(failed)
    failed.sendline("summarise the quarterly report")
    failed.expect("API key")
    expect_prompt(failed)
    ask(failed, "/sessions", "No saved sessions yet.")
    failed.sendline("/quit")
    failed.expect(pexpect.EOF)
    farewell = plain(failed.before)
    assert "Bye." in farewell and "Continue with" not in farewell, farewell

    worked = spawn_chat()
    expect_prompt(worked)
    worked.sendline("what time is it in the report's timezone")
    worked.expect("API key")
    expect_prompt(worked)
    worked.sendline("/quit")
    worked.expect(pexpect.EOF)
    assert "Continue with" in plain(worked.before)

    listing = " ".join(run_cli(["sessions"], cli_env, workdir).stdout.split())
    assert "what time is it" in listing and "summarise the quarterly" not in listing, listing
