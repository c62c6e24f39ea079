"""An editor session's approval mode is kept with the session: `generalagent acp` driven as
Zed drives it (the SDK's client over a pipe), across two processes.

In the first process, session A answers a command "always allow in this session", is
switched to Read only (its row is in the catalog already), and runs a reading tool;
session B is switched to Accept edits before its first message (it has no row yet) and
sends one; session C stays in Ask, and its stored mode is then made one this release
does not have. A second process loads A: it comes back in Read only, reported in the
load response, and its next command is refused without a question, the "always" answer
notwithstanding; switched to Ask, the command runs without a question, that answer being
still the session's. B, resumed, comes back in Accept edits and writes without a
question; C comes back in Ask, and its next turn says why.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.acp_editor import EditorClient, spawn
from tests.support.mcp_config import trust_folder
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e

GONE = "plan"  # a mode this release does not have (say, one a later release removed)


async def prompt(conn: Any, session_id: str, words: str) -> str:
    reply = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[text_block(words)]), 120)
    return reply.stop_reason


def mode_option(options: list[Any]) -> str:
    return next(getattr(o, "root", o) for o in options if getattr(o, "root", o).id == "mode").current_value


def tool_answer(server: ScriptedOpenAIServer, index: int) -> str:
    message = server.chat_requests[index].messages[-1]
    assert message["role"] == "tool"
    return str(message["content"])


async def first_process(env: dict[str, str], workdir: Path, server: ScriptedOpenAIServer) -> list[str]:
    editor = EditorClient()
    async with spawn(env, workdir, editor) as (conn, process):
        await conn.initialize(protocol_version=1)
        a = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        editor.answers = ["allow-session"]
        assert await prompt(conn, a, "@run_bash_command 打个招呼") == "end_turn"
        assert len(editor.permissions) == 1 and "kept-a" in tool_answer(server, 1)
        await conn.set_session_mode(session_id=a, mode_id="read-only")
        assert await prompt(conn, a, "现在几点？") == "end_turn"
        assert len(editor.permissions) == 1  # a reading tool runs in Read only, unasked
        assert "Error" not in tool_answer(server, 3)

        b = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        options = await conn.set_config_option(session_id=b, config_id="mode", value="accept-edits")
        assert mode_option(options.config_options) == "accept-edits"
        assert await prompt(conn, b, "你好") == "end_turn"

        c = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        assert await prompt(conn, c, "你好") == "end_turn"
    return [a, b, c]


async def second_process(env: dict[str, str], workdir: Path, server: ScriptedOpenAIServer, ids: list[str]):
    a, b, c = ids
    editor = EditorClient()
    async with spawn(env, workdir, editor) as (conn, process):
        await conn.initialize(protocol_version=1)

        loaded = await conn.load_session(cwd=str(workdir), session_id=a, mcp_servers=[])
        assert loaded.modes.current_mode_id == "read-only"
        assert mode_option(loaded.config_options) == "read-only"
        assert "打个招呼" in editor.text("user_message_chunk")  # replayed, as before
        # Read only holds from the first turn: the command is refused unasked, even though
        # the user answered "always" for it; nothing runs.
        editor.updates.clear()
        assert await prompt(conn, a, "@run_bash_command 建个文件") == "end_turn"
        assert editor.permissions == [] and not list(workdir.rglob("ro.txt"))
        assert "read-only" in tool_answer(server, 7)
        assert [u.status for u in editor.of_kind("tool_call_update")] == ["failed"]
        # Back in Ask, the "always" answer is still the session's: no question.
        await conn.set_session_mode(session_id=a, mode_id="ask")
        assert await prompt(conn, a, "@run_bash_command 再打个招呼") == "end_turn"
        assert editor.permissions == [] and "again-a" in tool_answer(server, 9)

        resumed = await conn.resume_session(cwd=str(workdir), session_id=b, mcp_servers=[])
        assert resumed.modes.current_mode_id == "accept-edits"
        assert mode_option(resumed.config_options) == "accept-edits"
        assert await prompt(conn, b, "写 auto.md") == "end_turn"
        assert editor.permissions == []
        assert (workdir / "auto.md").read_text(encoding="utf-8") == "auto\n"

        fallen_back = await conn.load_session(cwd=str(workdir), session_id=c, mcp_servers=[])
        assert fallen_back.modes.current_mode_id == "ask" and mode_option(fallen_back.config_options) == "ask"
        editor.updates.clear()
        assert await prompt(conn, c, "还在吗？") == "end_turn"
        assert f"The approval mode {GONE} no longer exists" in editor.text("agent_thought_chunk")
        assert editor.text() == "在。"


def stored_modes(data_dir: Path) -> dict[str, str | None]:
    with closing(sqlite3.connect(data_dir / "sessions.db")) as conn:
        return dict(conn.execute("SELECT id, approval_mode FROM chat_sessions").fetchall())


def test_an_editor_sessions_mode_comes_back_when_it_is_loaded_again(
    cli_env: dict[str, str], workdir: Path, openai_server: ScriptedOpenAIServer
) -> None:
    trust_folder(workdir)  # Accept edits writes only where writing is allowed: a trusted folder
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "echo kept-a"})]),
        Reply(text="打过招呼了。"),
        Reply(tool_calls=[ToolCall("now", {})]),
        Reply(text="现在是下午。"),
        Reply(text="你好，B。"),
        Reply(text="你好，C。"),
        # the second process
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "touch ro.txt"})]),
        Reply(text="只读模式下不能建。"),
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "echo again-a"})]),
        Reply(text="又打了招呼。"),
        Reply(tool_calls=[ToolCall("write_file", {"path": "auto.md", "content": "auto\n"})]),
        Reply(text="写好了。"),
        Reply(text="在。"),
    )
    env = {**cli_env, "OPENAI_BASE_URL": openai_server.base_url}
    data_dir = Path(cli_env["DATA_DIR"])
    workdir = workdir.resolve()
    ids = asyncio.run(first_process(env, workdir, openai_server))
    a, b, c = ids
    assert stored_modes(data_dir) == {a: "read-only", b: "accept-edits", c: "ask"}
    with closing(sqlite3.connect(data_dir / "sessions.db")) as conn, conn:
        conn.execute("UPDATE chat_sessions SET approval_mode = ? WHERE id = ?", (GONE, c))
    asyncio.run(second_process(env, workdir, openai_server, ids))
    assert openai_server.pending_replies == 0
    # What the user chose last is what is kept; the fallen-back session is stored as it runs.
    assert stored_modes(data_dir) == {a: "ask", b: "accept-edits", c: "ask"}
