"""Uploads, @mentions, approval and delegation in the real chat against the local model server."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pexpect
import pytest

from tests.support.history import tool_text
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import ask, expect_prompt, plain

pytestmark = pytest.mark.e2e


def last_user_text(request: RecordedRequest) -> str:
    return next(m["content"] for m in reversed(request.messages) if m["role"] == "user")


def test_upload_is_copied_and_announced_once(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    (workdir / "季度报告.md").write_text("# Q3\n营收增长 12%\n", encoding="utf-8")
    openai_server.add(Reply(text="收到。"), Reply(text="继续。"))
    child = spawn_chat()
    expect_prompt(child)
    shown = ask(child, "总结一下 #季度报告.md", "收到")
    assert "📎 uploads/季度报告.md (markdown, 22 B)" in shown
    expect_prompt(child)
    first = last_user_text(openai_server.chat_requests[0])
    assert first.startswith("总结一下 #季度报告.md\n\n<system_reminder>")
    assert "uploads/季度报告.md (markdown" in first
    ask(child, "然后呢？", "继续")
    expect_prompt(child)
    assert "<system_reminder>" not in last_user_text(openai_server.chat_requests[1])
    child.sendeof()
    child.expect(pexpect.EOF)


def test_bash_approval_in_the_chat(openai_server: ScriptedOpenAIServer, spawn_chat) -> None:
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall(
                    "run_bash_command", {"command": "echo approved-run > outputs/r.txt && cat outputs/r.txt"}
                )
            ]
        ),
        Reply(text="The command printed approved-run."),
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "echo second"})]),
        Reply(text="Refusal noted."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command write a file")
    child.expect("Approve run_bash_command")
    child.expect(r"\[y\]es / \[N\]o \(Enter\) / \[a\]lways")  # the default is marked
    child.sendline("y")
    child.expect("The command printed approved-run")
    expect_prompt(child)
    assert "run_bash_command" in openai_server.chat_requests[0].tool_names
    tool_answer = openai_server.chat_requests[1].messages[-1]
    assert (
        tool_answer["role"] == "tool" and tool_text(tool_answer["content"]) == "exit status 0\napproved-run"
    )
    child.sendline("once more")
    child.expect("Approve run_bash_command")
    child.expect(r"\[a\]lways")
    child.sendline("n")
    child.expect("Refusal noted")
    expect_prompt(child)
    assert openai_server.chat_requests[3].messages[-1]["content"].startswith("Error: refused by the user")
    shown = ask(child, "/tools", "on @mention|@mention")
    child.expect("Discovered tools")
    assert "run_bash_command" in plain(child.before) or "run_bash_command" in shown
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_ctrl_c_during_a_tool_call_stops_it(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
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
    deadline = time.monotonic() + 60
    while not list((workdir.parent / "data" / "workspaces").glob("*/outputs/started.txt")):
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)  # until the command is sleeping
    child.kill(signal.SIGINT)
    child.expect("Cancelled")
    expect_prompt(child)
    ask(child, "what happened?", "Understood, cancelled")
    expect_prompt(child)
    request = openai_server.chat_requests[-1]
    roles = [m["role"] for m in request.messages]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert request.messages[3]["content"].startswith("Error: cancelled:")
    time.sleep(0.5)
    assert not (workdir.parent / "data").joinpath("late.txt").exists()
    assert not list((workdir.parent / "data" / "workspaces").glob("*/outputs/late.txt"))
    child.sendeof()
    child.expect(pexpect.EOF)


def test_delegation_progress_is_shown_and_mentions_are_checked(
    openai_server: ScriptedOpenAIServer, spawn_chat
) -> None:
    def respond(request: RecordedRequest) -> Reply:
        system = request.messages[0]["content"]
        last = request.messages[-1]
        if system.startswith("You are a sub-agent"):
            if last["role"] == "user":
                return Reply(tool_calls=[ToolCall("now", {})])
            return Reply(text="It is daytime. (sub-agent report)")
        if last["role"] == "tool":
            return Reply(text="Done: " + json.loads(tool_text(last["content"]))["result"])
        return Reply(tool_calls=[ToolCall("delegate_task", {"task": "Find out the time."})])

    openai_server.responder = respond
    child = spawn_chat()
    expect_prompt(child)
    shown = ask(child, "@agnet please", "Unknown @agnet; did you mean @agent")
    expect_prompt(child)
    child.sendline("@agent what time is it?")
    child.expect(r"\[subagent-[0-9a-f]{8}\] started \(agent\): Find out the time.")
    child.expect(r"\[subagent-[0-9a-f]{8}\] ⚙ now")
    child.expect("Done: It is daytime")
    expect_prompt(child)
    parent_requests = [
        r
        for r in openai_server.chat_requests
        if not r.messages[0]["content"].startswith("You are a sub-agent")
    ]
    assert all("now" not in [m.get("name") for m in r.messages] for r in parent_requests)
    assert "Unknown" in shown
    child.sendeof()
    child.expect(pexpect.EOF)


def test_pdf_question_in_chinese_is_answered_from_the_right_page(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    """The newcomer's path: attach a PDF with #, ask in Chinese, the passage and its page reach the model."""
    from tests.support.documents import make_pdf

    make_pdf(
        workdir / "report.pdf",
        [
            ["Annual report 2025", "Contents and overview of the year."],
            ["第三季度经营情况", "本季度营收增长百分之十二，主要来自企业客户。", "客户满意度提升到 4.6 分。"],
            ["Outlook", "We expect stable margins next year."],
        ],
    )

    def respond(request: RecordedRequest) -> Reply:
        last = request.messages[-1]
        if last["role"] == "tool":
            return Reply(text="第三季度营收增长百分之十二（report.pdf，第 2 页）。")
        return Reply(
            tool_calls=[ToolCall("search_file", {"file_path": "uploads/report.pdf", "query": "营收增长"})]
        )

    openai_server.responder = respond
    child = spawn_chat()
    expect_prompt(child)
    shown = ask(child, "#report.pdf 第三季度营收增长了多少？", "第 2 页")
    assert "📎 uploads/report.pdf (pdf" in shown and "3 pages" in last_user_text(
        openai_server.chat_requests[0]
    )
    assert 'search_file(file_path="uploads/report.pdf", query="营收增长")' in shown
    expect_prompt(child)
    tool_result = openai_server.chat_requests[1].messages[-1]
    assert tool_result["role"] == "tool"
    assert "营收增长百分之十二" in tool_result["content"]
    assert "page 2" in tool_result["content"] or "p. 2" in tool_result["content"]
    assert tool_result["content"].index("营收增长百分之十二") < tool_result["content"].index(
        "We expect stable margins"
    )
    child.sendeof()
    child.expect(pexpect.EOF)


