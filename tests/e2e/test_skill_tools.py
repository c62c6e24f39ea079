"""A skill brings the tools its SKILL.md lists (`allowed-tools`), and they still ask first."""

from __future__ import annotations

import pexpect
import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt

pytestmark = pytest.mark.e2e


def test_mentioning_pdf_offers_the_shell_and_each_command_still_asks(
    openai_server: ScriptedOpenAIServer, spawn_chat
) -> None:
    openai_server.add(
        Reply(
            tool_calls=[ToolCall("run_bash_command", {"command": "python skills/pdf/scripts/info.py --help"})]
        ),
        Reply(text="Not run, as you said."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@pdf what is in this file?")
    child.expect("Approve run_bash_command")  # the skill made it visible; approval is unchanged
    child.expect(r"\[a\]lways")
    child.sendline("n")
    child.expect("Not run, as you said")
    expect_prompt(child)
    first, second = openai_server.chat_requests
    assert "run_bash_command" in first.tool_names
    assert second.messages[-1]["content"].startswith("Error: refused by the user")
    child.sendeof()
    child.expect(pexpect.EOF)
