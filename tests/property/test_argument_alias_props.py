"""Property: renaming `path` <-> `file_path` (graph/tool_arguments.py) never drops,
invents or changes any other argument, and renames only what the tool's schema lacks.

Calls are drawn with argument names from a small pool that includes both spellings and
tools whose schemas have one, both or neither of them.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from generalAgent.graph.tool_arguments import ARGUMENT_ALIASES, rename_argument_aliases

NAMES = ["path", "file_path", "query", "limit", "content", "folder", "Path", "filepath"]
TOOLS = ["read_file", "search_file", "unknown"]

values = st.one_of(st.text(max_size=8), st.integers(), st.none(), st.lists(st.integers(), max_size=3))
arguments = st.dictionaries(st.sampled_from(NAMES), values, max_size=6)
schemas = st.fixed_dictionaries(
    {name: st.frozensets(st.sampled_from(NAMES), max_size=5) for name in TOOLS[:2]}
)
calls = st.lists(st.tuples(st.sampled_from(TOOLS), arguments), min_size=1, max_size=4)


def message(drawn: list[tuple[str, dict[str, Any]]]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {"id": f"c{n}", "name": name, "args": args, "type": "tool_call"}
            for n, (name, args) in enumerate(drawn)
        ],
    )


@given(calls, schemas)
def test_only_an_alias_is_renamed_and_nothing_else_changes(
    drawn: list[tuple[str, dict[str, Any]]], parameters: dict[str, frozenset[str]]
) -> None:
    original = message(drawn)
    sent = [dict(args) for _, args in drawn]
    result = rename_argument_aliases(original, parameters)
    assert [c["args"] for c in original.tool_calls] == sent  # the original is not changed
    assert len(result.tool_calls) == len(original.tool_calls)
    for before, after in zip(original.tool_calls, result.tool_calls, strict=True):
        assert (after["id"], after["name"], after["type"]) == (before["id"], before["name"], before["type"])
        old, new = before["args"], after["args"]
        assert len(new) == len(old)
        # Every argument outside the alias pair is kept, with its value.
        assert {k: v for k, v in new.items() if k not in ARGUMENT_ALIASES} == {
            k: v for k, v in old.items() if k not in ARGUMENT_ALIASES
        }
        names = parameters.get(before["name"])
        for key, value in old.items():
            other = ARGUMENT_ALIASES.get(key)
            should_rename = (
                names is not None
                and other is not None
                and key not in names
                and other in names
                and other not in old
            )
            if should_rename:
                assert key not in new and new[other] == value
            else:
                assert key in new and new[key] is value


@given(calls, schemas)
def test_renaming_twice_changes_nothing_more(
    drawn: list[tuple[str, dict[str, Any]]], parameters: dict[str, frozenset[str]]
) -> None:
    once = rename_argument_aliases(message(drawn), parameters)
    assert rename_argument_aliases(once, parameters) is once
