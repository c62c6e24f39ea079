"""Lines on the ACP's stdin that are not one JSON-RPC object get an error, not a crash.

The SDK's connection reads one JSON value a line and takes it for an object: the line `[]`
(an empty JSON-RPC batch), `1` or `"x"` raised AttributeError in its receive loop and ended
the agent. ACP has no batches, so every line that is not an object is answered here with
JSON-RPC's own error (-32600 Invalid Request; -32700 Parse error for what is no JSON) and
never reaches the SDK; objects pass through unchanged.
"""

from __future__ import annotations

import asyncio
import json

# Read as the connection read stdin: a prompt may embed a whole file.
LINE_LIMIT = 50 * 1024 * 1024


def refusal(line: bytes) -> bytes | None:
    """The JSON-RPC error line for `line` when it is not a JSON object; None to pass it on."""
    text = line.strip()
    if not text or text.startswith(b"{"):
        return None  # an object (or what the SDK itself reports as unparseable)
    try:
        json.loads(text)
    except ValueError:
        code, message = -32700, "Parse error: a line must be one JSON-RPC object"
    else:
        code, message = -32600, "Invalid Request: a line must be one JSON-RPC object (ACP has no batches)"
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return json.dumps(error).encode() + b"\n"


async def pump_objects(
    source: asyncio.StreamReader, to_sdk: asyncio.StreamReader, out: asyncio.StreamWriter
) -> None:
    """Copy `source`'s lines to `to_sdk`, answering on `out` those that are not objects."""
    try:
        while True:
            try:
                line = await source.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                line = end.partial
            except asyncio.LimitOverrunError:
                line = await source.read(LINE_LIMIT)  # the SDK reports an overlong line itself
            if not line:
                break
            answer = refusal(line)
            if answer is None:
                to_sdk.feed_data(line)
            else:
                out.write(answer)
                await out.drain()
    finally:
        to_sdk.feed_eof()
