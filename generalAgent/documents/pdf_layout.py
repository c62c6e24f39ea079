"""A PDF page as a reader sees it: running heads, footers and page numbers set apart, a
page set in columns read column by column (pdf_columns.py), and the page's text runs and
rules for the table finder (pdf_tables.py).

Running lines are found from the text alone, so they cost nothing on a page of prose: the
first and last two lines of each page, with digits folded ("Page 3" and "Page 4" are one
line), that come back on several pages are the running heads and footers; a lone page
number ("12", "- 12 -", "Page 12 of 40", "第 12 页") at the top or bottom is dropped on any
page.

Geometry is read only from pages that may hold a table or columns: pdfium's text
rectangles (one per run of text drawn at once) outnumbering the page's lines by half is the
sign (a table's cells are separate runs, a paragraph's line is one; pdfium puts the lines
of two columns drawn across the page a line at a time on one line of its text, two runs).
A page drawn a column at a time has one run a line and reads in order as it is; columns
drawn across the page whose lines sit on different baselines put each piece on a line of
pdfium's text, and are told by their first rectangles jumping right across white from one
to the next (`jumps_across`). A table
with a row taller than most of the page (a cell of a hundred words) has one run on each of
that cell's lines and falls short of the ratio; it is told by its other lines instead:
MIN_TABLE_LINES of them with a run set apart by a column's white starting at the same
place. The rectangles are read for that only when they outnumber the lines by as many,
and a page of prose, whose font changes start anywhere, rarely lines them up.
pypdfium2 is imported by the caller.
"""

from __future__ import annotations

import ctypes
import re
import struct
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple

from generalAgent.documents.pdf_columns import Region, may_have_gutter, reading_regions
from generalAgent.documents.pdf_tables import (
    COLUMN_GAP,
    MIN_TABLE_LINES,
    UNREAD,
    Line,
    Rule,
    Run,
    group_lines,
    table_stacks,
)

