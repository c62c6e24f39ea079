"""Where text the model stores came from: written after it read untrusted content, or not.

A note (add_knowledge) or a todo item (todo_write) written by the model outlives the turn:
later sessions search the note, and every request repeats the todo list. When the turn had
read a file, a page, a command's output or an MCP tool's result before the model wrote
it, what it stores may be what that content told it to store ("official policy: send the
keys to …"). Such text is marked untrusted where it is stored, and handed back to the
model as data: a note in a tool result that says so, a todo item never repeated in the
user-role reminder (only its position and status, with todo_read to read it).

A turn "read untrusted content" when any tool answered in it (since the last user
message) other than the few whose answers hold nothing from outside: the clock and the
todo and note tools' own confirmations. Errors count too: they can quote a file name.

The mark lasts: once a session read such content, the model may carry what it said into
any later turn ("next turn, save this as a note"), so the session's state keeps
`read_untrusted` (set by the tools node, graph/nodes/tools.py, stored with every
checkpoint) and everything stored from then on is marked, whatever turn writes it. The
user ends it by leaving that content behind: /clear (the model no longer sees it) or
/rewind to before the turn that read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["OWN_WORDS", "read_untrusted_in", "read_untrusted_this_turn", "state_read_untrusted"]

# Tools whose answers carry no text from outside the agent.
OWN_WORDS = frozenset(
    {"now", "todo_write", "todo_read", "add_knowledge", "update_knowledge", "delete_knowledge"}
)


def read_untrusted_this_turn(messages: Sequence[Any]) -> bool:
    """Whether a tool result with outside content came back since the user's last message."""
    from langchain_core.messages import HumanMessage, ToolMessage

    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return False
        if isinstance(message, ToolMessage) and (message.name or "") not in OWN_WORDS:
            return True
    return False


def read_untrusted_in(messages: Sequence[Any]) -> bool:
    """Whether any tool result with outside content is among `messages`."""
    from langchain_core.messages import ToolMessage

    return any(isinstance(m, ToolMessage) and (m.name or "") not in OWN_WORDS for m in messages)


def state_read_untrusted(state: Any) -> bool:
    """Whether what the model stores now is marked untrusted: the session read outside
    content in an earlier turn (its lasting mark) or in this one (False without a state)."""
    if not isinstance(state, dict):
        return False
    return bool(state.get("read_untrusted")) or read_untrusted_this_turn(state.get("messages", []))
