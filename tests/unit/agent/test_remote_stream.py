"""A served deployment's stream, as agent/remote.py hands it to the local turn reporting:
the same typed events as from a local graph, the pause however the server sends it, and
nothing the network sends can raise."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from langgraph_sdk.schema import StreamPart

from generalAgent.agent.events import MessageEnd, TextChunk, ToolEnd, ToolStart
from generalAgent.agent.remote import stream_parts
from generalAgent.agent.turns import TurnResult, report_stream
from tests.support.turn_views import RecordingView

PLANNER = {"langgraph_node": "planner"}
AI_CALL = {
    "type": "ai",
    "content": "",
    "id": "m1",
    "tool_calls": [{"name": "now", "args": {"timezone": "UTC"}, "id": "c1", "type": "tool_call"}],
    "usage_metadata": {"input_tokens": 1200, "output_tokens": 8, "total_tokens": 1208},
}
TOOL = {
    "type": "tool",
    "content": "noon",
    "name": "now",
    "id": "t1",
    "tool_call_id": "c1",
    "status": "success",
}
PAUSE = {"__interrupt__": [{"value": {"type": "approval", "requests": []}, "id": "i1"}]}


def reported(parts: list[StreamPart]) -> tuple[list[Any], list[Any], TurnResult]:
    view, result = RecordingView(), TurnResult()
    interrupts = report_stream(stream_parts(iter(parts), result), view, result, [])
    return view.events, interrupts, result


def test_a_served_turn_becomes_the_events_of_a_local_one() -> None:
    events, interrupts, result = reported(
        [
            StreamPart("metadata", {"run_id": "r1"}),
            StreamPart("messages", [{"type": "AIMessageChunk", "content": "It is ", "id": "m2"}, PLANNER]),
            StreamPart("updates", {"planner": {"messages": [AI_CALL]}}),
            StreamPart("updates", {"tools": {"messages": [TOOL]}}),
            StreamPart("custom", {"files_written": ["/srv/data/workspaces/t/outputs/a.md"]}),
        ]
    )
    assert [type(e) for e in events][:4] == [TextChunk, MessageEnd, ToolStart, ToolEnd]
    assert events[2] == ToolStart("c1", "now", {"timezone": "UTC"})
    assert events[3] == ToolEnd("c1", "now", "noon", False, None)
    assert str(events[4].paths[0]) == "/srv/data/workspaces/t/outputs/a.md"
    assert result.usage.input_tokens == 1200 and not interrupts


def test_the_pause_counts_once_whether_sent_as_updates_or_values() -> None:
    for parts in (
        [StreamPart("updates", PAUSE)],
        [StreamPart("values", PAUSE)],  # Aegra 0.6
        [StreamPart("updates", PAUSE), StreamPart("values", {**PAUSE, "messages": []})],
    ):
        _events, interrupts, _result = reported(parts)
        assert [(i.id, i.value["type"]) for i in interrupts] == [("i1", "approval")]


def test_an_error_part_ends_the_turn_with_the_servers_words() -> None:
    events, _interrupts, result = reported(
        [
            StreamPart("error", {"error": "ValueError", "message": "model  unreachable\n"}),
            StreamPart("custom", {}),
        ]
    )
    assert result.error == "The run failed on the server: model unreachable" and events == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["messages", "updates", "values", "custom", "metadata", "debug"]),
            json_values
            | st.dictionaries(
                st.sampled_from(["planner", "tools", "__interrupt__"]), json_values, max_size=3
            ),
        ),
        max_size=6,
    )
)
def test_nothing_the_server_sends_raises(parts: list[tuple[str, Any]]) -> None:
    reported([StreamPart(event, data) for event, data in parts])
