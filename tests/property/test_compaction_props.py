"""The cached prefix only moves at a cut: between two compactions the head of every request is
byte-identical, whatever the session looks like.

A random session (turns with tool rounds of random sizes, some very long turns) is replayed
the way the graph runs it: before each model call the `compact` node's rule applies (if the
planner's `pending_cut` is not empty, the summary now stands for those messages), then the
planner's `history` is what is sent. Between two compactions each request must start with
the whole previous one, serialised byte for byte, and a compaction must leave the summary
first.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, message_to_dict

from generalAgent.config.settings import load_settings
from generalAgent.graph.context import PromptBuilder
from generalAgent.graph.history import SUMMARY_TAG, open_question
from tests.support.agent import build_test_agent
from tests.support.scripted_model import ScriptedChatModel

_ids = itertools.count()


@pytest.fixture(scope="module")
def prompt_builders(tmp_path_factory: pytest.TempPathFactory) -> dict[float, PromptBuilder]:
    data = Path(tmp_path_factory.mktemp("data"))
    builders = {}
    for low_water in (0.3, 0.5, 0.8):
        configured = load_settings(
            env_file=None,
            paths={"data_dir": data},
            governance={
                "max_message_history": 12,
                "history_low_water": low_water,
                "max_context_tokens": 12_000,
            },
        )
        parts, _ = build_test_agent(configured, ScriptedChatModel())
        builders[low_water] = PromptBuilder(configured, parts.registry, parts.skills, parts.agents)
    return builders


@st.composite
def sessions(draw) -> list[list[BaseMessage]]:
    """Turns; each a question, tool rounds (results of any size, up to a very long turn), an answer."""
    turns = []
    for turn in range(draw(st.integers(1, 25))):
        messages: list[BaseMessage] = [
            HumanMessage(content=f"question {turn} " + "q" * draw(st.integers(0, 400)))
        ]
        for _ in range(draw(st.sampled_from([0, 1, 1, 2, 3, 8]))):
            call = f"c{next(_ids)}"
            messages.append(AIMessage(content="", tool_calls=[{"id": call, "name": "now", "args": {}}]))
            messages.append(ToolMessage(content="r" * draw(st.integers(0, 6_000)), tool_call_id=call))
        messages.append(AIMessage(content="answer " + "a" * draw(st.integers(0, 600))))
        turns.append(messages)
    return turns


def wire(messages: list[BaseMessage]) -> list[str]:
    """Each message as it would be serialised into the request (ids are not sent)."""
    out = []
    for message in messages:
        data = message_to_dict(message)["data"]
        data.pop("id", None)
        out.append(json.dumps(data, sort_keys=True, ensure_ascii=False))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(session=sessions(), low_water=st.sampled_from([0.3, 0.5, 0.8]))
def test_the_head_only_changes_at_a_compaction(
    prompt_builders: dict[float, PromptBuilder], session: list[list[BaseMessage]], low_water: float
) -> None:
    prompts = prompt_builders[low_water]
    state: dict = {"messages": [], "summary": None, "context_id": "main"}
    system = prompts.system_message(state)
    previous: list[str] | None = None
    compactions = 0
    for turn in session:
        for index, message in enumerate(turn):
            message.id = message.id or f"m{next(_ids)}"
            state["messages"] = [*state["messages"], message]
            if isinstance(message, AIMessage) and not message.tool_calls:
                continue  # the answer ends the turn: no model call follows it
            if index + 1 < len(turn) and isinstance(turn[index + 1], ToolMessage):
                continue  # the call's answer comes first
            dropped = prompts.pending_cut(state)
            if dropped:  # the compact node's rule
                compactions += 1
                state["summary"] = {
                    "text": f"summary {compactions}",
                    "through": dropped[-1].id,
                    "messages": compactions,
                    "question": open_question(state["messages"], dropped[-1].id),
                }
            request = wire(prompts.history(state, system, prompts.visible_tools(state)))
            if dropped:
                assert SUMMARY_TAG in request[0] and f"summary {compactions}" in request[0]
            elif previous is not None:
                assert request[: len(previous)] == previous, "the head moved without a compaction"
            assert prompts.pending_cut(state) == []  # what is sent is always the full window
            previous = request
        event(f"compactions: {min(compactions, 3)}")
