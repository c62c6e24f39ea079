"""Requests to the model that UTF-8 can always carry: lone surrogates become U+FFFD.

A Python str may hold surrogate code points (U+D800..U+DFFF) that no UTF-8 byte
sequence represents: a model's tool call whose JSON arguments escape half a pair
("\\ud800"), an MCP tool's result, a file decoded leniently. The OpenAI client encodes
the request body as UTF-8, so one such character fails that request and, once it is in
the checkpointed history, every later one: the session is stuck.

The stored history is left as it was (it is what the model and the tools really
produced); only the copy sent is made encodable, by a pure function of the message, so
the same history gives byte-identical requests each turn and the provider's prompt cache
keeps hitting. Messages that need no change are passed on as the same objects.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
# The fields of a message that go into a request; response_metadata and the id stay behind.
_SENT_FIELDS = ("content", "additional_kwargs", "tool_calls", "invalid_tool_calls", "name")


def encodable_text(text: str) -> str:
    """`text` with every surrogate code point replaced by U+FFFD; `text` itself when UTF-8
    can already encode it."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def encodable_value(value: Any) -> Any:
    """`value` (str, or lists, tuples and dicts of them, keys included) with its text made
    encodable; the same object when nothing in it needed a change."""
    if isinstance(value, str):
        return encodable_text(value)
    if isinstance(value, dict):
        pairs = [(encodable_value(k), encodable_value(v)) for k, v in value.items()]
        if all(
            k is old_k and v is old_v for (k, v), (old_k, old_v) in zip(pairs, value.items(), strict=True)
        ):
            return value
        return dict(pairs)
    if isinstance(value, list | tuple):
        items = [encodable_value(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return tuple(items) if isinstance(value, tuple) else items
    return value


def encodable_message(message: BaseMessage) -> BaseMessage:
    """`message`, or a copy whose sent fields UTF-8 can encode."""
    update: dict[str, Any] = {}
    for name in _SENT_FIELDS:
        if not hasattr(message, name):
            continue
        current = getattr(message, name)
        fixed = encodable_value(current)
        if fixed is not current:
            update[name] = fixed
    return message.model_copy(update=update) if update else message


def encodable_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The request `messages`, each made encodable (see `encodable_message`)."""
    return [encodable_message(message) for message in messages]
