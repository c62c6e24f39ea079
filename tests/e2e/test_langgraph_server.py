"""The graph served unchanged by LangGraph Server (`langgraph dev`), driven with `langgraph_sdk`.

One in-memory server is started for the module on a loopback port, with `langgraph.json`
from the repository (its custom auth included: two users with API keys) and the model
pointed at the local OpenAI-compatible test server; each test creates its own thread,
runs it through the SDK and reads the stored state back.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client

from tests.support.environment import without_agent_variables
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
GRAPH_ID = "generalAgent"
MAX_LOOPS = 4
STARTUP_SECONDS = 90
# The users of the served deployment (SERVER_API_KEYS) and their keys.
KEYS = {"alice": "key-alice-0123456789", "bob": "key-bob-9876543210"}


def client_of(url: str, user: str = "alice"):
    """An SDK client that proves it is `user` (the key goes in x-api-key)."""
    return get_sync_client(url=url, api_key=KEYS[user], timeout=60)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(strict_history=True) as server:
        yield server


@pytest.fixture(scope="module")
def langgraph_url(
    model_server: ScriptedOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    workdir = tmp_path_factory.mktemp("langgraph-server")
    port = free_port()
    # Module-scoped: the per-test environment cleanup has not run yet, so clean here.
    env = {
        k: v
        for k, v in without_agent_variables(os.environ).items()
        if not k.startswith(("LANGSMITH", "LANGCHAIN"))
    }
    env.update(
        GENERALAGENT_CONFIG_DIR=str(workdir / "user-config"),
        MODEL_NAME="test-model",
        OPENAI_API_KEY="sk-test-SECRET-0123456789",
        OPENAI_BASE_URL=model_server.base_url,
        MODEL_MAX_RETRIES="0",
        MODEL_TIMEOUT="20",
        MAX_LOOPS=str(MAX_LOOPS),
        DATA_DIR=str(workdir / "data"),
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGSMITH_TRACING="false",
        SERVER_API_KEYS=",".join(f"{user}:{key}" for user, key in KEYS.items()),
    )
    log = (workdir / "server.log").open("w")
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "langgraph"),
            "dev",
            "--config",
            str(ROOT / "langgraph.json"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-browser",
            "--no-reload",
        ],
        cwd=workdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"langgraph dev exited ({process.returncode}):\n{(workdir / 'server.log').read_text()[-3000:]}"
                )
            try:
                if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start in {STARTUP_SECONDS} s")
            time.sleep(0.3)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def stored_messages(client, thread_id: str) -> list[dict]:
    return client.threads.get_state(thread_id)["values"]["messages"]


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
