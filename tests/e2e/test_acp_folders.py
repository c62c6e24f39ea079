"""Editor sessions in different folders over one `generalagent acp` process.

Each session gets what its own folder carries, once trusted: its AGENTS.md (the model
reads it in the request), the skills its .env names (in the skills catalog) and the MCP
servers of its mcp.json (real stdio servers, whose tools the model calls); a folder not trusted gives its sessions none of it, and the
folder the server was started in is one folder like the others. A second case: when a
folder's trust changes, the agent its session leaves is closed (its MCP server process
ends) while another session's turn is still running, which then finishes.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.acp_editor import EditorClient, spawn
from tests.support.mcp_config import stdio_entry, trust_folder, write_mcp_json
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.processes import gone

pytestmark = pytest.mark.e2e

MARKERS = {
    "start": "RULE-start-4410",
    "one": "RULE-one-5521",
    "two": "RULE-two-6632",
    "three": "RULE-three-7743",
}
SKILL_MARKERS = {
    "start": "SKILL-start-1",
    "one": "SKILL-one-2",
    "two": "SKILL-two-3",
    "three": "SKILL-three-4",
}
SERVERS = {"start": "zero", "one": "alpha", "two": "beta", "three": "gamma"}


def project(folder: Path, name: str, *, trusted: bool) -> Path:
    """A folder with its AGENTS.md, an mcp.json naming its own stdio MCP server, and a .env
    naming its own skills folder with one skill."""
    folder.mkdir(exist_ok=True)
    (folder / "AGENTS.md").write_text(MARKERS[name] + "\n", encoding="utf-8")
    skill = folder / "skills" / f"{name}-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}-skill\ndescription: Use for {SKILL_MARKERS[name]} work.\n---\nSteps.\n",
        encoding="utf-8",
    )
    (folder / ".env").write_text("SKILLS_DIR=skills\n", encoding="utf-8")
    write_mcp_json(folder, {SERVERS[name]: stdio_entry("--quick", trust=True)})
    if trusted:
        trust_folder(folder)
    else:
        from generalAgent.config.trust import TrustStore

        TrustStore().remember(folder, False)
    return folder


def system_text(request: RecordedRequest) -> str:
    return "\n".join(str(m.get("content")) for m in request.messages if m.get("role") == "system")


def pid_tools(request: RecordedRequest) -> list[str]:
    return sorted(name for name in request.tool_names if name.endswith("__pid"))


def answered(request: RecordedRequest) -> dict[str, str]:
    return {
        str(m.get("tool_call_id")): str(m.get("content")) for m in request.messages if m.get("role") == "tool"
    }


def pid_in(answer: str) -> int:
    """The process id a `pid` tool answered (inside the tool-output frame the model reads)."""
    found = re.search(r"(?m)^(\d+)$", answer)
    assert found is not None, answer
    return int(found.group(1))


def call_the_pid_tools(request: RecordedRequest) -> Reply:
    """The model calls every `pid` tool it is offered, then says which processes answered."""
    last = request.messages[-1]
    if last.get("role") == "tool":
        return Reply(text="pids " + " ".join(sorted(answered(request).values())))
    tools = pid_tools(request)
    if tools:
        return Reply(tool_calls=[ToolCall(name, {}) for name in tools])
    return Reply(text="no tools yet")


class AllowingEditor(EditorClient):
    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any):
        self.answers = ["allow-once"]
        return await super().request_permission(options, session_id, tool_call, **kwargs)


async def prompt(conn: Any, session_id: str, text: str) -> str:
    try:
        reply = await conn.prompt(session_id=session_id, prompt=[text_block(text)])
    except Exception as exc:
        raise AssertionError(repr(getattr(exc, "data", exc))) from exc
    return str(reply.stop_reason)


async def until_tools(conn: Any, server: ScriptedOpenAIServer, session_id: str, tag: str) -> RecordedRequest:
    """Prompt the session until a request of it offered MCP tools (its servers start in the
    background and join at a turn's first call); that request."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert await prompt(conn, session_id, f"{tag} 用你的工具") == "end_turn"
        mine = [r for r in server.chat_requests if tag in str(r.messages)]
        offered = [r for r in mine if pid_tools(r)]
        if offered:
            return offered[-1]
        await asyncio.sleep(0.2)
    raise AssertionError(f"{tag}: no MCP tools were offered within 60 s")


def test_each_editor_session_gets_its_own_folders_instructions_and_mcp_servers(
    cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    project(workdir, "start", trusted=True)  # the server's own folder: no special treatment
    one = project(tmp_path / "one", "one", trusted=True)
    two = project(tmp_path / "two", "two", trusted=True)
    three = project(tmp_path / "three", "three", trusted=False)
    env = {**cli_env, "SANDBOX": "off"}

    async def run(server: ScriptedOpenAIServer) -> dict[str, RecordedRequest]:
        seen: dict[str, RecordedRequest] = {}
        async with spawn({**env, "OPENAI_BASE_URL": server.base_url}, workdir, AllowingEditor()) as (
            conn,
            _p,
        ):
            await conn.initialize(protocol_version=1)
            ids = {
                name: (await conn.new_session(cwd=str(folder), mcp_servers=[])).session_id
                for name, folder in (("one", one), ("two", two), ("three", three))
            }
            seen["one"], seen["two"] = await asyncio.gather(
                until_tools(conn, server, ids["one"], "[one]"), until_tools(conn, server, ids["two"], "[two]")
            )
            for _ in range(2):  # the untrusted folder's server would have had time to start
                assert await prompt(conn, ids["three"], "[three] 用你的工具") == "end_turn"
            seen["three"] = [r for r in server.chat_requests if "[three]" in str(r.messages)][-1]
        return seen

    with ScriptedOpenAIServer(responder=call_the_pid_tools) as server:
        seen = asyncio.run(run(server))
        requests = server.chat_requests

    # Each trusted folder's session reads its own AGENTS.md, offers the skills its .env
    # names, and calls its own server's tools.
    for name in ("one", "two"):
        others = [other for other in MARKERS if other != name]
        assert MARKERS[name] in system_text(seen[name]) and SKILL_MARKERS[name] in system_text(seen[name])
        assert not any(MARKERS[other] in system_text(seen[name]) for other in others)
        assert not any(SKILL_MARKERS[other] in system_text(seen[name]) for other in others)
        assert pid_tools(seen[name]) == [f"{SERVERS[name]}__pid"]
    # Their tools ran in two different real processes.
    pids = {
        name: next(
            r.messages[-1]["content"]
            for r in requests
            if f"[{name}]" in str(r.messages) and r.messages[-1].get("role") == "tool"
        )
        for name in ("one", "two")
    }
    assert pid_in(str(pids["one"])) != pid_in(str(pids["two"]))
    # The untrusted folder's session: none of its folder, nor of any other.
    assert not any(marker in system_text(seen["three"]) for marker in MARKERS.values())
    assert not any(marker in system_text(seen["three"]) for marker in SKILL_MARKERS.values())
    assert pid_tools(seen["three"]) == []


def test_a_trust_change_closes_the_agent_its_session_left_while_another_turn_runs(
    cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    """Session A works in the server's folder, trusted, with its MCP server; session B, in
    another folder, is in the middle of a turn (its model call held open). The user
    stops trusting A's folder: at A's next prompt its agent is left and closed, its MCP
    server process ends, and B's turn then finishes."""
    from generalAgent.config.trust import TrustStore

    project(workdir, "start", trusted=True)
    other = tmp_path / "other"
    other.mkdir()
    TrustStore().remember(other, False)
    release_b = threading.Event()
    b_waiting = threading.Event()

    def respond(request: RecordedRequest) -> Reply:
        if "[B]" in str(request.messages):
            b_waiting.set()
            release_b.wait(120)
            return Reply(text="B 完成了。")
        return call_the_pid_tools(request)

    async def run(server: ScriptedOpenAIServer) -> tuple[int, bool, bool, str]:
        # B's model call is held open while A's folder changes: longer than the usual 10 s.
        env = {**cli_env, "SANDBOX": "off", "OPENAI_BASE_URL": server.base_url, "MODEL_TIMEOUT": "120"}
        async with spawn(env, workdir, AllowingEditor()) as (conn, _p):
            await conn.initialize(protocol_version=1)
            a = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            b = (await conn.new_session(cwd=str(other), mcp_servers=[])).session_id
            await until_tools(conn, server, a, "[A]")
            answers = [r.messages[-1] for r in server.chat_requests if r.messages[-1].get("role") == "tool"]
            pid = pid_in(str(answers[0]["content"]))
            assert not gone(pid)
            b_turn = asyncio.create_task(prompt(conn, b, "[B] 慢慢来"))
            await asyncio.to_thread(b_waiting.wait, 60)
            TrustStore().remember(workdir, False)  # as `generalagent trust --no` in a terminal
            assert await prompt(conn, a, "[A] 再来") == "end_turn"
            deadline = time.monotonic() + 30
            while not gone(pid) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            closed, b_running = gone(pid), not b_turn.done()
            release_b.set()
            return pid, closed, b_running, await b_turn

    with ScriptedOpenAIServer(responder=respond) as server:
        try:
            _pid, closed, b_running, b_stop = asyncio.run(run(server))
        finally:
            release_b.set()
        a_after = [r for r in server.chat_requests if "[A] 再来" in str(r.messages[-1])][-1]

    assert closed, "the MCP server of the agent the session left still runs"
    assert b_running and b_stop == "end_turn"
    # Not trusted any more: A's folder's instructions and servers are gone from its requests.
    assert MARKERS["start"] not in system_text(a_after)
    assert pid_tools(a_after) == []


def pids_by_tool(request: RecordedRequest) -> dict[str, int]:
    """The pid each `pid` tool answered in the request's last tool round, by tool name."""
    names = {
        str(call.get("id")): str((call.get("function") or {}).get("name"))
        for message in request.messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    }
    return {
        names[call_id]: pid_in(answer) for call_id, answer in answered(request).items() if call_id in names
    }


def test_an_editors_mcp_servers_end_with_the_last_session_that_passed_them(
    cli_env: dict[str, str], workdir: Path
) -> None:
    """Session A passes two stdio servers in session/new, `solo` and `shared`; session B,
    in the same folder (so on the same agent), passes `shared` too. A closes while B's turn
    is in the middle of its model call: `solo`'s process ends, B's turn finishes, and B's
    next turn still calls `shared`, the same process. Before, an editor's servers lived as
    long as the agent: `solo` ran on after its session had closed."""
    import sys

    from acp.schema import McpServerStdio

    from generalAgent.config.trust import TrustStore
    from tests.support.mcp_config import SERVER_SCRIPT

    TrustStore().remember(workdir, False)
    release_b = threading.Event()
    b_waiting = threading.Event()

    def respond(request: RecordedRequest) -> Reply:
        if "[B] 慢慢来" in str(request.messages[-1]):
            b_waiting.set()
            release_b.wait(120)
            return Reply(text="B 完成了。")
        return call_the_pid_tools(request)

    def editor_server(name: str) -> McpServerStdio:
        return McpServerStdio(name=name, command=sys.executable, args=[str(SERVER_SCRIPT), "--quick"], env=[])

    async def run(server: ScriptedOpenAIServer) -> tuple[dict[str, int], bool, bool, str, dict[str, int]]:
        env = {**cli_env, "SANDBOX": "off", "OPENAI_BASE_URL": server.base_url, "MODEL_TIMEOUT": "120"}
        async with spawn(env, workdir, AllowingEditor()) as (conn, _p):
            await conn.initialize(protocol_version=1)
            a = (
                await conn.new_session(
                    cwd=str(workdir), mcp_servers=[editor_server("solo"), editor_server("shared")]
                )
            ).session_id
            b = (await conn.new_session(cwd=str(workdir), mcp_servers=[editor_server("shared")])).session_id
            await until_tools(conn, server, a, "[A]")
            a_pids = pids_by_tool(server.chat_requests[-1])
            assert set(a_pids) == {"solo__pid", "shared__pid"}
            assert not any(gone(pid) for pid in a_pids.values())
            b_turn = asyncio.create_task(prompt(conn, b, "[B] 慢慢来"))
            await asyncio.to_thread(b_waiting.wait, 60)
            await conn.close_session(session_id=a)
            deadline = time.monotonic() + 30
            while not gone(a_pids["solo__pid"]) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            solo_gone, b_running = gone(a_pids["solo__pid"]), not b_turn.done()
            release_b.set()
            b_stop = await b_turn
            await until_tools(conn, server, b, "[B] 再来")
            return a_pids, solo_gone, b_running, b_stop, pids_by_tool(server.chat_requests[-1])

    with ScriptedOpenAIServer(responder=respond) as server:
        try:
            a_pids, solo_gone, b_running, b_stop, b_pids = asyncio.run(run(server))
        finally:
            release_b.set()

    assert solo_gone, "the editor's server of the closed session still runs"
    assert b_running and b_stop == "end_turn"
    assert b_pids == {"shared__pid": a_pids["shared__pid"]}


def test_a_session_kept_in_a_folders_own_data_home_is_loaded_again(
    cli_env: dict[str, str], workdir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    """A trusted project whose .env says DATA_DIR=data keeps its sessions there. An editor
    session opened in it, then loaded by a new process started elsewhere (the process's
    own data home does not hold it), is found and replayed. Before, session/load looked in
    the process's catalog only: "Resource not found"."""
    from generalAgent.config.sources import user_config_dir
    from generalAgent.config.trust import TrustStore
    from tests.support.mcp_config import trust_folder

    # The user's data home from their own .env (the environment would win over the folder's).
    env = {name: value for name, value in cli_env.items() if name != "DATA_DIR"}
    user_config_dir().mkdir(parents=True, exist_ok=True)
    (user_config_dir() / ".env").write_text(f"DATA_DIR={tmp_path / 'home-data'}\n", encoding="utf-8")
    project_folder = tmp_path / "project"
    project_folder.mkdir()
    (project_folder / ".env").write_text("DATA_DIR=data\n", encoding="utf-8")
    trust_folder(project_folder)
    TrustStore().remember(workdir, False)
    openai_server.add(Reply(text="记住了：蓝色。"))

    async def first() -> str:
        async with spawn(env, workdir, EditorClient()) as (conn, _p):
            await conn.initialize(protocol_version=1)
            session_id = (await conn.new_session(cwd=str(project_folder), mcp_servers=[])).session_id
            assert await prompt(conn, session_id, "记住：蓝色") == "end_turn"
            return str(session_id)

    async def second(session_id: str) -> str:
        editor = EditorClient()
        async with spawn(env, workdir, editor) as (conn, _p):
            await conn.initialize(protocol_version=1)
            await conn.load_session(cwd=str(project_folder), session_id=session_id, mcp_servers=[])
            return editor.text()

    session_id = asyncio.run(first())
    assert (project_folder / "data" / "sessions.db").is_file()
    home_catalog = tmp_path / "home-data" / "sessions.db"
    if home_catalog.exists():  # the process's own data home does not hold it
        from generalAgent.sessions import SessionCatalog

        catalog = SessionCatalog(home_catalog)
        assert catalog.get(session_id) is None
        catalog.close()
    assert asyncio.run(second(session_id)) == "记住了：蓝色。"
