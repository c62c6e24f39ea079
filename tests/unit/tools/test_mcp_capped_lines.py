"""A stdio MCP server's lines cut at a byte limit as they stream in (tools/mcp/capped_lines.py)."""

from __future__ import annotations

import json

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from generalAgent.tools.mcp.capped_lines import CappedLines, first_text


class Chunks(anyio.abc.ByteReceiveStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        return self._chunks.pop(0)

    async def aclose(self) -> None:
        return None


def read_all(chunks: list[bytes], limit: int) -> bytes:
    async def run() -> bytes:
        stream, out = CappedLines(Chunks(chunks), limit), bytearray()
        while True:
            try:
                out += await stream.receive()
            except anyio.EndOfStream:
                return bytes(out)

    return anyio.run(run)


def split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@given(st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"")), max_size=8), st.integers(1, 97))
def test_lines_within_the_limit_pass_unchanged_however_they_are_chunked(
    lines: list[bytes], size: int
) -> None:
    data = b"".join(line + b"\n" for line in lines)
    assert read_all(split(data, size), 300) == data


def answer(request_id: object, text: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


@pytest.mark.parametrize("request_id", [7, "call-7"])
def test_a_long_answer_becomes_its_head_and_a_note_for_the_same_id(request_id: object) -> None:
    small = answer(1, "small")
    data = small + answer(request_id, 'quoted \\"中文\\" ' + "x" * 50_000) + small
    out = read_all(split(data, 4096), 2_000).split(b"\n")
    assert out[0] + b"\n" == small and out[2] + b"\n" == small
    cut = json.loads(out[1])
    assert cut["id"] == request_id
    note, text = cut["result"]["content"][0]["text"].split("\n", 1)
    assert "over MCP_MESSAGE_MAX_BYTES (2,000 bytes)" in note
    assert text.startswith('quoted \\"中文\\" xxx') and len(text) < 2_000


def test_a_long_notification_is_dropped() -> None:
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "y" * 9000}})
    assert read_all([note.encode() + b"\n", answer(2, "ok")], 1_000) == answer(2, "ok")


def test_the_text_of_a_head_cut_inside_an_escape_is_decoded_as_far_as_it_goes() -> None:
    assert first_text(b'{"id": 1, "result": {"content": [{"type": "text", "text": "ab\\u4e2') == "ab"
    assert first_text(b'{"text": "done", "more": "x"}') == "done"
    assert first_text(b'{"id": 1}') == ""
