"""An HTTP MCP server's answers read within a bound: a message too large is cut as it arrives.

The SDK's streamable HTTP transport reads a JSON answer whole (`response.aread()`) and an
event stream one event at a time, each event's data lines held until the blank line that
ends it: a server answering a tool call with 200 MB made the client hold all of it, then
copies of it, before the tools node cut it to TOOL_RESULT_MAX_CHARS. `capping_hook` sits
between httpx and the SDK, as `CappedLines` does for a stdio server's output, and gives
each message the same bound (MCP_MESSAGE_MAX_BYTES):

- a JSON answer (`application/json`, one message) is passed on whole when it is within the
  limit; a longer one is kept to its first `limit` bytes, the rest read and dropped, and the
  SDK gets `capped_lines.replacement` instead: an answer to the same request id saying it
  was cut and by which setting, then the first text of the result;
- an event stream (`text/event-stream`) is passed on an event at a time; an event whose
  lines pass the limit becomes one `data:` line with that replacement (nothing, when the
  message was no answer: a notification or a request of the server's);
- anything else (an error page, a 202) is read within the same limit.

Compressed answers are not asked for (`Accept-Encoding: identity`): a bound on compressed
bytes says nothing of what they expand to. A server that compresses anyway is refused.
Memory is bounded by `limit` per response, whatever the server sends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import httpx

from generalAgent.tools.mcp.capped_lines import replacement

# Ask for the bytes as they are: the bound is on what the client holds, so it must be on
# the bytes after decoding, and decoding ourselves would mean httpx's private decoders.
IDENTITY = {"Accept-Encoding": "identity"}


def capping_hook(limit: int) -> Callable[[httpx.Response], Awaitable[None]]:
    """An httpx response hook that puts every response's messages within `limit` bytes
    (module docstring). A hook, not a transport: a client given its own transport no longer
    takes the proxy from the environment (HTTPS_PROXY), and the hook runs before the body
    is read, streamed or not."""

    async def cap(response: httpx.Response) -> None:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in {"", "identity"}:
            await response.aclose()
            raise httpx.DecodingError(
                f"the MCP server compressed its answer ({encoding}) although it was asked not to",
                request=response.request,
            )
        kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        inner = response.stream
        assert isinstance(inner, httpx.AsyncByteStream)
        if kind == "text/event-stream":
            response.stream = CappedEvents(inner, limit)
        else:
            response.stream = CappedBody(inner, limit, answer=kind == "application/json")

    return cap


class CappedBody(httpx.AsyncByteStream):
    """A body held to `limit` bytes and passed on whole; a longer JSON-RPC answer becomes
    its replacement, any other longer body its first `limit` bytes."""

    def __init__(self, inner: httpx.AsyncByteStream, limit: int, answer: bool) -> None:
        self._inner = inner
        self._limit = limit
        self._answer = answer

    async def __aiter__(self) -> AsyncIterator[bytes]:
        head = bytearray()
        dropped = 0
        async for chunk in self._inner:
            room = self._limit - len(head)
            head += chunk[: max(room, 0)]
            dropped += max(len(chunk) - max(room, 0), 0)
        if not dropped:
            yield bytes(head)
        elif self._answer:
            yield replacement(bytes(head), self._limit, dropped)
        else:
            yield bytes(head)

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedEvents(httpx.AsyncByteStream):
    """A server-sent event stream passed on an event at a time, each event within `limit`."""

    def __init__(self, inner: httpx.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._line = bytearray()  # the current line's kept head
        self._line_dropped = 0  # bytes of the current line past the limit
        self._event = bytearray()  # the current event's whole lines, while within the limit
        self._data = bytearray()  # its data values joined by newlines (the JSON-RPC message), kept to limit
        self._data_lines = 0  # data lines of the current event
        self._dropped = 0  # bytes of the current event past the limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            out = self._feed(chunk)
            if out:
                yield out
        # An event the stream ended in the middle of is never dispatched (no blank line):
        # what is kept of it goes on unchanged, so the SDK sees the stream as the server sent it.
        if not self._dropped and not self._line_dropped and (self._event or self._line):
            yield bytes(self._event + self._line)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _feed(self, chunk: bytes) -> bytes:
        out = bytearray()
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = memoryview(chunk)[start : end if end >= 0 else len(chunk)]
            room = self._limit - len(self._line)
            self._line += piece[: max(room, 0)]
            self._line_dropped += max(len(piece) - max(room, 0), 0)
            if end < 0:
                break
            out += self._end_line()
            start = end + 1
        return bytes(out)

    def _end_line(self) -> bytes:
        line, line_dropped = bytes(self._line).rstrip(b"\r"), self._line_dropped
        self._line.clear()
        self._line_dropped = 0
        if not line and not line_dropped:  # a blank line ends the event
            return self._end_event()
        if line.startswith(b"data"):
            value = line[4:]
            value = value[1:] if value.startswith(b":") else b"" if value else value
            value = value[1:] if value.startswith(b" ") else value
            if self._data_lines:
                self._data += b"\n"
            self._data_lines += 1
            self._data += value[: max(self._limit - len(self._data), 0)]
        size = len(line) + line_dropped + 1
        if self._dropped or line_dropped or len(self._event) + size > self._limit:
            self._dropped += size
        else:
            self._event += line + b"\n"
        return b""

    def _end_event(self) -> bytes:
        event, data, dropped = bytes(self._event), bytes(self._data), self._dropped
        self._event.clear()
        self._data.clear()
        self._data_lines = self._dropped = 0
        if not dropped:
            return event + b"\n"
        answer = replacement(data, self._limit, dropped)
        return b"data: " + answer.rstrip(b"\n") + b"\n\n" if answer else b""
