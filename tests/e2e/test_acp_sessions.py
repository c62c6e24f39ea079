"""Several editor sessions at once over one `generalagent acp` process.

Three sessions prompt at the same time against the scripted model server: one runs a
short command, one streams a long answer, one runs a long command and is cancelled while
it runs. The cancel reaches that session only: its command is killed and its prompt ends
as cancelled, while the other two finish (the other command is not killed) and their
answers stream while each other's do. A second case: the hooks a session's tools run are
those of the session's own folder, not of the folder the server was started in.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.acp_editor import EditorClient, spawn
from tests.support.mcp_config import trust_folder
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e

LONG_COMMAND = "sleep 41 && touch C-late.txt"  # a marker no other process has in its command line
STORY = "从前有座山，山里有座庙。" * 12


class SessionsEditor(EditorClient):
    """Records each session's updates with the moment they came; allows every call once."""

    def __init__(self) -> None:
        super().__init__()
        self.by_session: dict[str, list[tuple[float, Any]]] = {}
        self.asked: dict[str, float] = {}

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any):
        self.asked[session_id] = time.monotonic()
        self.answers = ["allow-once"]
        return await super().request_permission(options, session_id, tool_call, **kwargs)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.by_session.setdefault(session_id, []).append((time.monotonic(), update))

    def updates_of(self, session_id: str, kind: str) -> list[tuple[float, Any]]:
        return [(at, u) for at, u in self.by_session.get(session_id, []) if u.session_update == kind]

    def answer_of(self, session_id: str) -> str:
        return "".join(u.content.text for _, u in self.updates_of(session_id, "agent_message_chunk"))


def marker_of(request: RecordedRequest) -> str:
    first_user = next(m for m in request.messages if m.get("role") == "user")
    return next(mark for mark in ("[A]", "[B]", "[C]") if mark in str(first_user.get("content")))


def respond(request: RecordedRequest) -> Reply:
    answered = any(m.get("role") == "tool" for m in request.messages)
    mark = marker_of(request)
    if mark == "[A]":
        if not answered:
            return Reply(tool_calls=[ToolCall("run_bash_command", {"command": "sleep 3 && echo A-done"})])
        return Reply(text="A 完成了。")
    if mark == "[B]":
        return Reply(text=STORY, chunk_chars=4, chunk_delay=0.05)  # about 1.8 s of streaming
    if not answered:
        return Reply(tool_calls=[ToolCall("run_bash_command", {"command": LONG_COMMAND})])
    return Reply(text="(not reached: C is cancelled while its command runs)")


def running_commands(marker: str) -> list[int]:
    """The processes whose command line holds `marker` (the long command's sleep)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in line:
            found.append(int(entry.name))
    return found


async def three_sessions(env: dict[str, str], workdir: Path) -> dict[str, Any]:
    client = SessionsEditor()
    async with spawn(env, workdir, client) as (conn, _process):
        await conn.initialize(protocol_version=1)
        ids = {}
        for mark in ("[A]", "[B]", "[C]"):
            ids[mark] = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id

        async def prompt(mark: str) -> tuple[str, float]:
            text = f"@run_bash_command {mark} 开始"
            reply = await conn.prompt(session_id=ids[mark], prompt=[text_block(text)])
            return reply.stop_reason, time.monotonic()

        started = time.monotonic()
        runs = {mark: asyncio.ensure_future(prompt(mark)) for mark in ids}
        while ids["[C]"] not in client.asked:  # C's command is allowed: it starts now
            assert time.monotonic() - started < 60, "C was never asked about its command"
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)
        assert running_commands("sleep 41"), "C's command is running"
        cancelled_at = time.monotonic()
        await conn.cancel(session_id=ids["[C]"])
        outcomes = dict(zip(runs, await asyncio.wait_for(asyncio.gather(*runs.values()), 120), strict=True))
        return {"client": client, "ids": ids, "outcomes": outcomes, "cancelled_at": cancelled_at}


def test_three_editor_sessions_prompt_at_once_and_a_cancel_reaches_only_its_own(
    cli_env: dict[str, str], workdir: Path
) -> None:
    with ScriptedOpenAIServer(responder=respond) as server:
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        run = asyncio.run(three_sessions(env, workdir))
    client, ids, outcomes = run["client"], run["ids"], run["outcomes"]
    a, b, c = (ids[mark] for mark in ("[A]", "[B]", "[C]"))

    stop_c, ended_c = outcomes["[C]"]
    assert stop_c == "cancelled"
    assert ended_c - run["cancelled_at"] < 20  # stopped, not waited for (the command sleeps 41 s)
    assert not running_commands("sleep 41")  # its command was killed
    assert not (workdir / "C-late.txt").exists()

    # The others finished as if nothing happened: A's command ran to its end.
    assert outcomes["[A]"][0] == "end_turn" and outcomes["[B]"][0] == "end_turn"
    done = [u for _, u in client.updates_of(a, "tool_call_update") if u.status == "completed"]
    assert len(done) == 1 and "A-done" in done[0].content[0].content.text
    assert client.answer_of(a) == "A 完成了。"
    assert client.answer_of(b) == STORY

    # At once, not one after another: B's answer streamed while A's turn was still running.
    first_b_chunk = client.updates_of(b, "agent_message_chunk")[0][0]
    assert first_b_chunk < outcomes["[A]"][1]
    assert c in client.asked and a in client.asked


def test_a_sessions_tools_run_the_hooks_of_its_own_folder(
    cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    """The server starts in one trusted folder with a PreToolUse hook; a session opened on
    another folder does not run that hook, a session on the server's folder does."""
    # Inside the folder: a folder's hooks run in the sandbox, which may write only there.
    log = workdir / "pre-tool-use.log"
    hook_folder = workdir / ".generalagent"
    hook_folder.mkdir()
    hooks = {"PreToolUse": [{"matcher": "now", "hooks": [{"type": "command", "command": f"cat >> {log}"}]}]}
    (hook_folder / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    other = tmp_path / "other"
    other.mkdir()
    trust_folder(workdir)

    async def sessions(env: dict[str, str]) -> None:
        client = EditorClient()
        async with spawn(env, workdir, client) as (conn, _process):
            await conn.initialize(protocol_version=1)
            for folder in (other, workdir):
                session = await conn.new_session(cwd=str(folder), mcp_servers=[])
                reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("几点了？")])
                assert reply.stop_reason == "end_turn"
                ran = (
                    [json.loads(line)["session_id"] for line in log.read_text().splitlines()]
                    if log.exists()
                    else []
                )
                if folder == other:
                    assert ran == []  # the server's folder's hook is not this session's
                else:
                    assert ran == [session.session_id]

    with ScriptedOpenAIServer() as server:
        for _ in range(2):
            server.add(Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})]), Reply(text="正午。"))
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        asyncio.run(sessions(env))


