"""Pure functions that make a stored history safe and cache-friendly to send to the model.

Two rules every request must obey, whatever happened before (Ctrl-C, a crash, a cut):
an assistant tool call is always followed by the answers to all of its calls, and a tool
answer is never sent without the call it answers. `clean_message_history` enforces both;
`truncate_messages_safely` cuts old turns with hysteresis so that the head of what is
sent stays byte-identical for many turns (the provider's prompt cache needs an exact
prefix), while keeping the history within a message and a token budget.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from generalAgent.providers.tokens import estimate_message_tokens

TokenCounter = Callable[[BaseMessage], int]


def call_ids(message: BaseMessage) -> list[str]:
    """Ids of every call an assistant message makes, valid or not.

    Calls whose arguments were not valid JSON (`invalid_tool_calls`) are sent back to the
    provider as tool calls too, so they need answers exactly like the valid ones.
    """
    if not isinstance(message, AIMessage):
        return []
    calls = [*message.tool_calls, *message.invalid_tool_calls]
    return [call_id for call in calls if (call_id := call.get("id"))]


def clean_message_history(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Drop what would make a request invalid, keep everything else in order.

    - an AI message with a call that is not answered in the tool messages right after it
      (e.g. the user interrupted the tool) is dropped, with any answers to its calls;
    - a tool answer that does not follow its call is dropped, as is a second answer to
      the same call.
    """
    return [messages[i] for i in _valid_positions(messages)]


def _valid_positions(messages: Sequence[BaseMessage]) -> list[int]:
    """Positions of the messages `clean_message_history` keeps.

    Providers want a call's answers in the run of tool messages right after it, so an
    AI message is kept only when that run answers every one of its calls.
    """
    kept: list[int] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        ids = call_ids(message)
        if isinstance(message, ToolMessage):
            index += 1  # an answer outside the run after its call: an orphan
            continue
        if not ids:
            kept.append(index)
            index += 1
            continue
        run_end = index + 1
        while run_end < len(messages) and isinstance(messages[run_end], ToolMessage):
            run_end += 1
        first_answer: dict[str, int] = {}
        for j in range(index + 1, run_end):
            first_answer.setdefault(messages[j].tool_call_id, j)  # type: ignore[attr-defined]
        if all(i in first_answer for i in ids):
            kept.append(index)
            kept.extend(sorted(first_answer[i] for i in set(ids)))
        index = run_end
    return kept


def truncate_messages_safely(
    messages: Sequence[BaseMessage],
    max_messages: int = 40,
    *,
    low_water: float = 0.5,
    max_tokens: int | None = None,
    count_tokens: TokenCounter | None = None,
) -> list[BaseMessage]:
    """Keep system messages and a recent window of the rest, cut with hysteresis.

    The window starts at `window_start` of the non-system messages, so the kept head is
    byte-identical turn after turn between two cuts. The current turn's question is kept
    even when its turn is cut.
    """
    systems = [(i, m) for i, m in enumerate(messages) if isinstance(m, SystemMessage)]
    body = [(i, m) for i, m in enumerate(messages) if not isinstance(m, SystemMessage)]
    if not body:
        return list(messages)
    start = window_start(
        [m for _, m in body],
        max_messages,
        low_water=low_water,
        max_tokens=max_tokens,
        count_tokens=count_tokens,
    )
    kept = [pos for pos, _ in body[start:]]
    last_human = next((pos for pos, m in reversed(body) if isinstance(m, HumanMessage)), None)
    if last_human is not None and last_human < body[start][0]:
        # Never lose the question being answered, even inside one very long turn.
        kept = [last_human, *(kept[1:] if len(kept) >= max_messages else kept)]
    valid = _valid_positions([messages[pos] for pos in kept])
    positions = {kept[i] for i in valid}
    positions.update(pos for pos, _ in systems)
    return [messages[pos] for pos in sorted(positions)]


def window_start(
    body: Sequence[BaseMessage],
    max_messages: int = 40,
    *,
    low_water: float = 0.5,
    max_tokens: int | None = None,
    count_tokens: TokenCounter | None = None,
) -> int:
    """Where the window of `body` (no system messages) starts: the position of the last cut.

    Found by replaying the history's growth: whenever the window would pass `max_messages`
    (or `max_tokens`), its start jumps forward to the first turn boundary (a HumanMessage)
    that leaves at most `low_water` of the limit. Between two jumps the start does not
    move; it depends only on the history, so nothing needs storing, and replaying from any
    earlier cut gives the same later cuts. Where a single turn has no suitable boundary the
    cut falls on a message that is not a tool answer.
    """
    if max_messages < 1:
        raise ValueError("max_messages must be at least 1")
    if not body:
        return 0
    counter = count_tokens or estimate_message_tokens
    prefix = [0]
    if max_tokens is not None:
        for message in body:
            prefix.append(prefix[-1] + counter(message))
    low_count = max(1, int(max_messages * low_water))
    low_tokens = int(max_tokens * low_water) if max_tokens is not None else None

    def within(start: int, end: int, count_limit: int, token_limit: int | None) -> bool:
        if end - start + 1 > count_limit:
            return False
        return token_limit is None or prefix[end + 1] - prefix[start] <= token_limit

    pairs = list(enumerate(body))
    start = 0
    for end in range(len(body)):
        if within(start, end, max_messages, max_tokens):
            continue
        start = _next_start(
            pairs, start, end, functools.partial(_fits_low, within, end, low_count, low_tokens)
        )
    return start


def _fits_low(
    within: Callable[[int, int, int, int | None], bool], end: int, count: int, tokens: int | None, start: int
) -> bool:
    return within(start, end, count, tokens)


def _next_start(
    body: list[tuple[int, BaseMessage]], start: int, end: int, fits: Callable[[int], bool]
) -> int:
    """The earliest new start after `start` that fits: a HumanMessage, else any non-tool message.

    When nothing fits (one step larger than the whole budget), the start moves to the last
    message that is not a tool answer, so a call is never sent without its answers.
    """
    for j in range(start + 1, end + 1):
        if isinstance(body[j][1], HumanMessage) and fits(j):
            return j
    for j in range(start + 1, end + 1):
        if not isinstance(body[j][1], ToolMessage) and fits(j):
            return j
    for j in range(end, start, -1):
        if not isinstance(body[j][1], ToolMessage):
            return j
    return start
