"""Streamed tool calls whose raw arguments are not strict JSON must not run with repaired values."""

from __future__ import annotations

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk

from generalAgent.config.settings import Settings
from generalAgent.graph.tool_arguments import (
    ARGUMENT_ALIASES,
    RawToolArguments,
    reject_repaired_calls,
    rename_argument_aliases,
)
from tests.support.agent import build_test_agent
from tests.support.scripted_model import ScriptedChatModel


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


FILE_TOOLS = {
    "read_file": frozenset({"path", "offset", "limit"}),
    "search_file": frozenset({"file_path", "query"}),
}


def calls_of(*calls: tuple[str, dict]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {"id": f"c{n}", "name": name, "args": a, "type": "tool_call"} for n, (name, a) in enumerate(calls)
        ],
    )


def test_the_other_file_argument_spelling_is_renamed_both_ways() -> None:
    original = calls_of(
        ("read_file", {"file_path": "notes.md", "limit": 5}), ("search_file", {"query": "q", "path": "a.pdf"})
    )
    renamed = rename_argument_aliases(original, FILE_TOOLS)
    assert [c["args"] for c in renamed.tool_calls] == [
        {"path": "notes.md", "limit": 5},
        {"query": "q", "file_path": "a.pdf"},
    ]
    assert [c["id"] for c in renamed.tool_calls] == ["c0", "c1"]
    assert original.tool_calls[0]["args"] == {"file_path": "notes.md", "limit": 5}  # not changed in place


def test_calls_that_need_no_renaming_are_the_same_message() -> None:
    original = calls_of(("read_file", {"path": "a"}), ("search_file", {"file_path": "b", "query": "q"}))
    assert rename_argument_aliases(original, FILE_TOOLS) is original


def test_both_spellings_an_unknown_tool_or_a_schema_with_both_keep_the_call_as_sent() -> None:
    both = calls_of(
        ("read_file", {"path": "a", "file_path": "b"}), ("search_file", {"path": "a", "file_path": "a"})
    )
    assert rename_argument_aliases(both, FILE_TOOLS) is both  # the tool's own error stays
    unknown = calls_of(("mcp_tool", {"file_path": "a"}))
    assert rename_argument_aliases(unknown, FILE_TOOLS) is unknown
    has_both = calls_of(("copy", {"path": "a"}))
    assert rename_argument_aliases(has_both, {"copy": frozenset({"path", "file_path"})}) is has_both


def test_the_built_in_file_tools_name_their_file_with_one_of_the_two_spellings(settings: Settings) -> None:
    """Every built-in tool that takes a file or folder by path names it `path` or
    `file_path`, the two the table maps onto each other (a third spelling would need its
    own entry); and the names the planner reads (`tool.args`) leave out the injected runtime."""
    parts, _ = build_test_agent(settings, ScriptedChatModel())
    takes_a_file = {}
    for name in parts.registry.names():
        arguments = set(parts.registry.load_on_demand(name).args)
        assert "runtime" not in arguments
        spelled = {a for a in arguments if a.endswith("path") or a in ARGUMENT_ALIASES}
        if spelled:
            takes_a_file[name] = spelled
    assert all(spelled <= set(ARGUMENT_ALIASES) and len(spelled) == 1 for spelled in takes_a_file.values())
    assert {n for n, s in takes_a_file.items() if s == {"file_path"}} >= {
        "search_file",
        "query_table",
        "view_page",
    }
    assert {n for n, s in takes_a_file.items() if s == {"path"}} >= {"read_file", "write_file", "edit_file"}
