"""AGENTS.md through the real CLI: the instructions reach the model, /memory says from where."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from generalAgent.config.trust import TrustStore
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.terminal import ask, expect_prompt

pytestmark = pytest.mark.e2e


def test_agents_md_reaches_the_system_prompt_and_memory_shows_it(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    user_file = tmp_path / "config" / "AGENTS.md"
    user_file.parent.mkdir()
    user_file.write_text("Sign every answer with -- G.\n", encoding="utf-8")
    (workdir / "AGENTS.md").write_text("Reports go to outputs/reports/.\n\x1b]0;owned\x07", encoding="utf-8")
    TrustStore().remember(workdir, True)
    openai_server.add(Reply(text="Fine. -- G."))
    child = spawn_chat(env={**cli_env, "USER_AGENTS_FILE": str(user_file)})
    expect_prompt(child)
    ask(child, "hello", "tokens:")
    expect_prompt(child)
    system = openai_server.chat_requests[0].messages[0]["content"]
    assert "Sign every answer with -- G." in system and "Reports go to outputs/reports/." in system
    shown = ask(child, "/memory", "next session")
    assert "yours" in shown and str(user_file) in shown.replace("\n", "")
    assert "this project" in shown and "Reports go to outputs/reports/." in shown
    assert "\x1b]0;" not in child.before  # the file's escape sequence is not passed to the terminal
    child.sendline("/quit")
    child.expect(pexpect.EOF)
