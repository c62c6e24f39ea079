"""A replica that dies in the middle of a run (docs/deployment.md, "When a replica dies").

Aegra 0.6 runs a run in the replica that received it, with no queue another replica could
take it from: when that process dies, the run is lost. The thread is not: every step the
run finished is checkpointed in PostgreSQL, so the other replica shows the thread as it
was after its last finished step (here the user's message, the model's tool call and the
tool's answer, with the file the tool wrote in the shared workspaces folder), and the next
message sent there continues from that checkpoint.

Runs when GENERALAGENT_TEST_DATABASE_URL names a server and the `aegra` extra is installed.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.support.aegra_server import aegra_replica, fresh_database, needs_aegra
from tests.support.langgraph_server import GRAPH_ID, client_of
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.postgres import fresh_schema_url, server_url

pytestmark = pytest.mark.e2e


def chat_requests(server: ScriptedOpenAIServer) -> int:
    return sum(1 for r in server.requests if r.path.endswith("/chat/completions"))


def test_a_thread_whose_replica_dies_mid_run_continues_from_its_last_checkpoint_on_the_other(
    tmp_path: Path,
) -> None:
    needs_aegra()
    with (
        ScriptedOpenAIServer(strict_history=True) as model_server,
        fresh_database(server_url()) as database,
    ):
        for store in fresh_schema_url():
            extra = {"SEARCH_DATABASE_URL": store, "SHARED_WORKSPACES_DIR": str(tmp_path / "workspaces")}
            pids: dict[str, int] = {}
            with (
                aegra_replica(model_server, tmp_path / "replica-0", database, extra, pids) as first,
                aegra_replica(model_server, tmp_path / "replica-1", database, extra) as second,
            ):
                alice = client_of(first, "alice")
                thread = alice.threads.create()["thread_id"]
                # The model writes a file, then never answers its second call: the run is
                # in the middle of its second step when its replica is killed.
                model_server.add(
                    Reply(
                        tool_calls=[
                            ToolCall("write_file", {"path": "outputs/plan.txt", "content": "walrus 42"})
                        ]
                    ),
                    Reply(hang=True),
                )
                before = chat_requests(model_server)
                alice.runs.create(
                    thread, GRAPH_ID, input={"messages": [{"role": "user", "content": "Write the plan."}]}
                )
                deadline = time.monotonic() + 120
                while chat_requests(model_server) < before + 2:
                    assert time.monotonic() < deadline, "the run never reached its second model call"
                    time.sleep(0.2)
                time.sleep(1.0)  # the tool step's checkpoint is written as the next step starts
                os.killpg(pids[first], signal.SIGKILL)

                other = client_of(second, "alice")
                state = other.threads.get_state(thread)
                kinds = [m["type"] for m in state["values"]["messages"]]
                assert kinds == ["human", "ai", "tool"], kinds  # the last finished step
                assert "plan.txt" in str(state["values"]["messages"][-1]["content"])
                assert (tmp_path / "workspaces").rglob("plan.txt")
                # Aegra 0.6 keeps the lost run "running" and the thread "busy" (nothing marks
                # them: docs/deployment.md says so), yet takes the thread's next message on the
                # other replica, whose run starts from that checkpoint.
                [lost] = other.runs.list(thread)
                assert lost["status"] == "running" and other.threads.get(thread)["status"] == "busy"
                model_server.add(Reply(text="The plan is written: walrus 42."))
                other.runs.wait(
                    thread, GRAPH_ID, input={"messages": [{"role": "user", "content": "Did it work?"}]}
                )
                assert [r["status"] for r in other.runs.list(thread)] == ["success", "running"]
                messages = other.threads.get_state(thread)["values"]["messages"]
                assert [m["type"] for m in messages] == ["human", "ai", "tool", "human", "ai"]
                assert "walrus 42" in str(messages[-1]["content"])
                found = [p.read_text() for p in (tmp_path / "workspaces").rglob("plan.txt")]
                assert found == ["walrus 42"]
