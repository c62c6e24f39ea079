"""Plain text, Markdown and source code, read a piece at a time in their own encoding."""

from __future__ import annotations

import codecs
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from generalAgent.documents.encoding import decode_text, encoding_or_error, not_valid_text
from generalAgent.documents.reading import Reading, ReadLimit, file_type_of
from generalAgent.search.chunking import Block

# A text file is read, decoded and handed to the indexer this many bytes at a time: a 200 MB
# log costs the memory of a few pieces, not of the whole text several times over.
TEXT_PIECE_BYTES = 1 << 20


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
    text = decode_text(data, path.name, truncated=truncated)
    if truncated or len(text) > limit.chars:
        limit.stopped = True
    yield Block(text=text.replace("\r\n", "\n"), markdown=markdown)


def _text_pieces(handle: BinaryIO, name: str, reading: Reading) -> Iterator[tuple[str, bool]]:
    """The text of an open file, TEXT_PIECE_BYTES at a time, each piece but the last ending
    at a paragraph break (or a line break, or anywhere in a line longer than half a piece),
    with whether it continues the piece before. Joined by BLOCK_SEPARATOR the pieces give
    the file's text back (line ends as "\n"), but for an extra line break at a cut."""
    data = handle.read(TEXT_PIECE_BYTES)
    ahead = handle.read(TEXT_PIECE_BYTES)
    encoding = encoding_or_error(data, name, truncated=bool(ahead))
    decoder = codecs.getincrementaldecoder(encoding)()
    plain = True  # all text so far is ASCII, which reads the same in every encoding we know
    carry = ""
    continues = False
    while data:
        final = not ahead
        try:
            text = decoder.decode(data, final)
        except UnicodeDecodeError:
            if not (plain and encoding == "utf-8"):
                raise not_valid_text(name, encoding) from None
            # A long ASCII start chose UTF-8; the first other character shows the real encoding.
            data = decoder.getstate()[0] + data
            encoding = encoding_or_error(data + ahead, name, truncated=not final)
            decoder = codecs.getincrementaldecoder(encoding)()
            try:
                text = decoder.decode(data, final)
            except UnicodeDecodeError:
                raise not_valid_text(name, encoding) from None
        plain = plain and text.isascii()
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


def _piece_end(text: str) -> tuple[int, int]:
    """Where a piece of `text` ends (in its second half) and how many break characters follow."""
    half = len(text) // 2
    for separator in ("\n\n", "\n"):
        cut = text.rfind(separator, half)
        if cut >= 0:
            return cut, len(separator)
    return len(text), 0
