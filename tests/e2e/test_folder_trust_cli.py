"""The trust question through the real CLI, in Chinese: asked once, before anything of the folder runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
import pytest

from generalAgent.config.trust import TrustStore
from tests.e2e.conftest import run_cli
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


def test_a_plain_folder_of_documents_is_asked_about_in_the_users_language_once(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """No .env, no AGENTS.md: only documents. Reading them in place needs trust, so a
    newcomer is asked (in the language of LANG), once; -p never asks."""
    folder = tmp_path / "季度资料"
    folder.mkdir()
    (folder / "季度报告.txt").write_text("第三季度收入增长 12%。\n", encoding="utf-8")
    env = {
        key: value for key, value in cli_env.items() if key not in {"LC_ALL", "LC_MESSAGES", "UI_LANGUAGE"}
    }
    env["LANG"] = "zh_CN.UTF-8"
    openai_server.add(Reply(text="好的。"))

    once = run_cli(["-p", "你好"], env, folder)
    assert once.returncode == 0 and "信任" not in once.stdout + once.stderr  # -p never asks
    assert TrustStore().decision(folder) is None

    def spawn() -> pexpect.spawn:
        return pexpect.spawn(
            sys.executable,
            ["-m", "generalAgent"],
            env=env,
            cwd=str(folder),
            encoding="utf-8",
            timeout=30,
            dimensions=(50, 120),
        )

    child = spawn()
    child.expect("信任这个文件夹吗")
    assert "在这个文件夹里工作" in child.before
    child.sendline("是")
    child.expect("已信任")
    expect_prompt(child)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert TrustStore().decision(folder) is True

    again = spawn()
    expect_prompt(again)  # decided: no second question
    assert "信任这个文件夹吗" not in again.before
    again.sendline("/quit")
    again.expect(pexpect.EOF)