def test_tab_completes_a_chinese_file_name_and_a_command(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    (workdir / "季度报告.md").write_text("# Q3\n营收增长 12%\n", encoding="utf-8")
    openai_server.add(Reply(text="收到。"))
    child = spawn_chat()
    expect_prompt(child)
    child.send("看看 #季")
    child.send("\t")
    child.expect(r"度报告\.md")  # typed after the 季 already on screen
    child.send("\r")
    child.expect("📎 uploads/季度报告.md")
    child.expect("收到")
    expect_prompt(child)
    child.send("/usa\t")
    child.expect("ge")  # /usa completed to /usage
    child.send("\r")
    child.expect("model calls")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_a_file_named_inside_a_chinese_sentence_is_attached(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    (workdir / "参考手册.md").write_text("# 手册\n内容\n", encoding="utf-8")
    openai_server.add(Reply(text="好的。"))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("总结#参考手册.md的内容")
    child.expect("📎 uploads/参考手册.md")
    child.expect("好的")
    expect_prompt(child)
    child.sendline("再看 #手册.md，里面讲了什么？")
    child.expect("#手册.md: no such file or folder")
    expect_prompt(child)
    assert len(openai_server.chat_requests) == 1  # the second line was not sent
    child.sendeof()
    child.expect(pexpect.EOF)
