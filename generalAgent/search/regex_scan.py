"""Grepping an item's content with a regular expression, in bounded time and memory.

`search_file(regex=true)` and `generalagent search --regex` come here instead of the
ranked lookup: the pattern runs over the item's whole text, read in pieces (a 200 MB file
is never one string), and each match is mapped back to the chunk holding it, so a hit
names its place like any other.
"""

from __future__ import annotations

import sqlite3
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from generalAgent.display import N_, Message, carrying
from generalAgent.search.lookup import ChunkHit, QueryError, chunk_window, query_error
from generalAgent.search.regex_errors import regex_error_said
from generalAgent.search.storage import content_pieces

if TYPE_CHECKING:  # imported where a regex search runs: indexing must not wait for it
    import regex

MAX_REGEX_CHARS = 500
REGEX_SECONDS = 2.0  # a whole regex scan of one file
REGEX_WINDOW_CHARS = 1 << 20
REGEX_REACH_CHARS = 64 * 1024
REGEX_CONTEXT_CHARS = 256


def regex_chunks(conn: sqlite3.Connection, item_id: str, pattern: str, limit: int) -> list[ChunkHit]:
    """Chunks containing a match of the regular expression `pattern`, in document order."""
    if len(pattern) > MAX_REGEX_CHARS:
        raise query_error(
            N_("the regular expression is longer than {limit} characters"), limit=str(MAX_REGEX_CHARS)
        )
    import regex

    try:
        compiled = regex.compile(pattern, regex.IGNORECASE | regex.MULTILINE | regex.VERSION0)
    except regex.error as exc:
        # The library's own words, each phrase in the catalog (regex_errors.py), the position kept.
        said = Message(N_("invalid regular expression ({problem})"), {"problem": regex_error_said(exc)})
        raise carrying(QueryError, said) from None
    pieces = content_pieces(conn, item_id)
    if pieces is None:
        return []
    chunk_at = _ChunkAt(
        conn.execute(
            "SELECT chunk_index, start_position, end_position FROM chunks WHERE item_id = ?"
            " ORDER BY chunk_index",
            (item_id,),
        )
    )
    wanted: dict[int, int] = {}  # chunk_index -> matches in it
    try:
        for offset in _match_offsets(compiled, pieces, time.monotonic() + REGEX_SECONDS):
            index = chunk_at(offset)
            if index is None:
                continue
            if index not in wanted and len(wanted) >= limit:
                break
            wanted[index] = wanted.get(index, 0) + 1
    except TimeoutError:
        raise query_error(
            N_(
                "the regular expression took more than {seconds} s on this file and was stopped; "
                "use a simpler pattern (no nested repeats such as (a+)+) or search with words"
            ),
            seconds=f"{REGEX_SECONDS:g}",
        ) from None
    hits: list[ChunkHit] = []
    for index, count in wanted.items():
        hits.extend(replace(h, score=float(count)) for h in chunk_window(conn, item_id, index, index))
    return hits


def _match_offsets(compiled: regex.Pattern[str], pieces: Iterator[str], deadline: float) -> Iterator[int]:
    """Where the pattern's matches start in the text `pieces` make up, in order.

    The text is scanned REGEX_WINDOW_CHARS at a time, so a 200 MB file is never one string:
    a window reports the matches starting in it, seeing REGEX_REACH_CHARS past its end (a
    longer match is cut there) and REGEX_CONTEXT_CHARS before it (for ^, \\b and
    look-behinds). The whole scan is bounded by `deadline`, and the GIL is released while
    it runs, so the terminal stays live and Ctrl-C is heard.
    """
    buffer, base, own = "", 0, 0  # text from offset `base` on; matches before buffer[own] are out
    final = False
    while not final:
        while len(buffer) - own < REGEX_WINDOW_CHARS + REGEX_REACH_CHARS:
            piece = next(pieces, None)
            if piece is None:
                final = True
                break
            buffer += piece
        end = len(buffer) if final else len(buffer) - REGEX_REACH_CHARS
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        for match in compiled.finditer(buffer, pos=own, concurrent=True, timeout=remaining):
            if match.start() >= end:
                break
            yield base + match.start()
        keep = max(end - REGEX_CONTEXT_CHARS, 0)
        buffer, base, own = buffer[keep:], base + keep, end - keep


class _ChunkAt:
    """The chunk holding each of a series of increasing offsets (None between chunks), read
    from the item's chunk spans in order as the offsets advance, never all at once.

    Chunks are ordered by start and overlap their predecessor only, so the chunk holding an
    offset is among the last few starting at or before it: the first of those that does.
    """

    def __init__(self, spans: Iterable[tuple[int, int, int]]) -> None:
        self.spans = iter(spans)
        self.recent: deque[tuple[int, int, int]] = deque(maxlen=4)
        self.ahead = next(self.spans, None)

    def __call__(self, offset: int) -> int | None:
        while self.ahead is not None and self.ahead[1] <= offset:
            self.recent.append(self.ahead)
            self.ahead = next(self.spans, None)
        found = None
        for index, start, end in reversed(self.recent):
            if start <= offset < end:
                found = index
        return found
