"""The graph served unchanged by LangGraph Server (`langgraph dev`), driven with `langgraph_sdk`.

One in-memory server is started for the module on a loopback port, with `langgraph.json`
from the repository (its custom auth included: two users with API keys) and the model
pointed at the local OpenAI-compatible test server; each test creates its own thread,
runs it through the SDK and reads the stored state back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.langgraph_server import (
    GRAPH_ID,
    MAX_LOOPS,
    client_of,
    needs_the_served_shell,
    stored_messages,
)
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e


def assert_every_call_answered(messages: list[dict]) -> None:
    for index, message in enumerate(messages):
        ids = [c["id"] for c in message.get("tool_calls") or []]
        if not ids:
            continue
        run = []
        for following in messages[index + 1 :]:
            if following["type"] != "tool":
                break
            run.append(following["tool_call_id"])
        assert sorted(run) == sorted(ids), f"calls {ids} answered by {run}"


def requests_of(server: ScriptedOpenAIServer, marker: str) -> list[RecordedRequest]:
    return [r for r in server.chat_requests if any(marker in str(m.get("content")) for m in r.messages)]


def test_a_run_streams_tokens_and_stores_the_thread(
    langgraph_url: str, model_server: ScriptedOpenAIServer
) -> None:
    model_server.add(
        Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})]),
        Reply(text="It is noon in UTC.", prompt_tokens=1500, cached_tokens=1024),
    )
    client = client_of(langgraph_url)
    thread = client.threads.create()
    tokens, updated_nodes = [], []
    for part in client.runs.stream(
        thread["thread_id"],
        GRAPH_ID,
        input={"messages": [{"role": "user", "content": "What time is it? (server-1)"}]},
        stream_mode=["messages-tuple", "updates"],
    ):
        if part.event == "messages":
            chunk, metadata = part.data
            if metadata.get("langgraph_node") == "planner" and isinstance(chunk.get("content"), str):
                tokens.append(chunk["content"])
        elif part.event == "updates":
            updated_nodes += list(part.data)
        assert part.event != "error", part.data
    assert "".join(tokens) == "It is noon in UTC."
    # `now` needs no approval, so the graph goes straight from the planner to the tools (no
    # approval checkpoint: one write less per step).
    assert updated_nodes == ["planner", "tools", "planner"]

    state = client.threads.get_state(thread["thread_id"])
    assert state["next"] == []
    messages = state["values"]["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai"]
    assert messages[2]["name"] == "now" and "UTC" in messages[2]["content"]
    assert messages[3]["usage_metadata"]["input_token_details"]["cache_read"] == 1024
    assert_every_call_answered(messages)
    sent = requests_of(model_server, "(server-1)")
    assert len(sent) == 2 and "now" in sent[0].tool_names
    assert not model_server.invalid_history_requests


def test_each_run_has_its_own_loop_budget(langgraph_url: str, model_server: ScriptedOpenAIServer) -> None:
    """A model that never stops calling tools ends in finalize, run after run on one thread."""

    zones = ["UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York"]

    def keep_calling(request: RecordedRequest) -> Reply:
        if not request.tool_names:  # finalize binds no tools
            return Reply(text="Stopping here: budget spent.")
        # A different call every time: the budget, not the repetition guard, ends the run.
        zone = zones[len(request.messages) % len(zones)]
        return Reply(tool_calls=[ToolCall("now", {"timezone": zone})])

    model_server.responder = keep_calling
    try:
        client = client_of(langgraph_url)
        thread = client.threads.create()
        for turn in ("first (server-2)", "second (server-2)"):
            before = len(model_server.chat_requests)
            final = client.runs.wait(
                thread["thread_id"], GRAPH_ID, input={"messages": [{"role": "user", "content": turn}]}
            )
            calls = model_server.chat_requests[before:]
            assert final["messages"][-1]["content"] == "Stopping here: budget spent."
            assert len(calls) == MAX_LOOPS + 1, f"{turn}: {len(calls)} model calls"
            assert calls[-1].tool_names == []
    finally:
        model_server.responder = None
    messages = stored_messages(client, thread["thread_id"])
    assert_every_call_answered(messages)
    skipped = [m for m in messages if m["type"] == "tool" and "step budget" in m["content"]]
    assert len(skipped) == 2
    assert not model_server.invalid_history_requests


def test_command_approval_is_an_interrupt_the_client_answers(
    langgraph_url: str, model_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    needs_the_served_shell()
    model_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "echo from-the-server"})]),
        Reply(text="The command printed from-the-server."),
    )
    client = client_of(langgraph_url)
    thread = client.threads.create()
    client.runs.wait(
        thread["thread_id"],
        GRAPH_ID,
        input={
            "messages": [{"role": "user", "content": "@run_bash_command say hello (server-3)"}],
            "mentions": ["run_bash_command"],
            "new_mentions": ["run_bash_command"],
        },
    )
    paused = client.threads.get_state(thread["thread_id"])
    assert paused["next"] == ["approval"]
    pause = paused["tasks"][0]["interrupts"][0]["value"]
    [request] = pause["requests"]
    assert pause["type"] == "approval" and request["tool"] == "run_bash_command"
    assert request["args"] == {"command": "echo from-the-server"}

    final = client.runs.wait(thread["thread_id"], GRAPH_ID, command={"resume": {request["call_id"]: "yes"}})
    assert final["messages"][-1]["content"] == "The command printed from-the-server."
    messages = stored_messages(client, thread["thread_id"])
    assert messages[-2]["type"] == "tool" and messages[-2]["content"] == "exit status 0\nfrom-the-server"
    assert_every_call_answered(messages)
    assert not model_server.invalid_history_requests


@pytest.mark.parametrize("where", ["config", "context"])
def test_a_client_key_the_graph_does_not_know_is_ignored(
    where: str, langgraph_url: str, model_server: ScriptedOpenAIServer
) -> None:
    """A client may put keys of its own in the run's config or context (`search_user`, a
    `scope` of JSON): the run goes ahead with the server's own context; none of it is taken."""
    marker = f"(unknown-key-{where})"
    model_server.add(Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})]), Reply(text="Noon."))
    sent = {"search_user": "alice", "scope": {"folder": "/"}, "render_query": "x"}
    client = client_of(langgraph_url, "bob")
    thread = client.threads.create()
    result = client.runs.wait(
        thread["thread_id"],
        GRAPH_ID,
        input={"messages": [{"role": "user", "content": f"What time is it? {marker}"}]},
        **({"config": {"configurable": sent}} if where == "config" else {"context": sent}),
    )
    assert "__error__" not in result, result
    messages = stored_messages(client, thread["thread_id"])
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai"], messages
    assert "UTC" in messages[2]["content"] and messages[3]["content"] == "Noon."
    assert len(requests_of(model_server, marker)) == 2
