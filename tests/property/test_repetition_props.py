"""Property: within one turn, no tool call runs REPEAT_LIMIT times with the same arguments,
and the guard stops a model message only when it would make that happen."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from generalAgent.graph.repetition import REPEAT_LIMIT, call_key, repeated_call

calls = st.tuples(st.sampled_from(["now", "read_file"]), st.sampled_from([{}, {"a": 1}, {"b": "x", "a": 1}]))
steps = st.lists(st.one_of(st.none(), st.lists(calls, min_size=1, max_size=3)), max_size=30)


@given(steps)
def test_the_guard_stops_exactly_the_message_that_would_repeat_a_call_too_often(
    session: list[list[tuple[str, dict]] | None],
) -> None:
    """None is a user message (a new turn); a list is one model message's calls. Calls the
    guard lets through are answered; a stopped message ends the turn (finalize)."""
    history: list[BaseMessage] = []
    ran: Counter[tuple[str, str]] = Counter()
    turn_over = False
    for number, step in enumerate(session):
        if step is None:
            history.append(HumanMessage(content="next"))
            ran, turn_over = Counter(), False
            continue
        if turn_over:
            continue
        message = AIMessage(
            content="",
            tool_calls=[{"name": n, "args": a, "id": f"c{number}-{i}"} for i, (n, a) in enumerate(step)],
        )
        history.append(message)
        would_run = ran + Counter(call_key(c["name"], c["args"]) for c in message.tool_calls)
        if repeated_call(history) is not None:
            assert max(would_run.values()) >= REPEAT_LIMIT
            turn_over = True
            history.extend(ToolMessage(content="not run", tool_call_id=c["id"]) for c in message.tool_calls)
            history.append(AIMessage(content="final answer"))
            continue
        ran = would_run
        assert max(ran.values()) < REPEAT_LIMIT
        history.extend(ToolMessage(content="ok", tool_call_id=c["id"]) for c in message.tool_calls)
