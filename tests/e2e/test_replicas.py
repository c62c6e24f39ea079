"""Two replicas of the served deployment on Aegra, one PostgreSQL behind both: a team's
deployment (docs/deployment.md). Each replica is its own process with its own DATA_DIR; the
threads and checkpoints (Aegra's), the search store (SEARCH_DATABASE_URL) and the
workspaces folder (SHARED_WORKSPACES_DIR) are what they share.

Alice's thread starts on one replica and goes on through the other with its history and
its files; a PDF she searched through the first is found by her knowledge search through
the second with its page cited; Bob, through the second, finds the team's note and never
her private document or note; a run naming Alice in its config is refused.

Runs when GENERALAGENT_TEST_DATABASE_URL names a server (tests/support/postgres.py) and the
`aegra` extra is installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from httpx import HTTPStatusError

from tests.support.aegra_server import aegra_replicas, fresh_database, needs_aegra
from tests.support.documents import make_pdf
from tests.support.langgraph_server import GRAPH_ID, client_of
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.postgres import fresh_schema_url, server_url

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(strict_history=True) as server:
        yield server


@pytest.fixture(scope="module")
def deployment(
    model_server: ScriptedOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[list[str], Path, str]]:
    """The two replicas' URLs, the workspaces folder and the search store they share."""
    needs_aegra()
    root = tmp_path_factory.mktemp("replicas")
    shared = root / "workspaces"
    with fresh_database(server_url()) as database:
        for store in fresh_schema_url():
            extra = {
                "SEARCH_DATABASE_URL": store,
                "SHARED_WORKSPACES_DIR": str(shared),
                "SERVER_TEAMS": "team:alice,team:bob",
            }
            with aegra_replicas(model_server, root, database, extra) as urls:
                yield urls, shared, store


def answer_of(client, thread_id: str) -> str:
    messages = client.threads.get_state(thread_id)["values"]["messages"]
    answers = [str(m["content"]) for m in messages if m["type"] == "tool"]
    assert answers, messages
    return answers[-1]


def run(
    url: str,
    user: str,
    model_server: ScriptedOpenAIServer,
    call: ToolCall,
    thread_id: str | None = None,
    **extra,
):
    """One run of `user` on the replica at `url` whose model makes `call`: (thread id, the tool's answer)."""
    model_server.add(Reply(tool_calls=[call]), Reply(text="Done."))
    client = client_of(url, user)
    thread_id = thread_id or client.threads.create()["thread_id"]
    client.runs.wait(
        thread_id,
        GRAPH_ID,
        input={"messages": [{"role": "user", "content": f"{call.name}, please"}]},
        **extra,
    )
    return thread_id, answer_of(client, thread_id)


def test_a_thread_and_its_files_move_between_replicas(
    deployment: tuple[list[str], Path, str], model_server: ScriptedOpenAIServer
) -> None:
    (first, second), _shared, _store = deployment
    thread, written = run(
        first,
        "alice",
        model_server,
        ToolCall("write_file", {"path": "outputs/plan.txt", "content": "walrus plan 42"}),
    )
    assert "plan.txt" in written, written
    _, read = run(second, "alice", model_server, ToolCall("read_file", {"path": "outputs/plan.txt"}), thread)
    assert "walrus plan 42" in read, read
    messages = client_of(second, "alice").threads.get_state(thread)["values"]["messages"]
    assert [m["type"] for m in messages].count("human") == 2  # the history from the first replica
    with pytest.raises(HTTPStatusError) as refused:  # not Bob's thread, on either replica
        client_of(second, "bob").threads.get_state(thread)
    assert refused.value.response.status_code in (403, 404)


def test_a_document_indexed_through_one_replica_is_found_through_the_other(
    deployment: tuple[list[str], Path, str], model_server: ScriptedOpenAIServer
) -> None:
    (first, second), shared, store = deployment
    client = client_of(first, "alice")
    thread = client.threads.create()["thread_id"]
    uploads = shared / thread / "uploads"  # what an upload to the thread writes
    uploads.mkdir(parents=True)
    make_pdf(uploads / "q3.pdf", [["Intro page."], ["第三季度营收增长百分之二十，walrus sales doubled."]])
    search = ToolCall("search_file", {"file_path": "uploads/q3.pdf", "query": "营收增长"})
    _, searched = run(first, "alice", model_server, search, thread)
    assert "page 2" in searched, searched
    indexed = indexed_documents(store)
    # The same file through the other replica: found in the shared index, not indexed again.
    _, again = run(second, "alice", model_server, search, thread)
    assert "page 2" in again, again
    assert indexed_documents(store) == indexed and len(indexed) == 1

    shared_pdf = ToolCall(
        "add_knowledge", {"title": "Q3 report", "file_path": "uploads/q3.pdf", "space": "team"}
    )
    assert "Saved" in run(first, "alice", model_server, shared_pdf, thread)[1]
    private = ToolCall("add_knowledge", {"title": "Salary", "content": "Alice earns 9000 walrus coins."})
    assert "Saved" in run(first, "alice", model_server, private)[1]

    _, bobs = run(second, "bob", model_server, ToolCall("search_knowledge", {"query": "营收增长 walrus"}))
    assert "Q3 report" in bobs and "page 2" in bobs, bobs
    assert "9000" not in bobs, bobs
    # Asked for it by its own words, on either replica, Bob still gets nothing of her note.
    for url in (first, second):
        _, asked = run(
            url,
            "bob",
            model_server,
            ToolCall("search_knowledge", {"query": "Salary Alice earns walrus coins"}),
        )
        assert "9000" not in asked and "] Salary" not in asked, asked  # the query itself is echoed
    _, alices = run(second, "alice", model_server, ToolCall("search_knowledge", {"query": "walrus coins"}))
    assert "9000" in alices, alices


def indexed_documents(store_url: str) -> list[tuple[str, str]]:
    """(file hash, when indexed) of every document in the team's store."""
    import psycopg

    with psycopg.connect(store_url) as conn:
        return [tuple(row) for row in conn.execute("SELECT file_hash, indexed_at FROM documents ORDER BY 1")]


def test_a_run_that_names_another_user_or_approves_itself_is_refused(
    deployment: tuple[list[str], Path, str], model_server: ScriptedOpenAIServer
) -> None:
    """Aegra keeps a client's identity keys in a run's config and asks the auth handler only
    for POST /threads/{id}/runs: the front door (graph/aegra_app.py) refuses them on every
    way to start a run."""
    (_first, second), _shared, _store = deployment
    bob = client_of(second, "bob")
    thread = bob.threads.create()["thread_id"]
    message = {"messages": [{"role": "user", "content": "search my notes"}]}
    attempts = [
        {"input": message, "config": {"configurable": {"user_id": "alice"}}},
        {"input": message, "config": {"configurable": {"langgraph_auth_user": {"identity": "alice"}}}},
        {"input": {**message, "approved_tools": ["run_bash_command"]}},
        {"input": message, "config": {"configurable": {"approved_tools": ["run_bash_command"]}}},
    ]
    for attempt in attempts:
        for start in (bob.runs.wait, bob.runs.create):
            with pytest.raises(HTTPStatusError) as refused:
                start(thread, GRAPH_ID, **attempt)
            assert refused.value.response.status_code == 403, attempt
        with pytest.raises(HTTPStatusError) as streamed:
            list(bob.runs.stream(thread, GRAPH_ID, **attempt))
        assert streamed.value.response.status_code == 403, attempt
    with pytest.raises(HTTPStatusError) as written:
        bob.threads.update_state(thread, {"approved_tools": ["run_bash_command"]})
    assert written.value.response.status_code == 403
