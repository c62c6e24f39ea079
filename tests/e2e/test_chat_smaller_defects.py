"""Small things a user notices in the chat, each through the real CLI."""

from __future__ import annotations

import time

import pexpect
import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt, plain

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("key", ["ctrl-c", "ctrl-d"])
def test_ctrl_c_or_ctrl_d_at_an_approval_question_cancels_the_turn(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir, key: str
) -> None:
    """Either key is a "no" that cancels the turn, never showing the call as running; Ctrl-D
    ended the turn as "Unexpected error: EOFError:" before."""
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "touch ran.txt"})]),
        Reply(text="Next answer."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command make a file")
    child.expect(r"\[a\]lways")
    if key == "ctrl-c":
        child.sendcontrol("c")
    else:
        child.sendeof()
    child.expect("Cancelled")
    shown = plain(child.before + child.after)
    shown += expect_prompt(child)
    assert "running" not in shown, shown
    assert "EOFError" not in shown and "Unexpected error" not in shown, shown
    assert not (workdir / "ran.txt").exists()
    child.sendline("go on")
    child.expect("Next answer")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_the_error_line_of_a_bad_tool_call_keeps_its_cause(
    openai_server: ScriptedOpenAIServer, spawn_chat
) -> None:
    wrong = {
        "filename": "reports/2025/第三季度/销售数据汇总-最终版-已审核.xlsx",
        "pages": "1-20",
        "mode": "full",
    }
    openai_server.add(Reply(tool_calls=[ToolCall("read_file", wrong)]), Reply(text="I will fix the call."))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("read it")
    child.expect("I will fix the call")
    shown = plain(child.before)
    expect_prompt(child)
    error_part = " ".join(shown[shown.index("✗") :].split())
    assert "Error: path: Field required" in error_part  # the cause, not the call repeated
    assert "with kwargs" not in error_part
    sent = openai_server.chat_requests[1].messages[-1]["content"]
    assert "path: Field required" in sent  # the model still gets all of it
    # said once: LangChain's "Please fix the error and try again." was followed by "..
    # Fix the arguments and try again."
    assert sent.lower().count("try again") == 1 and ".." not in sent, sent
    assert ".." not in error_part, error_part
    child.sendeof()
    child.expect(pexpect.EOF)


def test_tools_says_the_file_tools_write_in_the_folder_too(spawn_chat) -> None:
    """/tools said write_file and edit_file write only under outputs/ or temp/, though they
    edit the user's own files in place (asking, with a diff)."""
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("/tools")
    child.expect("Discovered tools")
    shown = " ".join(plain(child.before).split())
    expect_prompt(child)
    for tool in ("write_file", "edit_file"):
        row = shown[shown.index(tool) : shown.index(tool) + 160]
        assert "your folder (asks, shows the diff)" in row, row
    child.sendeof()
    child.expect(pexpect.EOF)


def test_no_model_is_said_before_the_folder_question(spawn_chat, workdir, cli_env) -> None:
    """With no model anywhere (not even in the folder's own .env), the chat asked whether to
    trust the folder first and only then said there is no model: a question for nothing."""
    (workdir / "AGENTS.md").write_text("Answer briefly.\n", encoding="utf-8")
    (workdir / ".env").write_text("MAX_LOOPS=12\n", encoding="utf-8")
    env = {k: v for k, v in cli_env.items() if k != "MODEL_NAME"}
    child = spawn_chat(env=env)
    child.expect(pexpect.EOF)
    shown = plain(child.before)
    assert "No model configured: set MODEL_NAME" in shown, shown
    assert "project configuration" not in shown
    # A folder whose .env names the model still asks first (trusting it is what gives a model).
    (workdir / ".env").write_text("MODEL_NAME=test-model\n", encoding="utf-8")
    child = spawn_chat(env=env)
    child.expect("project configuration")
    child.terminate(force=True)


def test_the_turn_time_leaves_out_the_time_at_the_approval_question(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "true"})]),
        Reply(text="Ran it."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command run it")
    child.expect(r"\[a\]lways")
    time.sleep(4)  # the user reads the question
    child.sendline("y")
    child.expect(r"calls? · ([0-9.]+) s · context")
    assert float(child.match.group(1)) < 3.5, child.match.group(0)  # it counted the 4 s before
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
