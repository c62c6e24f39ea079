"""The terminal's client of a served deployment (agent/remote.py) against an Aegra replica
(the `aegra` extra, PostgreSQL behind it) as well as LangGraph Server: the same stream
turned into the same typed events, a question answered through the client, a thread
listed and resumed. The LangGraph Server cases are in test_remote_client.py.

Runs when GENERALAGENT_TEST_DATABASE_URL names a server (tests/support/postgres.py) and the
`aegra` extra is installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from generalAgent.agent.events import ApprovalRequest, TextChunk, ToolStart
from generalAgent.agent.remote import RemoteAgent, RemoteError
from tests.support.aegra_server import aegra_replicas, fresh_database, needs_aegra
from tests.support.langgraph_server import KEYS
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.postgres import server_url
from tests.support.turn_views import RecordingView

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def replica(
    model_server: ScriptedOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    needs_aegra()
    root = tmp_path_factory.mktemp("aegra-client")
    shared = root / "workspaces"
    with fresh_database(server_url()) as database:
        extra = {"SHARED_WORKSPACES_DIR": str(shared)}
        with aegra_replicas(model_server, root, database, extra, count=1) as [url]:
            yield url, shared


def test_a_turn_with_a_question_runs_on_aegra_as_on_langgraph_server(
    replica: tuple[str, Path], model_server: ScriptedOpenAIServer
) -> None:
    url, shared = replica
    model_server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/notes.txt", "content": "first"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/notes.txt", "content": "second"})]),
        Reply(text="Both notes written on Aegra."),
    )
    with RemoteAgent(url, KEYS["alice"]) as agent:
        agent.check()
        thread = agent.new_thread("Notes on Aegra (aegra-1)")
        notes = shared / thread / "temp" / "notes.txt"
        seen: list[str] = []

        def decide(request: ApprovalRequest) -> str:
            seen.append(notes.read_text())
            return "yes"

        view = RecordingView(decide)
        result = agent.run_turn(thread, "Notes on Aegra (aegra-1)", view)
        assert result.ok, result.error
        assert result.answer == "Both notes written on Aegra."
        assert "".join(e.text for e in view.of(TextChunk)) == result.answer
        assert [e.name for e in view.of(ToolStart)] == ["write_file", "write_file"]
        assert [r.tool for r in view.asked] == ["write_file"] and seen == ["first"]
        assert notes.read_text() == "second"
        assert result.usage.model_calls == 3

        assert thread in [t.id for t in agent.threads()]
        model_server.add(Reply(text="Still here."))
        assert (
            agent.run_turn(agent.thread(thread).id, "Again (aegra-1b)", RecordingView()).answer
            == "Still here."
        )
    with RemoteAgent(url, KEYS["bob"]) as agent:
        assert thread not in [t.id for t in agent.threads()]
        with pytest.raises(RemoteError):
            agent.thread(thread)
    with RemoteAgent(url, "wrong-token") as agent, pytest.raises(RemoteError, match="refused the token"):
        agent.check()
