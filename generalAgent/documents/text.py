"""Plain text, Markdown and source code, read a piece at a time in their own encoding."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from generalAgent.documents.encoding import ReplacingDecoder, decode_text_replacing, encoding_or_error
from generalAgent.documents.reading import Reading, ReadLimit, file_type_of
from generalAgent.search.chunking import Block

# A text file is read, decoded and handed to the indexer this many bytes at a time: a 200 MB
# log costs the memory of a few pieces, not of the whole text several times over.
TEXT_PIECE_BYTES = 1 << 20
_NOT_ASCII = re.compile(rb"[\x80-\xff]")


def read_text(document: BinaryIO, path: Path, limit: ReadLimit, reading: Reading) -> Iterator[Block]:
    markdown = file_type_of(path) == "markdown"
    reading.total = (
        document.getbuffer().nbytes
        if isinstance(document, io.BytesIO)
        else os.fstat(document.fileno()).st_size
    )
    if limit.chars is None:
        for text, continues in _text_pieces(document, path.name, reading):
            yield Block(text=text, markdown=markdown, continues=continues)
        return
    # A preview reads the start only: at most 4 bytes a character in any encoding we read.
    data = document.read(limit.chars * 4 + 4)
    truncated = document.read(1) != b""
    decoded = decode_text_replacing(data, path.name, truncated=truncated)
    if (said := decoded.said(path.name)) is not None:
        reading.notes.append(said)
    if truncated or len(decoded.text) > limit.chars:
        limit.stopped = True
    yield Block(text=decoded.text.replace("\r\n", "\n"), markdown=markdown)


def _text_pieces(handle: BinaryIO, name: str, reading: Reading) -> Iterator[tuple[str, bool]]:
    """The text of an open file, TEXT_PIECE_BYTES at a time, each piece but the last ending
    at a paragraph break (or a line break, or anywhere in a line longer than half a piece),
    with whether it continues the piece before. Joined by BLOCK_SEPARATOR the pieces give
    the file's text back (line ends as "\n"), but for an extra line break at a cut.

    The encoding is guessed from the start (encoding.py); bytes not valid in it are replaced
    and `reading.notes` gets one line saying how many and where the first was."""
    data = handle.read(TEXT_PIECE_BYTES)
    ahead = handle.read(TEXT_PIECE_BYTES)
    decoder = ReplacingDecoder(encoding_or_error(data, name, truncated=bool(ahead)))
    plain = True  # all bytes so far are ASCII, which reads the same in every encoding we know
    carry = ""
    continues = False
    while data:
        final = not ahead
        if plain and decoder.encoding == "utf-8" and (other := _NOT_ASCII.search(data)):
            # A long ASCII start chose UTF-8; the first other character shows the real
            # encoding, guessed from there (nothing is pending after ASCII).
            found = encoding_or_error(data[other.start() :], name, truncated=not final)
            decoder = ReplacingDecoder(found, lines=decoder.lines)
        text = decoder.decode(data, final)
        plain = plain and data.isascii()
        reading.done += len(data)
        buffer = carry + text
        held = "\r" if not final and buffer.endswith("\r") else ""  # half of a "\r\n"
        buffer = buffer[: len(buffer) - len(held)].replace("\r\n", "\n")
        if final:
            piece, carry = buffer, ""
        else:
            cut, gap = _piece_end(buffer)
            piece, carry = buffer[:cut], buffer[cut + gap :] + held
        if piece.strip():
            yield piece, continues
            continues = True
        data, ahead = ahead, (handle.read(TEXT_PIECE_BYTES) if ahead else b"")
    if (said := decoder.result("").said(name)) is not None:
        reading.notes.append(said)


def _piece_end(text: str) -> tuple[int, int]:
    """Where a piece of `text` ends (in its second half) and how many break characters follow."""
    half = len(text) // 2
    for separator in ("\n\n", "\n"):
        cut = text.rfind(separator, half)
        if cut >= 0:
            return cut, len(separator)
    return len(text), 0
