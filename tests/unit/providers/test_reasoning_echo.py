"""Sending reasoning back: the DeepSeek rule always holds, and the bytes of a history never change."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai.chat_models.base import _convert_message_to_dict

from generalAgent.providers.detection import DIALECTS
from generalAgent.providers.reasoning import add_reasoning_echo, coalesce_details, wrap_details
from tests.support.openai_server import _tool_turn_positions


@st.composite
def histories(draw: st.DrawFn) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for turn in range(draw(st.integers(1, 5))):
        messages.append(HumanMessage(content=f"question {turn}"))
        for step in range(draw(st.integers(0, 3))):
            ids = [f"c{turn}-{step}-{n}" for n in range(draw(st.integers(1, 3)))]
            reasoning = draw(st.sampled_from(["", "thinking about the tools", "想一想"]))
            calls = [{"name": "now", "args": {}, "id": i, "type": "tool_call"} for i in ids]
            messages.append(
                AIMessage(content="", tool_calls=calls, additional_kwargs={"reasoning_content": reasoning})
            )
            messages += [ToolMessage(content="ok", tool_call_id=i) for i in ids]
        if draw(st.booleans()):
            reasoning = draw(st.sampled_from(["", "answer now"]))
            messages.append(AIMessage(content="done", additional_kwargs={"reasoning_content": reasoning}))
    return messages


def wire(messages: list[BaseMessage], dialect: str) -> list[dict]:
    converted = [_convert_message_to_dict(m) for m in messages]
    add_reasoning_echo(messages, converted, DIALECTS[dialect])
    return converted


@settings(max_examples=150, deadline=None)
@given(histories())
def test_every_assistant_message_of_a_tool_turn_carries_reasoning_for_deepseek(
    history: list[BaseMessage],
) -> None:
    sent = wire(history, "deepseek")
    assert all(isinstance(sent[i].get("reasoning_content"), str) for i in _tool_turn_positions(sent))


@settings(max_examples=150, deadline=None)
@given(histories(), histories(), st.sampled_from(sorted(DIALECTS)))
def test_a_history_serialises_to_the_same_bytes_in_every_later_request(
    history: list[BaseMessage], more: list[BaseMessage], dialect: str
) -> None:
    before = json.dumps(wire(history, dialect), ensure_ascii=False)
    later = wire([*history, *more], dialect)[: len(history)]
    assert json.dumps(later, ensure_ascii=False) == before


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=12))
def test_streamed_reasoning_details_join_back_into_the_block_sent(pieces: list[str]) -> None:
    fragments = []
    for piece in pieces:
        fragments += wrap_details(
            [{"type": "reasoning.text", "text": piece, "format": "unknown", "index": 0}]
        )
    assert coalesce_details(fragments) == [
        {"type": "reasoning.text", "text": "".join(pieces), "format": "unknown", "index": 0}
    ]
