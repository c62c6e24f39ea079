"""Property: whatever ids the model gives its calls (repeated, empty), each call of a batch
is asked about on its own and runs if and only if the user approved it, exactly once.

Answers used to be keyed by call id, the last one winning: with two calls under one id,
the "yes" for one approved the other too. The batches here are drawn with ids from a
tiny pool that includes "" and go through the real graph and `run_turn`.
"""

from __future__ import annotations

import io
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, ToolMessage
from rich.console import Console

from generalAgent.agent.turns import run_turn
from generalAgent.cli.render import TerminalView
from generalAgent.config.settings import Settings, load_settings
from generalAgent.graph.tool_arguments import unique_call_ids
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.history import stored_history_problems
from tests.support.scripted_model import ScriptedChatModel, ai

GUARDED = "run_bash_command"
_sessions = itertools.count()


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, ScriptedChatModel, Any]:
    config = load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
        paths={"data_dir": tmp_path_factory.mktemp("data")},
    )
    model = ScriptedChatModel()
    return config, model, build_test_agent(config, model)[1]


batches = st.lists(
    st.tuples(st.sampled_from(["", "dup", "call_1", "call_1-2"]), st.booleans()), min_size=1, max_size=5
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches)
def test_each_call_runs_iff_approved_exactly_once(agent, batch: list[tuple[str, bool]]) -> None:
    config, model, graph = agent
    session = f"by-position-{next(_sessions)}"
    calls = [
        {
            "name": GUARDED,
            "args": {"command": f"echo c{i} >> outputs/runs.log"},
            "id": call_id,
            "type": "tool_call",
        }
        for i, (call_id, _) in enumerate(batch)
    ]
    model.replies = [AIMessage(content="", tool_calls=calls), ai("done")]
    answers = ["yes" if approved else "no" for _, approved in batch]
    asked: list[str] = []

    def approve(request: dict[str, Any]) -> str:
        asked.append(request["args"]["command"])
        return answers[len(asked) - 1]

    result = run_turn(
        graph,
        thread(session),
        user_turn("go", config, session_id=session, mentions=[GUARDED]),
        TerminalView(Console(file=io.StringIO()), approver=approve),
        lambda exc: None,
    )
    assert result.ok and result.answer == "done", result.error
    assert asked == [call["args"]["command"] for call in calls]  # each asked once, in order
    log = config.paths.workspaces_dir / session / "outputs" / "runs.log"
    ran = sorted(log.read_text().split()) if log.exists() else []  # parallel calls: any order
    assert ran == [f"c{i}" for i, (_, approved) in enumerate(batch) if approved]
    messages = graph.get_state(thread(session)).values["messages"]
    assert not stored_history_problems(messages)
    stored_calls = next(m for m in messages if isinstance(m, AIMessage) and m.tool_calls).tool_calls
    ids = [c["id"] for c in stored_calls]
    assert all(ids) and len(set(ids)) == len(ids)
    replies = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    for call_id, (_, approved) in zip(ids, batch, strict=True):
        assert (replies[call_id].status == "error") is not approved


@given(st.lists(st.sampled_from(["", "a", "a-2", "b", "a-2'"]), max_size=8))
def test_renumbered_ids_are_unique_and_keep_the_first_of_each(ids: list[str]) -> None:
    message = AIMessage(content="", tool_calls=[{"name": "now", "args": {}, "id": i} for i in ids])
    renumbered = unique_call_ids(message)
    new = [c["id"] for c in renumbered.tool_calls]
    assert all(new) and len(set(new)) == len(new)
    for position, old in enumerate(ids):
        if old and old not in ids[:position]:
            assert new[position] == old
    assert unique_call_ids(renumbered) is renumbered  # stable: a resumed step gets the same ids
