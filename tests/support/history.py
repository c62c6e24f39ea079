"""Checks that a conversation obeys the rule every provider enforces on tool calls.

An assistant message with tool calls must be followed, right after it, by one tool
message answering each of its calls, and a tool message may only answer a call of the
assistant message just before its run. `wire_history_problems` checks a request as it
went over the wire (OpenAI chat format); `stored_history_problems` checks LangChain
messages as a checkpoint stores them. Both return human-readable problems, [] if valid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage


def wire_history_problems(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Problems of an OpenAI-format `messages` list (what the provider would refuse)."""
    calls = [
        [c.get("id") for c in (m.get("tool_calls") or [])] if m.get("role") == "assistant" else []
        for m in messages
    ]
    answers = [m.get("tool_call_id") if m.get("role") == "tool" else None for m in messages]
    roles = ["tool" if m.get("role") == "tool" else "other" for m in messages]
    return _problems(calls, answers, roles)


def stored_history_problems(messages: Sequence[BaseMessage]) -> list[str]:
    """Problems of a stored LangChain history (valid and invalid tool calls both need answers)."""
    calls = []
    for message in messages:
        if isinstance(message, AIMessage):
            ids = [c.get("id") for c in message.tool_calls]
            ids += [c.get("id") for c in message.invalid_tool_calls]
            calls.append(ids)
        else:
            calls.append([])
    answers = [m.tool_call_id if isinstance(m, ToolMessage) else None for m in messages]
    roles = ["tool" if isinstance(m, ToolMessage) else "other" for m in messages]
    return _problems(calls, answers, roles)


def _problems(calls: list[list[Any]], answers: list[Any], roles: list[str]) -> list[str]:
    problems: list[str] = []
    open_calls: set[Any] = set()
    answered: set[Any] = set()
    for index, role in enumerate(roles):
        if role == "tool":
            call_id = answers[index]
            if call_id not in open_calls:
                problems.append(f"message {index}: tool answer {call_id!r} does not follow its call")
            elif call_id in answered:
                problems.append(f"message {index}: second answer to {call_id!r}")
            answered.add(call_id)
            continue
        missing = open_calls - answered
        if missing:
            problems.append(f"message {index}: calls {sorted(map(str, missing))} were never answered")
        open_calls, answered = set(calls[index]), set()
    missing = open_calls - answered
    if missing:
        problems.append(f"end: calls {sorted(map(str, missing))} were never answered")
    return problems


def tool_text(content: str) -> str:
    """A tool answer as the tool wrote it: without the <tool_output> frame the request adds."""
    match = re.fullmatch(r'<tool_output tool="[^"]*">\n(.*)\n</tool_output>', content, flags=re.DOTALL)
    return match.group(1) if match else content
