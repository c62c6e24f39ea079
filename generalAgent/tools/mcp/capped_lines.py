"""A stdio MCP server's output read a bounded line at a time: an answer too large is cut as it arrives.

The SDK's stdio transport reads the server's stdout into one string per JSON-RPC line
(growing it by concatenation) and then parses it: a 200 MB tool result peaked at 3.4 GB
before the tools node cut it to TOOL_RESULT_MAX_CHARS. `CappedLines` sits between the
process's stdout and the SDK: lines within `limit` bytes pass unchanged; of a longer line
only the first `limit` bytes are kept and the rest is read and dropped as it comes, and in
its place the SDK gets one small answer to the same request id: a line saying it was cut
and by which setting (MCP_MESSAGE_MAX_BYTES; first, so a later cut to TOOL_RESULT_MAX_CHARS
keeps it), then the first text of the result. A long
line that is no answer (a notification, a request of the server's) is dropped. Memory is
bounded by `limit`, whatever the server sends.
"""

from __future__ import annotations

import json
import re
from typing import Any

from anyio.abc import ByteReceiveStream

# The text shown of a cut answer comes from at most this much of its kept head; the model
# gets at most TOOL_RESULT_MAX_CHARS of it anyway.
TEXT_HEAD_BYTES = 256 * 1024
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})')
_TEXT = re.compile(rb'"text"\s*:\s*"')
_METHOD = re.compile(rb'^\s*\{[^{]{0,200}"method"\s*:')


class CappedLines(ByteReceiveStream):
    """`inner`'s bytes, each line at most `limit` bytes (module docstring)."""

    def __init__(self, inner: ByteReceiveStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._line = bytearray()  # the current line's kept head
        self._dropped = 0  # bytes of the current line read past the limit
        self._ready = bytearray()  # whole lines waiting for the reader

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while not self._ready:
            self._feed(await self._inner.receive(max_bytes))  # EndOfStream ends it as before
        out = bytes(self._ready)
        self._ready.clear()
        return out

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _feed(self, chunk: bytes) -> None:
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = memoryview(chunk)[start : end if end >= 0 else len(chunk)]
            room = self._limit - len(self._line)
            if self._dropped or len(piece) > room:
                self._line += piece[: max(room, 0)]
                self._dropped += len(piece) - max(room, 0)
            else:
                self._line += piece
            if end < 0:
                return
            if self._dropped:
                self._ready += replacement(bytes(self._line), self._limit, self._dropped)
            else:
                self._ready += self._line + b"\n"
            self._line.clear()
            self._dropped = 0
            start = end + 1


def replacement(head: bytes, limit: int, dropped: int) -> bytes:
    """The line that stands for a cut one: an answer to its request id with the first text
    of its result and a note; nothing (b"") when the head is no answer with an id."""
    found = _ID.search(head[:4096])
    if found is None or _METHOD.match(head):
        return b""
    request_id: Any = json.loads(found.group(1))
    size_mb = (len(head) + dropped) / 1_000_000
    note = (
        f"[cut: the server's answer was {size_mb:,.1f} MB, over MCP_MESSAGE_MAX_BYTES "
        f"({limit:,} bytes); the rest was not read. Ask the tool for less.]"
    )
    text = first_text(head)
    answer = {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {
            "content": [{"type": "text", "text": f"{note}\n{text}" if text else note}],
            # An error, because it is not the whole result: a tool that declares an output
            # schema would otherwise have the SDK refuse the answer for lacking structured content.
            "isError": True,
        },
    }
    return json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n"


def first_text(head: bytes) -> str:
    """The first `"text": "..."` string of a JSON head that may end anywhere, decoded as
    far as it goes (TEXT_HEAD_BYTES at most)."""
    found = _TEXT.search(head)
    if found is None:
        return ""
    raw = head[found.end() : found.end() + TEXT_HEAD_BYTES].decode("utf-8", errors="ignore")
    closing = re.search(r'(?<!\\)(?:\\\\)*"', raw)
    if closing is not None:
        raw = raw[: closing.end() - 1]
    for trim in range(7):  # an escape cut in the middle (`\u12`, `\`) cannot be decoded
        try:
            return str(json.loads(f'"{raw[: len(raw) - trim]}"'))
        except json.JSONDecodeError:
            continue
    return ""
