"""`generalagent acp` with an editor that offers its files, its terminals and MCP servers.

The editor (tests/support/acp_editor.py, the SDK's client over a pipe) has notes.md open
with unsaved text: the agent reads that text, and its edit lands through the editor after
one approval; a refused write never reaches it. A command runs in the editor's terminal,
without the agent's keys in its environment. The approval mode changes what is asked:
"accept-edits" writes without a question, "read-only" refuses a write without one. A
second session gets a stdio MCP server from the editor and calls its tool; a command the
user stops is killed in the editor's terminal. A new process resumes the first session
(no replay) and its next turn carries the whole history.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import EnvVariable, McpServerStdio

from tests.support.acp_editor import FileEditor, spawn
from tests.support.mcp_config import SERVER_SCRIPT, trust_folder
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e


def tool_answer(server: ScriptedOpenAIServer, index: int) -> str:
    message = server.chat_requests[index].messages[-1]
    assert message["role"] == "tool"
    return str(message["content"])


async def prompt(conn: Any, session_id: str, words: str) -> str:
    reply = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[text_block(words)]), 60)
    return reply.stop_reason


async def first_process(env: dict[str, str], workdir: Path, server: ScriptedOpenAIServer, notes: Path) -> str:
    editor = FileEditor()
    notes_md = str(workdir / "notes.md")
    editor.buffers[notes_md] = "# notes\nunsaved line\n"
    async with spawn(env, workdir, editor) as (conn, process):
        await conn.initialize(protocol_version=1, client_capabilities=FileEditor.capabilities)
        session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        assert session.modes.current_mode_id == "ask"
        assert {m.id for m in session.modes.available_modes} == {"ask", "accept-edits", "read-only"}

        # 1. A file open in the editor is read as its buffer, unsaved text and all.
        assert await prompt(conn, sid, "读一下 notes.md") == "end_turn"
        assert editor.reads == [notes_md]
        assert "unsaved line" in tool_answer(server, 1) and "disk line" not in tool_answer(server, 1)

        # 2. An edit, approved once, goes through the editor, applied to that buffer.
        editor.answers = ["allow-once"]
        assert await prompt(conn, sid, "把 unsaved 改成 edited") == "end_turn"
        assert len(editor.permissions) == 1
        asked = editor.permissions[0][0]
        assert "+edited line" in asked.content[0].content.text
        assert editor.writes == [(notes_md, "# notes\nedited line\n")]
        assert (workdir / "notes.md").read_text(encoding="utf-8") == "# notes\nedited line\n"

        # 3. A refused write never reaches the editor.
        editor.answers = ["reject"]
        assert await prompt(conn, sid, "再建一个 refused.md") == "end_turn"
        assert len(editor.permissions) == 2 and len(editor.writes) == 1
        assert not (workdir / "refused.md").exists()

        # 4. A command runs in the editor's terminal, shown with its call, keys left out.
        editor.updates.clear()
        editor.answers = ["allow-once"]
        assert await prompt(conn, sid, "@run_bash_command 跑一下") == "end_turn"
        assert len(editor.permissions) == 3
        command = editor.commands[0]
        assert command[:2] == ["env", "-i"] and command[-3:-1] == ["bash", "-c"]
        assert not any(word.startswith("OPENAI_API_KEY=") or "SECRET" in word for word in command)
        answer = tool_answer(server, 7)
        assert "exit status 0\nfrom-terminal\nkey=none" in answer
        shown = [
            u for u in editor.of_kind("tool_call_update") if u.content and u.content[0].type == "terminal"
        ]
        assert shown and shown[-1].status == "completed" and editor.released == ["term-1"]

        # 5. "Accept edits": the next write runs without a question.
        await conn.set_session_mode(session_id=sid, mode_id="accept-edits")
        assert await prompt(conn, sid, "写 auto.md") == "end_turn"
        assert len(editor.permissions) == 3
        assert editor.writes[-1] == (str(workdir / "auto.md"), "auto\n")

        # 6. "Read only": a write is refused without a question and nothing is written.
        editor.updates.clear()
        options = await conn.set_config_option(session_id=sid, config_id="mode", value="read-only")
        mode = next(
            getattr(o, "root", o) for o in options.config_options if getattr(o, "root", o).id == "mode"
        )
        assert mode.current_value == "read-only"
        assert [u.current_mode_id for u in editor.of_kind("current_mode_update")] == ["read-only"]
        assert await prompt(conn, sid, "写 ro.md") == "end_turn"
        assert len(editor.permissions) == 3 and not (workdir / "ro.md").exists()
        assert "refused" in tool_answer(server, 11).lower()
        assert [u.status for u in editor.of_kind("tool_call_update")] == ["failed"]
        usage = editor.of_kind("usage_update")
        assert usage and usage[-1].used > 0 and usage[-1].size > usage[-1].used

        # 7. A second session with the editor's own MCP server: its tool asks, then runs.
        served = McpServerStdio(
            name="notes",
            command=sys.executable,
            args=[str(SERVER_SCRIPT)],
            env=[EnvVariable(name="NOTES_FILE", value=str(notes))],
        )
        other = await conn.new_session(cwd=str(workdir), mcp_servers=[served])
        editor.answers = ["allow-once"]
        assert await prompt(conn, other.session_id, "记一笔") == "end_turn"
        assert "notes__write_note" in server.chat_requests[12].tool_names
        assert len(editor.permissions) == 4 and "notes__write_note" in editor.permissions[3][0].title
        assert notes.read_text(encoding="utf-8") == "来自编辑器\n"

        # 8. Stopped while a command runs in the editor's terminal: the command is killed.
        editor.answers = ["allow-once"]

        async def stop_when_shown(update: Any) -> None:
            if (
                update.session_update == "tool_call_update"
                and update.content
                and update.content[0].type == "terminal"
            ):
                editor.on_update = None
                await conn.cancel(session_id=other.session_id)

        editor.on_update = stop_when_shown
        assert await prompt(conn, other.session_id, "@run_bash_command 睡一会") == "cancelled"
        sleeper = editor.terminals["term-2"]
        await asyncio.wait_for(sleeper.process.wait(), 60)
        assert sleeper.process.returncode != 0
        for _ in range(600):  # the agent releases the terminal right after killing it
            if "term-2" in editor.released:
                break
            await asyncio.sleep(0.1)
        assert "term-2" in editor.released
    return sid


async def second_process(env: dict[str, str], workdir: Path, session_id: str) -> None:
    editor = FileEditor()
    async with spawn(env, workdir, editor) as (conn, process):
        await conn.initialize(protocol_version=1, client_capabilities=FileEditor.capabilities)
        resumed = await conn.resume_session(cwd=str(workdir), session_id=session_id, mcp_servers=[])
        assert resumed.modes.current_mode_id == "read-only"  # the mode step 6 left it in
        assert editor.updates == []  # resumed, not replayed
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("我们做了什么？")])
        assert reply.stop_reason == "end_turn"
        assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0  # as the provider reported
        assert reply.usage.total_tokens == reply.usage.input_tokens + reply.usage.output_tokens
        assert editor.text() == "读了、改了、跑了。"


def test_an_editor_with_its_files_terminals_modes_and_mcp_server(
    cli_env: dict[str, str], workdir: Path, openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    (workdir / "notes.md").write_text("# notes\ndisk line\n", encoding="utf-8")
    trust_folder(workdir)
    notes = tmp_path / "notes.txt"
    openai_server.add(
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.md"})]),
        Reply(text="读完了。"),
        Reply(
            tool_calls=[
                ToolCall(
                    "edit_file",
                    {"path": "notes.md", "old_string": "unsaved line", "new_string": "edited line"},
                )
            ]
        ),
        Reply(text="改好了。"),
        Reply(tool_calls=[ToolCall("write_file", {"path": "refused.md", "content": "no\n"})]),
        Reply(text="好的，不写了。"),
        Reply(
            tool_calls=[
                ToolCall(
                    "run_bash_command", {"command": "echo from-terminal; echo key=${OPENAI_API_KEY:-none}"}
                )
            ]
        ),
        Reply(text="跑完了。"),
        Reply(tool_calls=[ToolCall("write_file", {"path": "auto.md", "content": "auto\n"})]),
        Reply(text="写好了。"),
        Reply(tool_calls=[ToolCall("write_file", {"path": "ro.md", "content": "x\n"})]),
        Reply(text="只读模式下不能写。"),
        Reply(tool_calls=[ToolCall("notes__write_note", {"text": "来自编辑器"})]),
        Reply(text="记好了。"),
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "sleep 60"})]),
        Reply(text="读了、改了、跑了。"),
    )
    env = {**cli_env, "OPENAI_BASE_URL": openai_server.base_url}
    session_id = asyncio.run(first_process(env, workdir.resolve(), openai_server, notes))
    asyncio.run(second_process(env, workdir.resolve(), session_id))
    history = [str(m.get("content")) for m in openai_server.chat_requests[-1].messages]
    assert any("读一下 notes.md" in c for c in history) and any("from-terminal" in c for c in history)
