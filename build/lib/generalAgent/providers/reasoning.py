"""Reasoning on the wire: read it from responses, keep it on the message, send it back.

A stored assistant message keeps its reasoning as `additional_kwargs["reasoning_content"]`
whatever field the provider used, so a resumed session (and a sub-agent, which shares
the model) sends it back as the first run would have. What goes back is decided by the
dialect from the stored history alone, so the same history always serialises to the
same bytes and the provider's prompt cache keeps its prefix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from generalAgent.providers.dialect import Dialect

REASONING_KEY = "reasoning_content"
# OpenRouter's structured blocks, stored as streamed (each piece wrapped, so LangChain's
# chunk merging concatenates the list instead of merging pieces key by key).
DETAILS_KEY = "reasoning_details_fragments"
_CONCATENATED = ("text", "summary", "data", "signature")


def reasoning_from(payload: Mapping[str, Any], fields: Sequence[str]) -> str:
    """The reasoning text of a delta or message, from the first of `fields` that has some."""
    for name in fields:
        value = payload.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def stored_reasoning(message: BaseMessage) -> str:
    value = message.additional_kwargs.get(REASONING_KEY)
    return value if isinstance(value, str) else ""


def add_reasoning_echo(messages: Sequence[BaseMessage], wire: list[dict[str, Any]], dialect: Dialect) -> None:
    """Put stored reasoning on the assistant messages of `wire` (1:1 with `messages`) where
    the dialect requires or accepts it; missing reasoning is sent as "" where required."""
    if dialect.echo == "never" or (dialect.echo_field is None and dialect.details_field is None):
        return
    tool_turns = _positions_in_tool_turns(messages) if dialect.echo == "tool_turns" else set()
    for index, (message, entry) in enumerate(zip(messages, wire, strict=True)):
        if not isinstance(message, AIMessage) or entry.get("role") != "assistant":
            continue
        calls = bool(message.tool_calls or message.invalid_tool_calls)
        reasoning = stored_reasoning(message)
        if dialect.echo == "tool_turns":
            wanted, required = index in tool_turns, True
        elif dialect.echo == "tool_calls":
            wanted, required = calls, True
        else:  # always: what there is, and "" where a tool call needs it
            wanted, required = bool(reasoning) or calls, calls
        if not wanted:
            continue
        if dialect.echo_field is not None and (reasoning or required):
            entry[dialect.echo_field] = reasoning
        if dialect.details_field is not None:
            details = coalesce_details(message.additional_kwargs.get(DETAILS_KEY) or [])
            if details:
                entry[dialect.details_field] = details


def _positions_in_tool_turns(messages: Sequence[BaseMessage]) -> set[int]:
    """Positions of the assistant messages of each user turn in which tools were called."""
    positions: set[int] = set()
    turn: list[int] = []
    called = False
    for index, message in enumerate([*messages, HumanMessage(content="")]):
        if isinstance(message, HumanMessage):
            if called:
                positions.update(turn)
            turn, called = [], False
        elif isinstance(message, AIMessage):
            turn.append(index)
            called = called or bool(message.tool_calls or message.invalid_tool_calls)
    return positions


def wrap_details(details: Any) -> list[dict[str, Any]]:
    """Streamed or whole `reasoning_details` items, wrapped for storing on a message."""
    if not isinstance(details, list):
        return []
    return [{"fragment": item} for item in details if isinstance(item, dict)]


def coalesce_details(fragments: Sequence[Any]) -> list[dict[str, Any]]:
    """The blocks as the provider sent them: streamed pieces of one block (same `index`) joined."""
    blocks: dict[Any, dict[str, Any]] = {}
    for position, wrapped in enumerate(fragments):
        item = wrapped.get("fragment") if isinstance(wrapped, dict) else None
        if not isinstance(item, dict):
            continue
        key = item.get("index", f"#{position}")
        block = blocks.setdefault(key, {})
        for name, value in item.items():
            if name in _CONCATENATED and isinstance(value, str) and isinstance(block.get(name), str):
                block[name] += value
            elif block.get(name) is None:
                block[name] = value
    return list(blocks.values())
