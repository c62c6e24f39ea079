"""An editor session's approval mode is kept with the session: `generalagent acp` driven as
Zed drives it (the SDK's client over a pipe), across two processes.

In the first process, session A answers a command "always allow in this session", is
switched to Read only (its row is in the catalog already), and runs a reading tool;
session B is switched to Accept edits before its first message (it has no row yet) and
sends one; session C stays in Ask, and its stored mode is then made one this release
does not have; session D is switched to Read only while its first turn waits in a
UserPromptSubmit hook, before the turn puts the session in the catalog. A second process loads A: it comes back in Read only, reported in the
load response, and its next command is refused without a question, the "always" answer
notwithstanding; switched to Ask, the command runs without a question, that answer being
still the session's. B, resumed, comes back in Accept edits and writes without a
question; C comes back in Ask, and its next turn says why; D comes back in Read only.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
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
SWITCH_WHILE_HELD = "切换中"  # the message the hook holds until the test has switched the mode
# A UserPromptSubmit hook that holds that message: it says it has it (`held`), then waits
# for the test's `release`, so the mode is switched at a known point of the turn.
HOLDING_HOOK = """\
import json, pathlib, sys, time
if {word!r} in json.load(sys.stdin)["prompt"]:
    pathlib.Path({held!r}).touch()
    deadline = time.monotonic() + 300
    while not pathlib.Path({release!r}).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
"""


def hold_a_message(config_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    held, release = tmp_path / "held", tmp_path / "release"
    script = tmp_path / "hold.py"
    script.write_text(
        HOLDING_HOOK.format(word=SWITCH_WHILE_HELD, held=str(held), release=str(release)), encoding="utf-8"
    )
    hook = {"type": "command", "command": f"{sys.executable} {script}", "timeout": 300}
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}), encoding="utf-8"
    )
    return held, release


async def until_exists(path: Path) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.02)


async def prompt(conn: Any, session_id: str, words: str) -> str:
    reply = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[text_block(words)]), 120)
    return reply.stop_reason


def mode_option(options: list[Any]) -> str:
    return next(getattr(o, "root", o) for o in options if getattr(o, "root", o).id == "mode").current_value


def tool_answer(server: ScriptedOpenAIServer, index: int) -> str:
    message = server.chat_requests[index].messages[-1]
    assert message["role"] == "tool"
    return str(message["content"])


async def first_process(
    env: dict[str, str], workdir: Path, server: ScriptedOpenAIServer, held: Path, release: Path
) -> list[str]:
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

        d = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        turn = asyncio.ensure_future(prompt(conn, d, SWITCH_WHILE_HELD))
        await until_exists(held)
        await conn.set_session_mode(session_id=d, mode_id="read-only")
        release.touch()
        assert await turn == "end_turn"
    return [a, b, c, d]


async def second_process(env: dict[str, str], workdir: Path, server: ScriptedOpenAIServer, ids: list[str]):
    a, b, c, d = ids
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
        assert "read-only" in tool_answer(server, 8)
        assert [u.status for u in editor.of_kind("tool_call_update")] == ["failed"]
        # Back in Ask, the "always" answer is still the session's: no question.
        await conn.set_session_mode(session_id=a, mode_id="ask")
        assert await prompt(conn, a, "@run_bash_command 再打个招呼") == "end_turn"
        assert editor.permissions == [] and "again-a" in tool_answer(server, 10)

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

        held_back = await conn.load_session(cwd=str(workdir), session_id=d, mcp_servers=[])
        assert held_back.modes.current_mode_id == "read-only"


def stored_modes(data_dir: Path) -> dict[str, str | None]:
    with closing(sqlite3.connect(data_dir / "sessions.db")) as conn:
        return dict(conn.execute("SELECT id, approval_mode FROM chat_sessions").fetchall())


def test_an_editor_sessions_mode_comes_back_when_it_is_loaded_again(
    cli_env: dict[str, str], workdir: Path, openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    held, release = hold_a_message(Path(cli_env["GENERALAGENT_CONFIG_DIR"]), tmp_path)
    trust_folder(workdir)  # Accept edits writes only where writing is allowed: a trusted folder
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "echo kept-a"})]),
        Reply(text="打过招呼了。"),
        Reply(tool_calls=[ToolCall("now", {})]),
        Reply(text="现在是下午。"),
        Reply(text="你好，B。"),
        Reply(text="你好，C。"),
        Reply(text="切好了。"),
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
    ids = asyncio.run(first_process(env, workdir, openai_server, held, release))
    a, b, c, d = ids
    assert stored_modes(data_dir) == {a: "read-only", b: "accept-edits", c: "ask", d: "read-only"}
    with closing(sqlite3.connect(data_dir / "sessions.db")) as conn, conn:
        conn.execute("UPDATE chat_sessions SET approval_mode = ? WHERE id = ?", (GONE, c))
    asyncio.run(second_process(env, workdir, openai_server, ids))
    assert openai_server.pending_replies == 0
    # What the user chose last is what is kept; the fallen-back session is stored as it runs.
    assert stored_modes(data_dir) == {a: "ask", b: "accept-edits", c: "ask", d: "read-only"}
