"""`generalagent acp` driven as Zed drives it: the SDK's client over a pipe, the model server behind.

One editor session: a turn whose tool call is approved, one whose call is refused, one
cancelled while the answer streams; then the process ends, a new one loads the session
(the conversation is replayed) and the next turn carries the whole history.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.acp_editor import EditorClient, spawn
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e

THOUGHT = "先看看用户要什么。"


async def first_process(env: dict[str, str], workdir: Path, server: ScriptedOpenAIServer) -> str:
    client = EditorClient()
    async with spawn(env, workdir, client) as (conn, process):
        init = await conn.initialize(protocol_version=1)
        assert init.agent_capabilities.load_session is True
        session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
        options = [getattr(o, "root", o) for o in session.config_options]
        model = next(o for o in options if o.id == "model")
        assert model.category == "model" and model.current_value == "deepseek-chat"

        # 1. A tool call that needs approval, allowed once: it runs, its result is shown.
        client.answers = ["allow-once"]
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("@run_bash_command 打个招呼")]
        )
        assert reply.stop_reason == "end_turn"
        assert len(client.permissions) == 1
        asked, options = client.permissions[0]
        assert asked.title.startswith("run_bash_command(") and "echo hello-acp" in asked.title
        assert {o.kind for o in options} >= {"allow_once", "reject_once"}
        start = client.of_kind("tool_call")[0]
        assert start.kind == "execute" and start.status == "pending"
        assert start.raw_input == {"command": "echo hello-acp"}
        done = [u for u in client.of_kind("tool_call_update") if u.status == "completed"]
        assert len(done) == 1 and "hello-acp" in done[0].content[0].content.text
        assert client.text("agent_thought_chunk").startswith(THOUGHT)
        assert client.text() == "它说了 hello-acp。"

        # 2. The next call is refused: nothing runs, the call fails, the model is told.
        client.updates.clear()
        client.answers = ["reject"]
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("再建一个文件")])
        assert reply.stop_reason == "end_turn"
        assert len(client.permissions) == 2
        failed = [u for u in client.of_kind("tool_call_update") if u.status == "failed"]
        assert len(failed) == 1
        assert not list(workdir.rglob("refused.txt"))
        tool_answer = server.chat_requests[3].messages[-1]
        assert tool_answer["role"] == "tool" and "refused" in tool_answer["content"].lower()

        # 3. Cancelled while the answer streams.
        client.updates.clear()

        async def cancel_on_first_chunk(update: Any) -> None:
            if update.session_update == "agent_message_chunk":
                client.on_update = None
                await conn.cancel(session_id=session.session_id)

        client.on_update = cancel_on_first_chunk
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block("讲个很长的故事")]), 60
        )
        assert reply.stop_reason == "cancelled"
        assert client.text().startswith("从前")
        assert len(client.permissions) == 2  # each approval was asked exactly once
    return session.session_id


async def second_process(env: dict[str, str], workdir: Path, session_id: str) -> EditorClient:
    client = EditorClient()
    async with spawn(env, workdir, client) as (conn, process):
        await conn.initialize(protocol_version=1)
        listed = await conn.list_sessions(cwd=str(workdir))
        assert [info.session_id for info in listed.sessions] == [session_id]
        assert listed.sessions[0].title == "@run_bash_command 打个招呼"
        await conn.load_session(cwd=str(workdir), session_id=session_id, mcp_servers=[])
        replayed = client.text("user_message_chunk")
        assert "打个招呼" in replayed and "讲个很长的故事" in replayed
        assert "它说了 hello-acp。" in client.text()
        client.updates.clear()
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("我们刚才做了什么？")])
        assert reply.stop_reason == "end_turn"
        assert client.text() == "你让我打招呼，它说了 hello-acp。"

        # 5. Stop while a permission is asked, by an editor that never answers it: the turn
        # still ends, and the command does not run.
        client.conn = conn
        client.answers = ["cancel and never answer"]
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("@run_bash_command 再建一个文件")]), 60
        )
        assert reply.stop_reason == "cancelled"
        assert not list(workdir.rglob("never.txt"))
    return client


def test_an_editor_session_with_approvals_a_cancel_and_a_reload(
    cli_env: dict[str, str], workdir: Path
) -> None:
    with ScriptedOpenAIServer(dialect="deepseek", strict_history=True) as server:
        server.add(
            Reply(
                reasoning=THOUGHT, tool_calls=[ToolCall("run_bash_command", {"command": "echo hello-acp"})]
            ),
            Reply(text="它说了 hello-acp。"),
            Reply(tool_calls=[ToolCall("run_bash_command", {"command": "touch refused.txt"})]),
            Reply(text="好的，不建了。"),
            Reply(text="从前有座山，山里有座庙。" * 50, chunk_chars=4, stall_after_chunks=3),
            Reply(text="你让我打招呼，它说了 hello-acp。"),
            Reply(tool_calls=[ToolCall("run_bash_command", {"command": "touch never.txt"})]),
            Reply(text="(not reached: the turn is cancelled before the model is asked again)"),
        )
        env = {
            **cli_env,
            "OPENAI_BASE_URL": server.base_url,
            "MODEL_PROVIDER": "deepseek",
            "MODEL_NAME": "deepseek-chat",
            "MODEL_THINKING": "on",
        }
        session_id = asyncio.run(first_process(env, workdir, server))
        asyncio.run(second_process(env, workdir, session_id))
        last = server.chat_requests[5]  # the resumed session's first request
        contents = [str(m.get("content")) for m in last.messages]
        assert any("hello-acp" in c for c in contents) and any("打个招呼" in c for c in contents)
        assert not last.history_problems


async def hooked_session(env: dict[str, str], workdir: Path) -> EditorClient:
    client = EditorClient()
    async with spawn(env, workdir, client) as (conn, process):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
        blocked = await conn.prompt(session_id=session.session_id, prompt=[text_block("部署到生产环境")])
        assert blocked.stop_reason == "refusal"
        thoughts = client.text("agent_thought_chunk")
        assert (
            "started:" + session.session_id in thoughts
        )  # the SessionStart hook's stdout, at the first turn
        assert "blocked this message" in thoughts and "no deploys from the editor" in thoughts
        client.updates.clear()
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("你好")])
        assert reply.stop_reason == "end_turn" and client.text() == "你好！"
    return client


def test_the_users_hooks_run_for_editor_turns(cli_env: dict[str, str], workdir: Path, tmp_path: Path) -> None:
    """SessionStart, UserPromptSubmit and Stop hooks run for an editor's session as for the chat's."""
    stopped = tmp_path / "stopped.log"
    started = tmp_path / "started.py"  # what a SessionStart hook says on stderr (exit 2) is shown
    started.write_text(
        "import json, sys\nprint('started:' + json.load(sys.stdin)['session_id'], file=sys.stderr); sys.exit(2)\n",
        encoding="utf-8",
    )
    guard = tmp_path / "guard.py"
    guard.write_text(
        "import json, sys\n"
        "if '部署' in json.load(sys.stdin)['prompt']:\n"
        "    print('no deploys from the editor', file=sys.stderr); sys.exit(2)\n",
        encoding="utf-8",
    )
    config = Path(cli_env["GENERALAGENT_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    hooks = {
        "SessionStart": [{"hooks": [{"type": "command", "command": f"{sys.executable} {started}"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"{sys.executable} {guard}"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": f"cat >> {stopped}"}]}],
    }
    (config / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    with ScriptedOpenAIServer() as server:
        server.add(Reply(text="你好！"))
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        asyncio.run(hooked_session(env, workdir))
        assert len(server.chat_requests) == 1  # the blocked message never reached the model
        assert "部署" not in json.dumps(server.chat_requests[0].messages, ensure_ascii=False)
    (stop,) = stopped.read_text(encoding="utf-8").splitlines()  # once: after the turn that ran
    assert json.loads(stop)["hook_event_name"] == "Stop"
    # Listed with its project folder, so `-c` there continues it.
    with closing(sqlite3.connect(Path(cli_env["DATA_DIR"]) / "sessions.db")) as conn:
        assert conn.execute("SELECT folder FROM chat_sessions").fetchall() == [(str(workdir.resolve()),)]
