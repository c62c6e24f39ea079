"""Invariants of the history helpers (repair, clean, cut) over random histories."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from generalAgent.graph.history import (
    answer_open_calls,
    call_ids,
    clean_message_history,
    open_call_ids,
    truncate_messages_safely,
)

_ids = itertools.count()


@st.composite
def turns(draw) -> list[BaseMessage]:
    """One user turn: a question (sometimes with an image), tool rounds, an answer.

    Rounds may have several parallel calls; some are interrupted (answers missing),
    some answered out of order or twice, as real histories can be after crashes.
    """
    text = draw(st.text(min_size=1, max_size=40))
    if draw(st.booleans()) and draw(st.integers(0, 9)) == 0:
        content: str | list = [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": "data:,"}},
        ]
    else:
        content = text
    messages: list[BaseMessage] = [HumanMessage(content=content)]
    for _ in range(draw(st.integers(0, 3))):
        ids = [f"c{next(_ids)}" for _ in range(draw(st.integers(1, 3)))]
        messages.append(AIMessage(content="", tool_calls=[{"id": i, "name": "t", "args": {}} for i in ids]))
        answered = (
            draw(st.lists(st.sampled_from(ids), max_size=len(ids) + 1))
            if draw(st.integers(0, 4)) == 0
            else ids
        )
        messages += [ToolMessage(content="r" * draw(st.integers(0, 300)), tool_call_id=i) for i in answered]
    if draw(st.booleans()):
        messages.append(AIMessage(content="answer " * draw(st.integers(1, 50))))
    return messages


@st.composite
def histories(draw) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    if draw(st.booleans()):
        messages.append(SystemMessage(content="static"))
    for turn in draw(st.lists(turns(), max_size=30)):
        messages += turn
    if draw(st.integers(0, 9)) == 0 and messages:  # a stray answer whose call was lost
        messages.insert(
            draw(st.integers(0, len(messages))), ToolMessage(content="orphan", tool_call_id="lost")
        )
    return messages


def is_subsequence(small: list, big: list) -> bool:
    iterator = iter(big)
    return all(any(item is other for other in iterator) for item in small)


def assert_pairs_intact(messages: list[BaseMessage]) -> None:
    for index, message in enumerate(messages):
        ids = call_ids(message)
        if ids:
            run = []
            j = index + 1
            while j < len(messages) and isinstance(messages[j], ToolMessage):
                run.append(messages[j].tool_call_id)
                j += 1
            assert sorted(run) == sorted(set(ids)), "an AI call without all its answers right after it"
        if isinstance(message, ToolMessage):
            j = index - 1
            while j >= 0 and isinstance(messages[j], ToolMessage):
                j -= 1
            assert j >= 0 and message.tool_call_id in call_ids(messages[j]), "an orphan ToolMessage"


@given(histories())
def test_clean_is_an_order_preserving_valid_subsequence(history: list[BaseMessage]) -> None:
    cleaned = clean_message_history(history)
    assert is_subsequence(cleaned, history)
    assert_pairs_intact(cleaned)
    assert clean_message_history(cleaned) == cleaned
    assert [m for m in cleaned if isinstance(m, SystemMessage)] == [
        m for m in history if isinstance(m, SystemMessage)
    ]


@settings(max_examples=150)
@given(
    histories(),
    st.integers(10, 60),
    st.sampled_from([0.3, 0.5, 0.8]),
    st.one_of(st.none(), st.integers(200, 5000)),
)
def test_truncate_keeps_pairs_limit_and_order(history, max_messages, low_water, max_tokens) -> None:
    cleaned = clean_message_history(history)
    kept = truncate_messages_safely(cleaned, max_messages, low_water=low_water, max_tokens=max_tokens)
    assert is_subsequence(kept, cleaned)
    assert_pairs_intact(kept)
    body = [m for m in kept if not isinstance(m, SystemMessage)]
    assert len(body) <= max_messages
    assert [m for m in kept if isinstance(m, SystemMessage)] == [
        m for m in cleaned if isinstance(m, SystemMessage)
    ]
    humans = [m for m in cleaned if isinstance(m, HumanMessage)]
    if humans:
        assert humans[-1] in kept, "the question being answered was cut"
    assert truncate_messages_safely(cleaned, max_messages, low_water=low_water, max_tokens=max_tokens) == kept


@settings(max_examples=100)
@given(histories(), st.integers(10, 40))
def test_head_does_not_move_between_cuts(history, max_messages) -> None:
    """Growing the history one message at a time: the first kept message changes only at a cut."""
    cleaned = [m for m in clean_message_history(history) if not isinstance(m, SystemMessage)]
    previous_head = None
    previous_len = 0
    for end in range(1, len(cleaned) + 1):
        kept = truncate_messages_safely(cleaned[:end], max_messages)
        head = kept[0] if kept else None
        if previous_head is not None and head is not previous_head:
            # The head moved: only allowed when the window was about to pass its limit.
            assert previous_len + 1 > max_messages or len(kept) <= previous_len, (
                end,
                previous_len,
                len(kept),
            )
        previous_head, previous_len = head, len(kept)


def test_hysteresis_cuts_rarely_in_a_long_session() -> None:
    history: list[BaseMessage] = []
    heads = []
    for turn in range(100):
        call = f"h{turn}"
        history += [
            HumanMessage(content=f"question {turn}"),
            AIMessage(content="", tool_calls=[{"id": call, "name": "t", "args": {}}]),
            ToolMessage(content="result", tool_call_id=call),
            AIMessage(content=f"answer {turn}"),
        ]
        kept = truncate_messages_safely(history, 40, low_water=0.5)
        assert isinstance(kept[0], HumanMessage)
        heads.append(kept[0].content)
    cuts = sum(1 for a, b in itertools.pairwise(heads) if a != b)
    assert cuts == 15  # every ~6 turns (20 messages), not every turn


@given(histories())
def test_repair_answers_every_open_call_once_right_after_its_calls(history: list[BaseMessage]) -> None:
    repaired = answer_open_calls(history, "not run")
    if repaired is None:
        assert not open_call_ids(history)
        return
    assert is_subsequence(history, repaired)  # nothing dropped or reordered
    added = [m for m in repaired if not any(m is other for other in history)]
    assert sorted(m.tool_call_id for m in added) == sorted(open_call_ids(history))
    assert all(isinstance(m, ToolMessage) and m.content == "not run" for m in added)
    assert not open_call_ids(repaired) and answer_open_calls(repaired, "not run") is None
    for message in added:  # in the run of tool messages after its call, never after a new message
        index = repaired.index(message)
        j = index - 1
        while isinstance(repaired[j], ToolMessage):
            j -= 1
        assert message.tool_call_id in call_ids(repaired[j])
