"""Whose knowledge a served run searches: the user LangGraph Server authenticated for the
request, never the server's SEARCH_USER nor anything the client sends.

One `langgraph dev` (tests/support/langgraph_server.py) with SERVER_TEAMS putting Alice and
Bob in the team `team`, and SEARCH_USER=alice in its environment, the setting a terminal
uses: a served run must not take it. Alice saves a private note and a team note through
her runs; Bob's search (his own key, through the SDK) finds the team note and never the
private one, even when his request's config names Alice.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.langgraph_server import GRAPH_ID, client_of, langgraph_dev
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e

PRIVATE_NOTE = "Alice's salary is 9000 walrus coins."
TEAM_NOTE = "The walrus launch moves to March."


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(strict_history=True) as server:
        yield server


@pytest.fixture(scope="module")
def served_url(model_server: ScriptedOpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    extra = {"SERVER_TEAMS": "team:alice,team:bob", "SEARCH_USER": "alice", "SEARCH_TEAMS": "team"}
    with langgraph_dev(model_server, tmp_path_factory.mktemp("served-spaces"), extra) as url:
        yield url


def run_tool(
    url: str, user: str, model_server: ScriptedOpenAIServer, call: ToolCall, **config: object
) -> str:
    """One run of `user` whose model makes `call`; the tool's answer."""
    model_server.add(Reply(tool_calls=[call]), Reply(text="Done."))
    client = client_of(url, user)
    thread = client.threads.create()
    client.runs.wait(
        thread["thread_id"],
        GRAPH_ID,
        input={"messages": [{"role": "user", "content": f"{call.name} please"}]},
        **config,
    )
    messages = client.threads.get_state(thread["thread_id"])["values"]["messages"]
    answers = [str(m["content"]) for m in messages if m["type"] == "tool"]
    assert answers, messages
    return answers[-1]


def test_bob_never_sees_alices_private_space_and_both_share_the_team_space(
    served_url: str, model_server: ScriptedOpenAIServer
) -> None:
    saved = run_tool(
        served_url,
        "alice",
        model_server,
        ToolCall("add_knowledge", {"title": "Salary", "content": PRIVATE_NOTE}),
    )
    assert "Saved" in saved, saved
    shared = run_tool(
        served_url,
        "alice",
        model_server,
        ToolCall("add_knowledge", {"title": "Launch", "content": TEAM_NOTE, "space": "team"}),
    )
    assert "Saved" in shared, shared

    bobs = run_tool(served_url, "bob", model_server, ToolCall("search_knowledge", {"query": "walrus"}))
    assert "March" in bobs and "9000" not in bobs, bobs
    # His request's config naming Alice changes nothing: the server sets who he is.
    spoofed = run_tool(
        served_url,
        "bob",
        model_server,
        ToolCall("search_knowledge", {"query": "walrus salary"}),
        config={"configurable": {"langgraph_auth_user_id": "alice"}},
    )
    assert "9000" not in spoofed, spoofed
    refused = run_tool(
        served_url,
        "bob",
        model_server,
        ToolCall("add_knowledge", {"title": "x", "content": "y", "space": "ops"}),
    )
    assert "ops" in refused and "Saved" not in refused, refused

    alices = run_tool(
        served_url, "alice", model_server, ToolCall("search_knowledge", {"query": "walrus salary"})
    )
    assert "9000" in alices, alices