def test_a_tool_calls_location_is_the_file_it_really_reads(cli_env: dict[str, str], workdir: Path) -> None:
    """`notes.txt` of a trusted project folder is read there: the editor is pointed at that
    file, not at a path under the session's workspace."""
    (workdir / "notes.txt").write_text("季度目标：营收增长 12%。\n", encoding="utf-8")
    trust_folder(workdir)

    async def session(env: dict[str, str]) -> EditorClient:
        client = EditorClient()
        async with spawn(env, workdir, client) as (conn, _process):
            await conn.initialize(protocol_version=1)
            opened = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            reply = await conn.prompt(session_id=opened.session_id, prompt=[text_block("看看 notes.txt")])
            assert reply.stop_reason == "end_turn"
        return client

    with ScriptedOpenAIServer() as server:
        server.add(
            Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]), Reply(text="目标是 12%。")
        )
        client = asyncio.run(session({**cli_env, "OPENAI_BASE_URL": server.base_url}))
    (start,) = client.of_kind("tool_call")
    assert [location.path for location in start.locations] == [str((workdir / "notes.txt").resolve())]
    done = [u for u in client.of_kind("tool_call_update") if u.status == "completed"]
    assert "营收增长" in done[0].content[0].content.text


def test_a_retry_notice_reaches_only_the_session_whose_call_retries(
    cli_env: dict[str, str], workdir: Path
) -> None:
    """B streams a long answer; meanwhile A's request gets a 503 and the client retries it:
    A's editor session is told, B's is not (the notice follows the call, not the process)."""
    seen: dict[str, int] = {}

    def respond(request: RecordedRequest) -> Reply:
        mark = marker_of(request)
        seen[mark] = seen.get(mark, 0) + 1
        if mark == "[A]":
            return Reply(status=503, retry_after=1) if seen[mark] == 1 else Reply(text="A 好了。")
        return Reply(text=STORY, chunk_chars=2, chunk_delay=0.06)  # about 4 s of streaming

    async def sessions(env: dict[str, str]) -> SessionsEditor:
        client = SessionsEditor()
        async with spawn(env, workdir, client) as (conn, _process):
            await conn.initialize(protocol_version=1)
            a = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            b = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            run_b = asyncio.ensure_future(conn.prompt(session_id=b, prompt=[text_block("[B] 讲个故事")]))
            started = time.monotonic()
            while not client.updates_of(b, "agent_message_chunk"):
                assert time.monotonic() - started < 60, "B never streamed"
                await asyncio.sleep(0.05)
            reply_a = await conn.prompt(session_id=a, prompt=[text_block("[A] 你好")])
            assert not run_b.done(), "B was still streaming while A retried"
            reply_b = await asyncio.wait_for(run_b, 60)
            assert reply_a.stop_reason == reply_b.stop_reason == "end_turn"
            client.ids = {"[A]": a, "[B]": b}  # type: ignore[attr-defined]
        return client

    with ScriptedOpenAIServer(responder=respond) as server:
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url, "MODEL_MAX_RETRIES": "2"}
        client = asyncio.run(sessions(env))
    ids = client.ids  # type: ignore[attr-defined]

    def thoughts(session_id: str) -> str:
        return "".join(u.content.text for _, u in client.updates_of(session_id, "agent_thought_chunk"))

    assert "retry 1 of 2" in thoughts(ids["[A]"])
    assert "retry" not in thoughts(ids["[B]"])
    assert client.answer_of(ids["[A]"]) == "A 好了。" and client.answer_of(ids["[B]"]) == STORY
