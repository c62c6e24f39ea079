"""The trust question through the real CLI, in Chinese: asked once, before anything of the folder runs."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from generalAgent.config.trust import TrustStore
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.terminal import ask, expect_prompt

pytestmark = pytest.mark.e2e


def test_the_question_is_asked_in_chinese_and_yes_brings_the_folders_agents_md(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    (workdir / "AGENTS.md").write_text("报告放在 outputs/reports/ 下。\n", encoding="utf-8")
    openai_server.add(Reply(text="好的。"))
    child = spawn_chat(env={**cli_env, "UI_LANGUAGE": "zh"})
    child.expect("信任这个文件夹吗")
    assert "AGENTS.md" in child.before and "项目配置" in child.before
    child.sendline("是")
    child.expect("已信任")
    expect_prompt(child)
    ask(child, "你好", "好的")
    expect_prompt(child)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert "报告放在 outputs/reports/ 下。" in openai_server.chat_requests[0].messages[0]["content"]
    assert TrustStore().decision(workdir) is True