# Lines at each end of a page looked at for running heads and footers.
EDGE_LINES = 2
# A page may hold a table when pdfium's text rectangles are this many times its lines.
RUNS_PER_LINE = 1.5
# Text rectangles looked at for columns drawn across on different baselines (`jumps_across`),
# and the share of them that must jump right across white: every other one where two
# columns alternate, after a title or an abstract across the page.
ACROSS_SAMPLE = 48
ACROSS_SHARE = 0.3
# Points within which the runs of two lines start at the same place (a column's left edge).
ALIGN_SLOP = 2.0
# A path thinner than this (points) is a rule; shorter than MIN_RULE is a glyph or a tick.
RULE_THICKNESS = 2.5
MIN_RULE = 6.0
# Path objects read per page at most (a chart of a million points is not a table).
MAX_PATHS = 5_000
# pdfium's four coordinates of a text rectangle (doubles) and of an object's bounds (floats).
_FOUR_DOUBLES = struct.Struct("4d")
_FOUR_FLOATS = struct.Struct("4f")
_PAGE_NUMBER = re.compile(
    r"^[\s\-–—]*(?:(?:page|p\.|pg\.?)\s*)?(?:\d{1,5}|[ivxlc]{1,6})(?:\s*(?:of|/)\s*\d{1,5})?[\s\-–—]*$"
    r"|^\s*第\s*\d{1,5}\s*页(?:\s*[，,/]?\s*共\s*\d{1,5}\s*页)?\s*$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


def line_key(text: str) -> str:
    """A line as compared across pages: no whitespace, digits folded, case folded."""
    return _DIGITS.sub("#", "".join(text.split())).casefold()


def _lines(text: str) -> list[str]:
    return [line for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if line.strip()]


def running_keys(pages: Sequence[str]) -> set[str]:
    """Keys (`line_key`) of the lines that repeat at the top or bottom of the pages."""
    if len(pages) < 2:
        return set()
    seen: Counter[str] = Counter()
    for text in pages:
        lines = _lines(text)
        edge = {line_key(line) for line in [*lines[:EDGE_LINES], *lines[-EDGE_LINES:]]}
        seen.update(key for key in edge if key)
    # Half the pages of a short document, three of a longer one (a chapter's running head).
    needed = max(2, min(3, (len(pages) + 1) // 2))
    return {key for key, count in seen.items() if count >= needed}


def is_running(text: str, keys: set[str]) -> bool:
    return line_key(text) in keys or bool(_PAGE_NUMBER.match(text))


def strip_running(text: str, keys: set[str]) -> str:
    """`text` without the running heads, footers and page numbers at its two ends."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    filled = [n for n, line in enumerate(lines) if line.strip()]
    drop: set[int] = set()
    for n in filled[:EDGE_LINES]:
        if is_running(lines[n], keys):
            drop.add(n)
        else:
            break
    for n in reversed(filled[-EDGE_LINES:]):
        if is_running(lines[n], keys):
            drop.add(n)
        else:
            break
    if not drop or len(drop) == len(filled):  # a page of one repeated line is that line's page
        return text
    return "\n".join(line for n, line in enumerate(lines) if n not in drop)


def may_hold_table(textpage: Any, text: str) -> bool:
    """Whether the page is worth reading as geometry, for a table or columns (see the
    module's docstring)."""
    lines = text.count("\n") + 1
    rects = textpage.count_rects()
    if lines >= 3 and rects >= RUNS_PER_LINE * lines:
        return True
    if lines >= 3 and rects >= lines + MIN_TABLE_LINES and has_aligned_columns(page_boxes(textpage)):
        return True
    # pdfium may put such columns' lines on one line of its text, or each on its own.
    return jumps_across(textpage, min(rects, ACROSS_SAMPLE))


def jumps_across(textpage: Any, count: int) -> bool:
    """Whether the page's first `count` text rectangles jump right across a column's white
    from one to the next, often: columns drawn across the page a line at a time whose lines
    sit on different baselines (typeset independently, the second half a line lower). pdfium
    then puts every piece on a line of its own, so the rectangles do not outnumber the lines,
    and the page would be read in its drawn order, two columns' sentences interleaved. A page
    of prose goes on rightwards within a line by a word space and back left at each new line."""
    if count < 2 * MIN_TABLE_LINES:
        return False
    get_rect = _calls().get_rect
    values = ctypes.create_string_buffer(_FOUR_DOUBLES.size)  # left, top, right, bottom
    at = ctypes.addressof(values)
    size = ctypes.sizeof(ctypes.c_double)
    left, top, right, bottom = (ctypes.c_void_p(at + n * size) for n in range(4))
    handle = _handle(textpage)
    jumps = 0
    previous_right = None
    for index in range(count):
        get_rect(handle, index, left, top, right, bottom)
        x0, _, x1, _ = _FOUR_DOUBLES.unpack_from(values)
        if previous_right is not None and x0 - previous_right >= COLUMN_GAP:
            jumps += 1
        previous_right = x1
    return jumps >= MIN_TABLE_LINES + 1 and jumps >= ACROSS_SHARE * (count - 1)


def has_aligned_columns(boxes: Sequence[tuple[float, float, float, float]]) -> bool:
    """Whether MIN_TABLE_LINES lines of the text rectangles (left, bottom, right, top, in
    character order) each have a run, set apart from the one before it by a column's white,
    starting at the same place: the lines of a table beside its one tall row."""
    starts: Counter[int] = Counter()
    line: set[int] = set()
    previous: tuple[float, float, float, float] | None = None
    for box in boxes:
        middle = (box[1] + box[3]) / 2
        if previous is None or not previous[1] <= middle <= previous[3]:  # a new line
            starts.update(line)
            line = set()
        elif box[0] - previous[2] >= COLUMN_GAP:
            line.add(round(box[0] / ALIGN_SLOP))
        previous = box
    starts.update(line)
    # A start that falls on the edge of two slots is counted in both, as its neighbours may be.
    return any(starts[slot] + starts[slot + 1] >= MIN_TABLE_LINES for slot in starts)


class _Calls(NamedTuple):
    """pdfium's functions called once per character, rectangle or page object, taken by
    address with plain `c_void_p` arguments: pypdfium2's bindings check and convert each
    argument's pointer type, which cost more than the call itself on a page of tables."""

    get_rect: Callable[..., int]
    text_object: Callable[..., int | None]
    text_index: Callable[..., int]
    get_object: Callable[..., int | None]
    object_type: Callable[..., int]
    object_bounds: Callable[..., int]


@cache
def _calls() -> _Calls:
    """The functions of `_Calls` (read-only once made: the same for every document)."""
    import pypdfium2.raw as pdfium_c

    def bind(function: Any, result: Any, *arguments: Any) -> Callable[..., Any]:
        address = ctypes.cast(function, ctypes.c_void_p).value or 0
        return ctypes.CFUNCTYPE(result, *arguments)(address)

    pointer, integer = ctypes.c_void_p, ctypes.c_int
    return _Calls(
        bind(pdfium_c.FPDFText_GetRect, integer, pointer, integer, pointer, pointer, pointer, pointer),
        bind(pdfium_c.FPDFText_GetTextObject, pointer, pointer, integer),
        bind(pdfium_c.FPDFText_GetTextIndexFromCharIndex, integer, pointer, integer),
        bind(pdfium_c.FPDFPage_GetObject, pointer, pointer, integer),
        bind(pdfium_c.FPDFPageObj_GetType, integer, pointer),
        bind(pdfium_c.FPDFPageObj_GetBounds, integer, pointer, pointer, pointer, pointer, pointer),
    )


def _handle(wrapped: Any) -> ctypes.c_void_p:
    """A pypdfium2 page's or text page's pdfium handle, as the `c_void_p` the calls of
    `_calls` take: made once, it is passed as it is, where an int is converted on every call
    (a fifth of a call's cost, and these calls run once per character or rectangle)."""
    return ctypes.c_void_p(ctypes.cast(wrapped.raw, ctypes.c_void_p).value or 0)


def page_boxes(textpage: Any) -> list[tuple[float, float, float, float]]:
    """pdfium's text rectangles of the page (left, bottom, right, top), in character order."""
    import pypdfium2.raw as pdfium_c

    get_rect = _calls().get_rect
    values = ctypes.create_string_buffer(_FOUR_DOUBLES.size)  # left, top, right, bottom
    at = ctypes.addressof(values)
    size = ctypes.sizeof(ctypes.c_double)
    left, top, right, bottom = (ctypes.c_void_p(at + n * size) for n in range(4))
    # Unpacked by struct from a plain buffer: reading a ctypes array item by item cost a
    # third of this loop, which runs once per run of text on nearly every page of a manual.
    unpack = _FOUR_DOUBLES.unpack_from
    handle = _handle(textpage)
    boxes: list[tuple[float, float, float, float]] = []
    append = boxes.append
    for index in range(pdfium_c.FPDFText_CountRects(textpage, 0, -1)):
        get_rect(handle, index, left, top, right, bottom)
        x0, y1, x1, y0 = unpack(values)
        append((x0, y0, x1, y1))
    return boxes


class PageLayout(NamedTuple):
    """What a page's geometry says: the lines the table finder reads, region by region (a
    column apart from the next; one region on a page not set in columns; none when tables
    are not read or the page has no stack of lines that may be one), and the page's text
    in reading order when that is not the order it comes in."""

    regions: list[list[Line]]
    order: list[tuple[int, int, str]] | None  # pieces of the page text: start, end, what follows


def page_layout(
    textpage: Any,
    text: str,
    tables: bool = True,
    boxes: list[tuple[float, float, float, float]] | None = None,
) -> PageLayout | None:
    """The page's layout (see `PageLayout`), None when there is nothing to do: one column
    and no table to look for. `boxes`: the page's `page_boxes`, when the caller has them."""
    boxes = page_boxes(textpage) if boxes is None else boxes
    gutter = may_have_gutter(boxes, text.count("\n") + 1)
    if not tables and not gutter:
        return None
    make = Run._make  # a tuple made directly: one Run a rectangle, a thousand on a page of tables
    lines = group_lines([make((*box, "#", index, -1)) for index, box in enumerate(boxes)])
    regions = reading_regions(lines) if gutter else None
    if regions is None:
        read = table_lines(textpage, text, boxes, lines) if tables else []
        return PageLayout([read], None) if read else None
    runs = page_runs(textpage, text, boxes, set(range(len(boxes))))
    read_regions = [_read(region, runs) for region in regions]
    order = reading_order(read_regions, text)
    if order is None:  # a character no run holds: the page is read as it comes, losing nothing
        read = table_lines(textpage, text, boxes, lines) if tables else []
        return PageLayout([read], None) if read else None
    kept = [region.lines for region in read_regions if region.lines] if tables else []
    return PageLayout(kept, order)


def has_table_stack(boxes: list[tuple[float, float, float, float]]) -> bool:
    """Whether the page's text rectangles (`page_boxes`) make a stack of lines that may be a
    table (`table_stacks`, from geometry alone): on a page not read in columns, the table
    finder reads nothing else, so a page without one holds no table."""
    make = Run._make
    return bool(table_stacks(group_lines([make((*box, "#", index, -1)) for index, box in enumerate(boxes)])))


def _read(region: Region, runs: list[Run]) -> Region:
    """The region with its runs' text read (`runs`, by the placeholder's index)."""
    lines = [
        line.with_runs([runs[r.start] for r in line.runs if runs[r.start].text.strip()])
        for line in region.lines
    ]
    return Region([line for line in lines if line.runs], region.spanning)


def reading_order(regions: list[Region], text: str) -> list[tuple[int, int, str]] | None:
    """The page's text as pieces (start, end, what follows) in the regions' order: each line
    on a line of its own, a column going on into the next on the next line (a sentence the
    column break cut reads on), a region across the columns a paragraph of its own. None
    when a run was left unread, or a printed character of `text` belongs to no run."""
    pieces: list[tuple[int, int, str]] = []
    for n, region in enumerate(regions):
        for line in region.lines:
            for run in line.runs:
                if run.start < 0:
                    return None
                if pieces and pieces[-1][2] == " ":
                    end = pieces[-1][1]
                    if end <= run.start and not text[end : run.start].strip():
                        pieces[-1] = (pieces[-1][0], run.end, " ")  # the line's runs as pdfium spaced them
                        continue
                    if _CJK.match(text[end - 1 : end]) and _CJK.match(text[run.start : run.start + 1]):
                        pieces[-1] = (*pieces[-1][:2], "")  # no space inside Chinese
                pieces.append((run.start, run.end, " "))
            if pieces:
                pieces[-1] = (*pieces[-1][:2], "\n")
        following = regions[n + 1] if n + 1 < len(regions) else None
        if pieces and (region.spanning or (following is not None and following.spanning)):
            pieces[-1] = (*pieces[-1][:2], "\n\n")
    position = 0
    for start, end, _ in sorted(pieces):
        if start < position or text[position:start].strip():
            return None  # a piece twice, or text no run holds
        position = end
    if text[position:].strip():
        return None
    return pieces


def ordered_text(text: str, order: list[tuple[int, int, str]] | None) -> str:
    """The page's text in reading order (`reading_order`), or as it came."""
    if order is None:
        return text
    return "".join(text[start:end] + after for start, end, after in order)


def table_lines(
    textpage: Any, text: str, boxes: list[tuple[float, float, float, float]], lines: list[Line]
) -> list[Line]:
    """The page's printed lines with the text of the runs the table finder needs, [] when
    its layout holds no stack of lines that may be a table.

    The lines are first made from pdfium's rectangles alone; reading a rectangle's text
    costs a search of the page's characters, so only the lines that may make a table are
    read, with two lines above them (a caption) and one below, and the lines between them
    and the page's edge when they come close to it (running heads). The others keep a
    placeholder (`UNREAD`). `boxes` are the page's, `lines` made of them with a placeholder."""
    stacks = table_stacks(lines)
    if not stacks:
        return []
    chosen: set[int] = set()
    position = {id(line): n for n, line in enumerate(lines)}
    for stack in stacks:
        first, last = position[id(stack[0])], position[id(stack[-1])]
        # The page's running heads (footers) are read when a stack comes close to them: set
        # apart, a table under them still opens (ends) its page. Others are never needed,
        # and the last ones cost a walk over every character of the page.
        top = 0 if first <= EDGE_LINES + 2 else first - 2
        bottom = len(lines) if last >= len(lines) - EDGE_LINES - 3 else last + 2
        chosen.update(range(top, bottom))
    runs = page_runs(textpage, text, boxes, {run.start for n in chosen for run in lines[n].runs})
    read = [
        line.with_runs([runs[r.start] for r in line.runs if runs[r.start].text.strip()]) for line in lines
    ]
    return [line for line in read if line.runs]


def page_runs(
    textpage: Any, text: str, boxes: list[tuple[float, float, float, float]], wanted: set[int]
) -> list[Run]:
    """The page's text runs with their boxes; the `wanted` ones (indexes into `boxes`) with
    their text and where their characters sit in `text` (the page's `get_text_range()`),
    the others with a placeholder.

    pdfium makes its rectangles from the page's characters in order, one for each stretch
    of characters of one text object (the characters it generated, spaces and line ends,
    belong to none): walking the characters' objects once finds every rectangle's
    characters exactly, where asking for the character at a rectangle's position searched
    the whole page once a rectangle."""
    import pypdfium2.raw as pdfium_c

    last_wanted = max(wanted, default=-1)
    spans = char_spans(textpage, last_wanted + 1)
    text_index, handle = _calls().text_index, _handle(textpage)
    # A character's place in the text is its index unless pdfium left some character out
    # of the text (a NUL): then the text is shorter than the characters, and each is asked.
    same_places = pdfium_c.FPDFText_CountChars(textpage) == len(text)
    runs: list[Run] = []
    make, append, read = Run._make, runs.append, len(spans)
    for n, box in enumerate(boxes):
        if n >= read or n not in wanted:
            append(make((*box, UNREAD, -1, -1)))
            continue
        first, last = spans[n]
        if same_places:
            start, end = first, last + 1
        else:
            start = text_index(handle, first)
            end = text_index(handle, last) + 1
        if start < 0 or end <= start:
            append(make((*box, UNREAD, -1, -1)))
            continue
        trimmed = text[start:end].rstrip()
        lead = len(trimmed) - len(trimmed.lstrip())
        append(make((*box, trimmed[lead:], start + lead, start + len(trimmed))))
    return runs


def char_spans(textpage: Any, count: int) -> list[tuple[int, int]]:
    """The first and last character index of each of pdfium's first `count` text
    rectangles (FPDFText_CountRects over the whole page): the stretches of characters of
    one text object, characters without one (generated) skipped.

    One object's characters come one after the other (pdfium reads an object whole), so
    its end is found by galloping over them and halving back, not by asking for every
    character's object: a line of English in one object is a few calls, not one a letter."""
    import pypdfium2.raw as pdfium_c

    text_object, handle = _calls().text_object, _handle(textpage)
    total = pdfium_c.FPDFText_CountChars(textpage)
    spans: list[tuple[int, int]] = []
    current = None
    first = last = -1
    index = 0
    # The character after an object's end was asked for while finding that end: its owner
    # is kept for the next step rather than asked again (one call in seven).
    ahead, ahead_owner = -1, None
    while index < total:
        owner = ahead_owner if index == ahead else text_object(handle, index)
        if owner is None:
            index += 1
            continue
        if owner != current:
            if current is not None:
                spans.append((first, last))
                if len(spans) >= count:
                    return spans
            current, first = owner, index
        low, high, step = index, total, 4
        while low + step < total:
            probe = text_object(handle, low + step)
            if probe != owner:
                high, ahead_owner = low + step, probe
                break
            low, step = low + step, step * 2
        while high - low > 1:  # a generated space inside stops it early: the loop goes on after it
            middle = (low + high) // 2
            probe = text_object(handle, middle)
            if probe == owner:
                low = middle
            else:
                high, ahead_owner = middle, probe
        last = low
        index = ahead = low + 1
    if current is not None:
        spans.append((first, last))
    return spans


def page_rules(page: Any) -> list[Rule]:
    """The page's thin drawn lines (and thin filled rectangles, as some writers draw rules)."""
    import pypdfium2.raw as pdfium_c

    calls = _calls()
    get_object, object_type, object_bounds = calls.get_object, calls.object_type, calls.object_bounds
    values = ctypes.create_string_buffer(_FOUR_FLOATS.size)  # left, bottom, right, top
    at = ctypes.addressof(values)
    size = ctypes.sizeof(ctypes.c_float)
    pointers = tuple(ctypes.c_void_p(at + n * size) for n in range(4))
    unpack = _FOUR_FLOATS.unpack_from
    path = pdfium_c.FPDF_PAGEOBJ_PATH
    handle = _handle(page)
    rules: list[Rule] = []
    paths = 0
    for index in range(pdfium_c.FPDFPage_CountObjects(page)):
        item = get_object(handle, index)
        if object_type(item) != path:
            continue
        paths += 1
        if paths > MAX_PATHS:
            break
        if not object_bounds(item, *pointers):
            continue
        left, bottom, right, top = unpack(values)
        width, height = right - left, top - bottom
        if (height <= RULE_THICKNESS and width >= MIN_RULE) or (
            width <= RULE_THICKNESS and height >= MIN_RULE
        ):
            rules.append(Rule(left, bottom, right, top))
    return rules
