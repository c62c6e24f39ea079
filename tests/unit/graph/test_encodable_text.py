"""Requests to the model carry no lone surrogate, and leave the stored history untouched."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

from generalAgent.graph.compaction import summary_request
from generalAgent.graph.encodable_text import encodable_message, encodable_messages, encodable_text


def wire_bytes(messages) -> bytes:
    """The request body as the OpenAI client encodes it (UTF-8, non-ASCII kept)."""
    model = ChatOpenAI(model="test-model", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    payload = model._get_request_payload(messages)
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def test_lone_surrogates_become_the_replacement_character() -> None:
    assert encodable_text("a\ud800b") == "a\ufffdb"
    assert encodable_text("\udfff\ud83d") == "\ufffd\ufffd"  # halves of pairs, in any order
    assert encodable_text("\udc80") == "\ufffd"  # what surrogateescape makes of a stray byte


def test_encodable_text_is_returned_as_the_same_object() -> None:
    for text in ("", "plain", "中文 café 😀", "\ufffd"):
        assert encodable_text(text) is text


def test_a_tool_call_with_a_lone_surrogate_can_be_sent() -> None:
    call = AIMessage(
        content="",
        tool_calls=[
            {"name": "write_file", "args": {"path": "outputs/a.txt", "content": "x\ud800y"}, "id": "c1"}
        ],
        id="ai-1",
    )
    answer = ToolMessage(content="read \udcff from a file", tool_call_id="c1", id="tool-1")
    request = [SystemMessage("system"), HumanMessage("hi"), call, answer]
    with pytest.raises(UnicodeEncodeError):  # what broke every later request of the session
        wire_bytes(request)
    body = wire_bytes(encodable_messages(request)).decode("utf-8")
    assert "x\ufffdy" in body and "read \ufffd from a file" in body
    # The stored messages are not changed; the copies keep their ids.
    assert call.tool_calls[0]["args"]["content"] == "x\ud800y" and answer.content == "read \udcff from a file"
    fixed = encodable_messages(request)
    assert [m.id for m in fixed] == [m.id for m in request]


def test_messages_that_encode_are_passed_on_unchanged() -> None:
    message = HumanMessage(content=[{"type": "text", "text": "中文"}], id="h")
    assert encodable_message(message) is message


def test_the_same_history_gives_the_same_bytes_every_time() -> None:
    history = [HumanMessage("q \ud800", id="h"), AIMessage("a \udc00", id="a")]
    assert wire_bytes(encodable_messages(history)) == wire_bytes(encodable_messages(history))


def test_reasoning_and_content_blocks_are_made_encodable() -> None:
    message = AIMessage(
        content=[{"type": "text", "text": "t\ud800"}],
        additional_kwargs={"reasoning_content": "r\udbff"},
    )
    fixed = encodable_message(message)
    assert fixed.content == [{"type": "text", "text": "t\ufffd"}]
    assert fixed.additional_kwargs == {"reasoning_content": "r\ufffd"}


def test_the_summary_request_is_encodable() -> None:
    request = summary_request("old \ud800", ["user: a \udc00 b"], 500, "", [])
    wire_bytes(request)
    assert "\ufffd" in request[1].content
