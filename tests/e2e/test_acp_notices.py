"""`generalagent acp`: the agent's lines for the user reach the editor, as the chat prints
them. A server of the (trusted) folder's mcp.json that exits at start-up is said once, as
a thought in the UI's language, with its tools skipped; the session goes on."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from acp import text_block

from tests.support.acp_editor import FileEditor, spawn
from tests.support.mcp_config import trust_folder, write_mcp_json
from tests.support.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.e2e


async def editor_session(env: dict[str, str], workdir: Path) -> list[str]:
    editor = FileEditor()
    async with spawn(env, workdir, editor) as (conn, _process):
        await conn.initialize(protocol_version=1, client_capabilities=FileEditor.capabilities)
        session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
        deadline = time.monotonic() + 120
        while "MCP 服务器 broken" not in editor.text("agent_thought_chunk"):  # it fails while turns run
            assert time.monotonic() < deadline, editor.text("agent_thought_chunk")
            reply = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("你好")]), 60
            )
            assert reply.stop_reason == "end_turn"
        for _ in range(2):  # said once
            await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("再来")]), 60
            )
        return [u.content.text for u in editor.of_kind("agent_thought_chunk")]


def test_an_mcp_server_that_does_not_start_is_said_once_to_the_editor(
    cli_env: dict[str, str], workdir: Path, openai_server: ScriptedOpenAIServer
) -> None:
    write_mcp_json(workdir, {"broken": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}})
    trust_folder(workdir)
    openai_server.responder = lambda request: Reply(text="好。")
    thoughts = asyncio.run(editor_session({**cli_env, "UI_LANGUAGE": "zh"}, workdir.resolve()))
    said = [line for line in thoughts if "broken" in line]
    assert len(said) == 1, thoughts
    assert "MCP 服务器 broken" in said[0] and "已跳过" in said[0]  # in the UI's language
