"""Content-aware chunking: headings -> paragraphs -> sentences -> fixed windows with overlap.

Pure functions over strings; no I/O. A chunk is a span `[start, end)` of the text it was cut
from, so the stored offsets always point back at the exact passage, and the heading is the
nearest Markdown heading above it. Invariants (property-tested): chunks are non-empty, never
longer than `max_size`, numbered 0, 1, 2, ... and together they cover every non-blank
character of the text.

The order of the levels is the order of meaning: a paragraph is kept whole when it fits; a
long paragraph is cut between sentences (Chinese and English terminators stay with their
sentence, and the last sentences are repeated at the start of the next chunk up to `overlap`
characters, so a fact that straddles the cut is whole in one of the two); only a single
sentence longer than a chunk is cut at fixed width, with overlap.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(```|~~~)", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
# A sentence ends after Chinese terminators, after English ones followed by a space, or at a
# line break (lines of code, tables and lists are sentences of their own).
_SENTENCE_END = re.compile(r"[。！？；…]+[”’」』)）]*|[.!?;:]+[\"')\]]*(?=\s)|\n")


@dataclass(frozen=True)
class ChunkingConfig:
    """Chunk sizes in characters; from CHUNK_MAX_SIZE, CHUNK_OVERLAP and CHUNK_MIN_SIZE (whose
    defaults, 400 / 80 / 50, are DocumentSettings'), see IndexDatabase.chunking."""

    max_size: int
    overlap: int
    min_size: int

    def __post_init__(self) -> None:
        if self.max_size < 2:
            raise ValueError("max_size must be at least 2")
        if self.overlap < 0 or 2 * self.overlap >= self.max_size:
            raise ValueError("overlap must be non-negative and below half of max_size")
        if self.min_size < 0:
            raise ValueError("min_size must be non-negative")


@dataclass(frozen=True)
class Span:
    """`text[start:end]` is the chunk; `heading` is the nearest heading above it ('' if none)."""

    start: int
    end: int
    heading: str = ""


@dataclass(frozen=True)
class Block:
    """A piece of a document that chunks never cross: a PDF page, a slide, a sheet's rows.

    `whole` marks a block the extractor already sized as one chunk (spreadsheet rows with
    their header); it is kept whole when it fits. `markdown` is False for source code and
    plain text, where a line starting with '#' is a comment, not a heading. `place` is how a
    reader finds the block to cite it ("page 12", "slide 3", "sheet Sales, rows 2–21");
    '' where the heading is the place (DOCX, Markdown). `ocr` marks text read from an image;
    `figure` a page that is mostly a picture (a chart, a diagram) with little text.
    `continues` marks the next piece of a long text read in pieces: its opening lines are
    under the last heading of the piece before. `inserts` are the places in `text` where
    the blocks after it on its page stood in reading order (a PDF page's tables, whose rows
    are blocks of their own): a reader's view puts them back there, search chunks the text
    whole.
    """

    text: str
    page: int | None = None
    heading: str = ""
    whole: bool = False
    markdown: bool = True
    place: str = ""
    ocr: bool = False
    continues: bool = False
    figure: bool = False
    inserts: tuple[int, ...] = ()


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    start: int  # offsets into the document's content (the blocks joined by BLOCK_SEPARATOR)
    end: int
    page: int | None
    heading: str
    place: str = ""
    ocr: bool = False
    figure: bool = False


BLOCK_SEPARATOR = "\n\n"


def split_text(text: str, config: ChunkingConfig, *, markdown: bool = True) -> list[Span]:
    """Cut `text` into spans following the module's rules; [] for blank text."""
    spans: list[Span] = []
    sections = _sections(text) if markdown else [(0, len(text), "")]
    for start, end, heading in sections:
        spans.extend(_split_section(text, start, end, heading, config))
    return _merge_small(spans, config)


def chunk_blocks(blocks: Iterable[Block], config: ChunkingConfig) -> tuple[str, list[Chunk]]:
    """The document's content (blocks joined by BLOCK_SEPARATOR) and its chunks, in order."""
    parts: list[str] = []
    chunks: list[Chunk] = []
    for block, block_chunks in iter_chunks(blocks, config):
        parts.append(block.text)
        chunks.extend(block_chunks)
    return BLOCK_SEPARATOR.join(parts), chunks


def iter_chunks(blocks: Iterable[Block], config: ChunkingConfig) -> Iterator[tuple[Block, list[Chunk]]]:
    """Each block with its chunks, one block at a time: a long document is chunked as it is
    read. Offsets count in the content the blocks make joined by BLOCK_SEPARATOR."""
    index = 0
    offset = 0
    heading = ""  # the last heading seen, for a block that continues the one before
    for number, block in enumerate(blocks):
        if number:
            offset += len(BLOCK_SEPARATOR)
        stripped = block.text.strip()
        if block.whole and stripped and len(block.text) <= config.max_size:
            lead = len(block.text) - len(block.text.lstrip())
            spans = [Span(lead, lead + len(stripped), block.heading)]
        else:
            spans = split_text(block.text, config, markdown=block.markdown)
        default = block.heading or (heading if block.continues else "")
        chunks = []
        for span in spans:
            chunks.append(
                Chunk(
                    index=index,
                    text=block.text[span.start : span.end],
                    start=offset + span.start,
                    end=offset + span.end,
                    page=block.page,
                    heading=span.heading or default,
                    place=block.place,
                    ocr=block.ocr,
                    figure=block.figure,
                )
            )
            index += 1
        if chunks:
            heading = chunks[-1].heading
        offset += len(block.text)
        yield block, chunks


# -- levels ------------------------------------------------------------------------------
def _sections(text: str) -> list[tuple[int, int, str]]:
    """(start, end, heading) of each run of text under one Markdown heading."""
    if "#" not in text:  # no heading can start here (most pages of a PDF): no regex scans
        return [(0, len(text), "")]
    bounds: list[tuple[int, str]] = [(0, "")]
    fences = [m.start() for m in _FENCE.finditer(text)]
    for match in _HEADING.finditer(text):
        if bisect.bisect_left(fences, match.start()) % 2:
            continue  # inside a ``` code block: a comment, not a heading
        if match.start() == 0:
            bounds[0] = (0, match.group(2).strip())
        else:
            bounds.append((match.start(), match.group(2).strip()))
    sections = []
    for i, (start, heading) in enumerate(bounds):
        end = bounds[i + 1][0] if i + 1 < len(bounds) else len(text)
        sections.append((start, end, heading))
    # A heading with nothing under it (a chapter title followed by a section title) joins the
    # next section, so no chunk is a lone title.
    merged: list[tuple[int, int, str]] = []
    for start, end, heading in sections:
        if merged and _is_heading_only(text, merged[-1][0], merged[-1][1]):
            merged[-1] = (merged[-1][0], end, heading)
        else:
            merged.append((start, end, heading))
    return merged


def _is_heading_only(text: str, start: int, end: int) -> bool:
    body = text[start:end].strip()
    return bool(body) and "\n" not in body and _HEADING.fullmatch(body) is not None


def _split_section(text: str, start: int, end: int, heading: str, config: ChunkingConfig) -> list[Span]:
    spans: list[Span] = []
    group: list[tuple[int, int]] = []  # paragraphs of the chunk being built

    def flush(paragraphs: list[tuple[int, int]]) -> None:
        if paragraphs:
            spans.append(Span(paragraphs[0][0], paragraphs[-1][1], heading))

    for p_start, p_end in _pieces(text, start, end, _PARAGRAPH_BREAK):
        # A short last paragraph (a title line, an option name, "Example:") introduces what
        # follows: it opens the next chunk instead of closing this one.
        label = group[-1] if group and group[-1][1] - group[-1][0] < config.min_size else None
        if p_end - p_start > config.max_size:
            flush(group[:-1] if label else group)
            pieces = _split_paragraph(text, p_start, p_end, config, label)
            spans.extend(Span(s, e, heading) for s, e in pieces)
            group = []
        elif group and p_end - group[0][0] <= config.max_size:
            group.append((p_start, p_end))
        elif label and len(group) > 1 and p_end - label[0] <= config.max_size:
            flush(group[:-1])
            group = [label, (p_start, p_end)]
        else:
            flush(group)
            group = [(p_start, p_end)]
    flush(group)
    return spans


def _split_paragraph(
    text: str, start: int, end: int, config: ChunkingConfig, lead: tuple[int, int] | None
) -> list[tuple[int, int]]:
    sentences = _sentences(text, start, end)
    spans: list[tuple[int, int]] = []
    window: list[tuple[int, int]] = [lead] if lead else []  # sentences of the chunk being built
    for s_start, s_end in sentences:
        if s_end - s_start > config.max_size:
            if window:
                spans.append((window[0][0], window[-1][1]))
                window = []
            spans.extend(_fixed_windows(text, s_start, s_end, config))
            continue
        if window and s_end - window[0][0] > config.max_size:
            spans.append((window[0][0], window[-1][1]))
            window = _overlap_tail(window, s_end, config)
        window.append((s_start, s_end))
    if window:
        spans.append((window[0][0], window[-1][1]))
    return spans


def _overlap_tail(
    window: list[tuple[int, int]], next_end: int, config: ChunkingConfig
) -> list[tuple[int, int]]:
    """The last sentences of `window` to repeat before the next sentence (<= overlap chars)."""
    tail: list[tuple[int, int]] = []
    for s_start, s_end in reversed(window):
        if next_end - s_start > config.max_size or window[-1][1] - s_start > config.overlap:
            break
        tail.insert(0, (s_start, s_end))
    if len(tail) == len(window):
        tail = tail[1:]  # repeating the whole chunk would not move forward
    return tail


def _fixed_windows(text: str, start: int, end: int, config: ChunkingConfig) -> list[tuple[int, int]]:
    """Windows of at most max_size, each starting `overlap` before the previous one's end.

    A window ends at the last whitespace in its final `overlap` characters when there is one,
    so words are cut only where no space exists (long Chinese sentences, URLs, base64).
    """
    spans = []
    position = start
    while True:
        limit = min(position + config.max_size, end)
        if limit < end:
            cut = text.rfind(" ", max(position + config.max_size - config.overlap, position + 1), limit)
            if cut > position:
                limit = cut
        s, e = _strip(text, position, limit)
        if s < e:
            spans.append((s, e))
        if limit >= end:
            return spans
        position = max(limit - config.overlap, position + 1)


def _merge_small(spans: list[Span], config: ChunkingConfig) -> list[Span]:
    """Join a chunk shorter than min_size to its predecessor under the same heading if it fits."""
    merged: list[Span] = []
    for span in spans:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and span.end - span.start < config.min_size
            and previous.heading == span.heading
            and span.start >= previous.end
            and span.end - previous.start <= config.max_size
        ):
            merged[-1] = Span(previous.start, span.end, previous.heading)
        else:
            merged.append(span)
    return merged


# -- pieces ------------------------------------------------------------------------------
def _pieces(text: str, start: int, end: int, separator: re.Pattern[str]) -> list[tuple[int, int]]:
    """Non-blank stretches of text[start:end] between separators, stripped of whitespace."""
    pieces = []
    position = start
    for match in separator.finditer(text, start, end):
        s, e = _strip(text, position, match.start())
        if s < e:
            pieces.append((s, e))
        position = match.end()
    s, e = _strip(text, position, end)
    if s < e:
        pieces.append((s, e))
    return pieces


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The stripped sentences of text[start:end]. `_strip` is written out in the loop: a
    manual has tens of thousands of sentences (every line of a listing is one), and the
    call per sentence was a fifth of chunking it."""
    sentences = []
    position = start
    for boundary in [*(match.end() for match in _SENTENCE_END.finditer(text, start, end)), end]:
        s, e = position, boundary
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            sentences.append((s, e))
        position = boundary
    return sentences


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
