"""MCP tool names: valid for every provider, unique, stable whatever else a server offers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from generalAgent.agent.chat_input import parse_mentions
from generalAgent.tools.mcp.naming import MAX_TOOL_NAME, VALID_TOOL_NAME, server_handle, tool_names

server_names = st.text(min_size=0, max_size=80)
remote_names = st.lists(st.text(min_size=0, max_size=90), max_size=12)
plain_servers = st.from_regex(r"[a-z][a-z0-9]{0,20}", fullmatch=True)
plain_tools = st.from_regex(r"[a-z][a-z0-9_]{0,30}", fullmatch=True)


@given(server_names, remote_names)
def test_every_name_is_valid_unique_and_short(server: str, tools: list[str]) -> None:
    names = tool_names(server_handle(server), tools)
    assert set(names) == set(tools)
    offered = list(names.values())
    assert len(set(offered)) == len(offered)
    for name in offered:
        assert VALID_TOOL_NAME.match(name), name
        assert len(name) <= MAX_TOOL_NAME


@given(server_names, remote_names, remote_names)
def test_a_tool_keeps_its_name_when_the_server_gains_tools(
    server: str, tools: list[str], more: list[str]
) -> None:
    handle = server_handle(server)
    before = tool_names(handle, tools)
    after = tool_names(handle, [*more, *reversed(tools)])
    for tool, name in before.items():
        if VALID_TOOL_NAME.match(f"{handle}__{tool}"):
            assert after[tool] == name  # names that needed no change never move
    assert tool_names(handle, list(reversed(tools))) == before  # the order given does not matter


@given(server_names)
def test_a_handle_can_be_mentioned_and_ends_where_the_prefix_does(server: str) -> None:
    handle = server_handle(server)
    assert parse_mentions(f"use @{handle} please") == [handle]
    assert "__" not in handle


@given(plain_servers, st.lists(plain_tools, max_size=8))
def test_plain_names_are_kept_as_they_are(server: str, tools: list[str]) -> None:
    handle = server_handle(server)
    assert handle == server
    for tool, name in tool_names(handle, tools).items():
        if len(handle) + 2 + len(tool) <= MAX_TOOL_NAME:
            assert name == f"{handle}__{tool}"
