"""Noticing a model that repeats itself: the same tool call, same arguments, again and again.

A model that gets no further from a result tends to ask for it again, and each round
costs a model call and a tool run while the turn goes nowhere. When a call repeats one
made earlier in the same turn for the `REPEAT_LIMIT`-th time, the turn goes to
`finalize` instead of running it: the call is answered "not run" with the reason, and
the model is told to answer with what it has. Arguments are compared as canonical JSON,
so key order and spacing do not hide a repeat.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

REPEAT_LIMIT = 3


def call_key(name: str, args: Any) -> tuple[str, str]:
    return name, json.dumps(args, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def repeated_call(messages: Sequence[BaseMessage], limit: int = REPEAT_LIMIT) -> str | None:
    """The name of a call in the last message that is the `limit`-th identical call of this
    turn (since the user's last message); None when there is none."""
    if not messages or not isinstance(messages[-1], AIMessage):
        return None
    start = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), -1)
    counts: Counter[tuple[str, str]] = Counter()
    for message in messages[start + 1 :]:
        if isinstance(message, AIMessage):
            counts.update(call_key(call["name"], call.get("args")) for call in message.tool_calls)
    for call in messages[-1].tool_calls:
        if counts[call_key(call["name"], call.get("args"))] >= limit:
            return call["name"]
    return None
