"""The user's own slash commands through the real chat (issue 28): a Markdown file in the
user-level commands/ folder becomes /总结; its body, with the arguments in it, is sent as a
typed line, so the #file it carries is attached."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.support.documents import make_pdf
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.terminal import ask, expect_prompt

pytestmark = pytest.mark.e2e

SUMMARY = """\
---
description: 按公司模板总结一份报告
argument-hint: "#文件"
allowed-tools: [now]
---
请按公司模板总结 $ARGUMENTS：先写三条要点，再写风险，最后写下一步。
"""


def user_commands(env: dict[str, str]) -> Path:
    folder = Path(env["GENERALAGENT_CONFIG_DIR"]) / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def last_user_text(request) -> str:
    return next(m["content"] for m in reversed(request.messages) if m["role"] == "user")


def test_a_command_with_arguments_and_a_file_reference(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    commands = user_commands(cli_env)
    (commands / "总结.md").write_text(SUMMARY, encoding="utf-8")
    (commands / "review").mkdir()
    (commands / "review" / "pdf.md").write_text(
        "---\nmodel: review-model\n---\nReview $1 for $2 problems.\n", encoding="utf-8"
    )
    make_pdf(workdir / "报告.pdf", [["第三季度经营情况", "本季度营收增长百分之十二。"]])
    openai_server.add(Reply(text="要点一：营收增长。"), Reply(text="Reviewed."), Reply(text="Back."))
    child = spawn_chat()
    expect_prompt(child)
    shown = ask(child, "/总结 #报告.pdf", "要点一")
    assert "📎 uploads/报告.pdf (pdf" in shown
    expect_prompt(child)
    sent = last_user_text(openai_server.chat_requests[0])
    assert sent.startswith("请按公司模板总结 #报告.pdf：先写三条要点，再写风险，最后写下一步。")
    assert "uploads/报告.pdf (pdf" in sent  # the file reached the model as an attachment
    assert "now" in openai_server.chat_requests[0].tool_names  # allowed-tools: mentioned for the turn

    ask(child, '/review:pdf "the draft" layout', "Reviewed")
    expect_prompt(child)
    assert last_user_text(openai_server.chat_requests[1]) == "Review the draft for layout problems."
    assert openai_server.chat_requests[1].body["model"] == "review-model"  # the command's model, for its turn
    ask(child, "thanks", "Back")
    expect_prompt(child)
    assert openai_server.chat_requests[2].body["model"] == "test-model"

    ask(child, "/help", "Your commands")
    listed = " ".join(expect_prompt(child).split())
    assert "/总结 #文件 按公司模板总结一份报告 (yours)" in listed
    assert "/review:pdf pdf.md (yours)" in listed
    child.sendeof()
    child.expect(pexpect.EOF)


def test_the_commands_appear_in_chinese_help_and_tab_completion(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str]
) -> None:
    (user_commands(cli_env) / "总结.md").write_text(SUMMARY, encoding="utf-8")
    openai_server.add(Reply(text="好的。"))
    child = spawn_chat(env={**cli_env, "UI_LANGUAGE": "zh"})
    expect_prompt(child)
    child.send("/总")
    child.send("\t")
    child.expect("结")  # typed after the /总 already on screen
    child.send("\r")
    child.expect("好的")
    expect_prompt(child)
    assert last_user_text(openai_server.chat_requests[0]).startswith("请按公司模板总结 ：先写三条要点")
    shown = ask(child, "/help", "你的命令")
    child.expect("按公司模板总结一份报告")
    expect_prompt(child)
    assert "/help" in shown
    child.sendeof()
    child.expect(pexpect.EOF)
