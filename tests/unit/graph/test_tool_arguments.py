"""Streamed tool calls whose raw arguments are not strict JSON must not run with repaired values."""

from __future__ import annotations

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk

from generalAgent.graph.tool_arguments import RawToolArguments, reject_repaired_calls


def stream(*pieces: tuple[int, str | None, str]) -> RawToolArguments:
    raw = RawToolArguments()
    for index, call_id, args in pieces:
        chunk = AIMessageChunk(
            content="", tool_call_chunks=[{"index": index, "id": call_id, "name": None, "args": args}]
        )
        raw.on_llm_new_token("", chunk=ChatGenerationChunk(message=chunk))
    return raw


def message(*calls: tuple[str, dict]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"id": i, "name": "write_file", "args": a, "type": "tool_call"} for i, a in calls],
    )


def test_cut_off_arguments_become_an_invalid_call() -> None:
    raw = stream(
        (0, "a", '{"path": "outputs/x.md", '), (0, None, '"content": "half'), (1, "b", '{"path": "y"}')
    )
    checked = reject_repaired_calls(
        message(("a", {"path": "outputs/x.md", "content": "half"}), ("b", {"path": "y"})), raw.by_id()
    )
    assert [c["id"] for c in checked.tool_calls] == ["b"]
    (invalid,) = checked.invalid_tool_calls
    assert invalid["id"] == "a" and invalid["args"] == '{"path": "outputs/x.md", "content": "half'
    assert "cut off or malformed" in invalid["error"]


def test_valid_and_empty_arguments_are_left_alone() -> None:
    raw = stream((0, "a", '{"path": "outputs/x.md"}'), (1, "b", ""))
    original = message(("a", {"path": "outputs/x.md"}), ("b", {}))
    assert reject_repaired_calls(original, raw.by_id()) is original


def test_a_json_value_that_is_not_an_object_is_invalid() -> None:
    raw = stream((0, "a", "[1, 2]"))
    checked = reject_repaired_calls(message(("a", {})), raw.by_id())
    assert checked.tool_calls == [] and "not a JSON object" in checked.invalid_tool_calls[0]["error"]
