"""Opening and closing many editor sessions leaves nothing of them in the process.

The ACP server runs in this process (the SDK's connection over a socket pair, as over
stdio), so what it keeps can be looked at: after 200 sessions opened and closed
(`session/close`), a tenth of them with a turn, the only sessions left are the one kept
open, its folder's agent is the only one loaded, no object of a closed session is alive,
and no dict or set anywhere in the process has a closed session's id as a key.
"""

from __future__ import annotations

import asyncio
import gc
import socket
from pathlib import Path
from typing import Any

import pytest
from acp import connect_to_agent, run_agent, text_block

from tests.support.acp_editor import EditorClient
from tests.support.environment import decline_if_plain
from tests.support.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.e2e

SESSIONS = 200
TURN_EVERY = 10


def keyed_by(ids: set[str]) -> list[str]:
    """The types of the live dicts and sets (of any object) holding one of `ids` as a key
    (a tuple key holding one counts too), `ids` itself aside."""
    found = []

    def holds(key: Any) -> bool:
        if isinstance(key, str):
            return key in ids
        return isinstance(key, tuple) and any(isinstance(part, str) and part in ids for part in key)

    gc.collect()
    containers = gc.get_objects()
    for owner in containers:
        # Dicts of atomic values are not tracked by the collector: reach them through their owner.
        for value in (owner, *gc.get_referents(owner)):
            if value is ids or not isinstance(value, dict | set | frozenset):
                continue
            if any(holds(key) for key in list(value)):
                found.append(f"{type(owner).__name__} → {type(value).__name__}")
    return found


@pytest.fixture
def session_folder(
    cli_env: dict[str, str],
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    openai_server: ScriptedOpenAIServer,
) -> Path:
    """The CLI's environment, `workdir` (not trusted) as the current folder, and the
    model's reply to each of the turns the sessions take."""
    for name, value in cli_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(workdir)
    decline_if_plain(workdir)
    for _ in range(SESSIONS // TURN_EVERY):
        openai_server.add(Reply(text="好的。"))
    return workdir


def test_two_hundred_sessions_opened_and_closed_leave_nothing_behind(session_folder: Path) -> None:
    from generalAgent.cli.acp.server import AcpSession, GeneralAgentACP
    from generalAgent.config.settings import load_settings
    from generalAgent.tools.run_context import SessionScope

    workdir = session_folder
    server = GeneralAgentACP(load_settings())

    async def run() -> tuple[str, set[str]]:
        agent_side, editor_side = socket.socketpair()
        reader, writer = await asyncio.open_unix_connection(sock=agent_side, limit=50 * 1024 * 1024)
        serving = asyncio.create_task(run_agent(server, writer, reader, use_unstable_protocol=True))
        their_reader, their_writer = await asyncio.open_unix_connection(sock=editor_side)
        conn = connect_to_agent(EditorClient(), their_writer, their_reader, use_unstable_protocol=True)
        await conn.initialize(protocol_version=1)
        kept = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        closed: set[str] = set()
        for index in range(SESSIONS):
            session_id = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            if index % TURN_EVERY == 0:
                reply = await conn.prompt(session_id=session_id, prompt=[text_block("你好")])
                assert reply.stop_reason == "end_turn"
            await conn.close_session(session_id=session_id)
            closed.add(session_id)
        their_writer.close()
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        return kept, closed

    try:
        kept, closed = asyncio.run(run())
        assert len(closed) == SESSIONS
        assert list(server.sessions) == [kept]
        assert server.agents.in_use() == {None: 1}  # the kept session's, the folder not trusted
        gc.collect()
        live_sessions = [o for o in gc.get_objects() if isinstance(o, AcpSession)]
        live_scopes = [o for o in gc.get_objects() if isinstance(o, SessionScope)]
        assert [s.id for s in live_sessions] == [kept]
        assert {scope.session_id for scope in live_scopes} <= {kept}
        assert keyed_by(closed) == []
    finally:
        server.close()


def test_sessions_a_program_closes_leave_nothing_in_its_agent(session_folder: Path) -> None:
    """The Python API (docs/api.md): 200 sessions opened and closed, a tenth with a turn."""
    from generalAgent.agent import Agent

    closed: set[str] = set()
    with Agent.from_environment() as agent:
        for index in range(SESSIONS):
            session = agent.open_session()
            if index % TURN_EVERY == 0:
                assert session.send("你好").answer == "好的。"
            session.close()
            closed.add(session.id)
        del session
        assert keyed_by(closed) == []
        assert agent._sessions == []
