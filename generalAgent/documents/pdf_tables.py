"""Tables of a born-digital PDF page read as grids from its text runs and rules.

Pure functions over geometry: no pdfium here (pdf_layout.py reads a page into `Run`s and
`Rule`s). PDF coordinates are points with y going up. The steps, in order, each with why:

1. Runs (pieces of text on one printed line) are grouped into lines by vertical overlap.
2. A table is a stack of lines, most of them *gapped* (two runs on one line with at least
   COLUMN_GAP points of white between them: prose never leaves that gap, a table's
   cells always do), with the lines that continue a wrapped cell in between. A line whose
   single run crosses a column gap (a paragraph after the table) ends it.
3. Columns are the white valleys of the stack's x-coverage (a spanning label crossing a
   valley in a line or two is tolerated), or the ruled table's vertical rules where it has
   them.
4. Rows: a ruled table's rows lie between its horizontal rules; otherwise a row starts at
   a line with text in the first column (the key column; a wrapped cell leaves it empty),
   or after a gap clearly taller than a line.
5. The header is the first row (two when a group header spans columns above the names),
   or every row above a booktabs mid-rule.
6. A table that ends a page and a table that opens the next with the same columns are one
   table (`merge_continued`): a repeated header is dropped, a row cut by the page break is
   joined again.

Wrapped cell text is joined as a reader reads it (`join_cell_lines`): no space between two
CJK characters, none after a hyphen that ends a line inside a word.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from operator import itemgetter
from typing import NamedTuple

from generalAgent.documents.pdf_captions import is_caption

# The text of a run the page reader did not read (pdf_layout.wanted_runs): outside tables.
UNREAD = "\u2026"
# White between two runs of one line that only a table leaves (points; a space is ~3).
COLUMN_GAP = 8.0
# A valley between columns is at least this wide (points).
MIN_VALLEY = 4.0
# A table has at least this many gapped lines and columns.
MIN_TABLE_LINES = 3
MIN_COLUMNS = 2
# A line of a table is at most this many line heights below the one above.
MAX_LINE_GAP = 2.6
# Rows set apart by at least this much more white (in line heights) than a wrapped
# cell's lines are told apart by it.
ROW_GAP_JUMP = 0.3
# A "row" with this many lines in two of its columns at once is two columns of a page's
# text, not a row (`_columns_of_text`).
COLUMN_TEXT_LINES = 8
# Points within which the rules of one frame meet (`frames`).
FRAME_SLOP = 2.0
# Caption: the line right above (or below) a table that names it.
_CAPTION = re.compile(r"^\s*(?:table|tab\.|tbl\.|表)\s*(?:\d|[IVX]+\b|[一二三四五六七八九十])", re.IGNORECASE)
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
_SOFT_HYPHENS = ("\x02", "\u00ad", "\ufffe")
_LEADERS = re.compile(r"(?:\.\s?){5,}|…{2,}|·{4,}")
_NUMBER = re.compile(r"^[-+]?[\d,.%]+$")
# A list item's mark, alone in the first column of every row: a bulleted or numbered list
# ("•", "–", "1)", "(2)", "3.", "a)"), no table. A table's numbering column holds bare numbers.
_BULLET = re.compile(
    r"^(?:[•◦▪▫‣⁃∙·○●■□►▶▸✓✔❖➢➤*+–—-]{1,2}|\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)）]|[（(](?:\d{1,3}|[a-z])[)）])$"
)


class Run(NamedTuple):
    """A piece of text on one printed line: its box (points, y up) and where its characters
    are in the page's text (`start`/`end`, -1 when unknown). A tuple: a page has hundreds."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    start: int = -1
    end: int = -1


class Rule(NamedTuple):
    """A drawn line (a thin path): horizontal when wider than tall."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def horizontal(self) -> bool:
        return self.x1 - self.x0 >= self.y1 - self.y0


@dataclass
class Line:
    runs: list[Run]
    top: float
    bottom: float
    is_gapped: bool | None = None  # worked out once (see `gapped`)

    @property
    def height(self) -> float:
        return self.top - self.bottom

    @property
    def text(self) -> str:
        return " ".join(run.text for run in self.runs)

    def gapped(self) -> bool:
        if self.is_gapped is None:
            runs = self.runs
            self.is_gapped = any(runs[n + 1].x0 - runs[n].x1 >= COLUMN_GAP for n in range(len(runs) - 1))
        return self.is_gapped

    def with_runs(self, runs: list[Run]) -> Line:
        """The same line with its runs replaced (their text read), its geometry kept."""
        return Line(runs, self.top, self.bottom, self.is_gapped if len(runs) == len(self.runs) else None)


@dataclass
class PageTable:
    """One table as found on one page."""

    page: int  # 0-based
    top: float
    bottom: float
    separators: list[float]  # x of the white (or rule) between columns
    grid: list[list[str]]  # every row as read, the header's first
    header_count: int
    caption: str = ""
    spans: list[tuple[int, int]] = field(default_factory=list)  # its characters in the page text
    opens_page: bool = False  # nothing but running heads above it (or its `lead`)
    # The lines above it at the top of its page, in its key column only: the end of a row
    # the page break cut, when the table continues one from the page before (`_lead`).
    lead: str = ""
    lead_spans: list[tuple[int, int]] = field(default_factory=list)
    ends_page: bool = False  # nothing but footers below it
    merged_into: int = -1  # the index of the document's table it is part of (merge_continued)

    @property
    def header(self) -> list[list[str]]:
        return fill_spanned(self.grid[: self.header_count])

    @property
    def rows(self) -> list[list[str]]:
        return self.grid[self.header_count :]


@dataclass
class Table:
    """A table of a document, merged across the pages it spans."""

    pages: list[int]  # 1-based
    caption: str
    header: list[list[str]]
    rows: list[list[str]]
    row_pages: list[int]  # the page each row is on (1-based)
    ocr: bool = False  # read by OCR from a scanned page: a cell may be misread

    @property
    def width(self) -> int:
        return max((len(r) for r in [*self.header, *self.rows]), default=0)

    def column_names(self) -> list[str]:
        """One name per column: the header rows' labels of a column joined ("Dates Created"),
        a group label carried over the columns it spans; an unnamed column by its number."""
        names = []
        for column in range(self.width):
            parts: list[str] = []
            for row in self.header:
                value = row[column] if column < len(row) else ""
                if value and (not parts or parts[-1] != value):
                    parts.append(value)
            names.append(" ".join(parts) or f"column {column + 1}")
        return names


# -- text ----------------------------------------------------------------------------------
def join_cell_lines(lines: Sequence[str]) -> str:
    """The lines of a wrapped cell as one text: no space between two CJK characters, none
    after a hyphen ending a line inside a word ("multi-" + "agent"; pdfium marks such a
    hyphen, and it is printed, so it stays), one space otherwise."""
    text = ""
    for raw in lines:
        line = " ".join(raw.split())
        if not line:
            continue
        if not text:
            text = line
        elif text.endswith(_SOFT_HYPHENS):  # pdfium's mark for a hyphen ending a line
            text = text.rstrip("".join(_SOFT_HYPHENS)) + "-" + line
        elif (text.endswith("-") and len(text) > 1 and text[-2].isalnum() and line[0].isalnum()) or (
            _CJK.match(text[-1]) and _CJK.match(line[0])
        ):
            text += line
        else:
            text += " " + line
    for mark in _SOFT_HYPHENS:
        text = text.replace(mark, "")
    return text


def _same_line_join(runs: Sequence[Run]) -> str:
    """Runs of one line in one cell: touching runs join without a space (a font change
    inside a word), others with one, CJK neighbours without."""
    text = ""
    previous: Run | None = None
    for run in runs:
        piece = " ".join(run.text.split())
        if not piece:
            continue
        if not text:
            text = piece
        elif (
            previous is not None
            and run.x0 - previous.x1 < 0.8
            or (_CJK.match(text[-1]) and _CJK.match(piece[0]))
        ):
            text += piece
        else:
            text += " " + piece
        previous = run
    return text


def normalised(text: str) -> str:
    """A cell as compared (header dedupe, benchmarks): NFKC, no whitespace, case folded."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


# -- lines ---------------------------------------------------------------------------------
def group_lines(runs: Sequence[Run]) -> list[Line]:
    """Runs in printed lines, top to bottom, each line's runs left to right. A run belongs
    to a line when its vertical middle lies within the line's band, or when the line so far
    lies within the run's height: small glyphs set high on a line (the typewriter quote
    marks around `"%"` or `”systemctl …”`, whose middles are above the words') come first
    in the order of middles, and made a line of their own above their words, which read
    as a gapped line (a false table in a paragraph) or put a closing quote before its cell."""
    # Sorted as (-middle, x0, position) tuples: the position keeps a stable sort's order for
    # ties and spares a key function called once a run (a page of tables has a thousand).
    placed = sorted(
        (-(run.y0 + run.y1) / 2, run.x0, n, run) for n, run in enumerate(runs) if run.text.strip()
    )
    lines: list[Line] = []
    line: Line | None = None
    for negative, _, _, run in placed:
        middle = -negative
        if line is not None and (
            line.bottom - 0.5 <= middle <= line.top + 0.5
            or (run.y0 - 0.5 <= line.bottom and line.top <= run.y1 + 0.5)
        ):
            line.runs.append(run)
            if run.y1 > line.top:
                line.top = run.y1
            if run.y0 < line.bottom:
                line.bottom = run.y0
        else:
            line = Line([run], run.y1, run.y0)
            lines.append(line)
    # A line of such glyphs above a smaller run that started the words' line (a "+" between
    # its quotes) lies within the words' line once that is whole: it joins it.
    n = 0
    while n + 1 < len(lines):
        upper, lower = lines[n], lines[n + 1]
        if lower.bottom - 0.5 <= upper.bottom and upper.top <= lower.top + 0.5:
            lower.runs.extend(upper.runs)
            del lines[n]
            n = max(n - 1, 0)  # the line above may lie within the joined one too
        else:
            n += 1
    by_left = itemgetter(0)  # a Run's x0
    for line in lines:
        if len(line.runs) > 1:
            line.runs.sort(key=by_left)
    return lines


def _merged_rules(rules: Sequence[Rule]) -> tuple[list[Rule], list[Rule]]:
    """(horizontal, vertical) rules, collinear touching pieces joined (a ruled table draws
    each cell's border on its own)."""
    # Sorted as (key, position, rule) tuples, the position keeping a stable sort's order for
    # ties: a ruled table draws each cell's border as pieces (the Debian Reference: up to 413
    # a page), and a key function and the `horizontal` property called on each cost more
    # than the sort.
    across = [(r, r.x1 - r.x0 >= r.y1 - r.y0) for r in rules]
    horizontal = [
        r for *_, r in sorted((round((r.y0 + r.y1) / 2), r.x0, n, r) for n, (r, h) in enumerate(across) if h)
    ]
    vertical = [
        r
        for *_, r in sorted(
            (round((r.x0 + r.x1) / 2), r.y0, n, r) for n, (r, h) in enumerate(across) if not h
        )
    ]
    joined_h: list[Rule] = []
    for r in horizontal:
        last = joined_h[-1] if joined_h else None
        if last and abs((last.y0 + last.y1) / 2 - (r.y0 + r.y1) / 2) < 1.5 and r.x0 <= last.x1 + 2:
            joined_h[-1] = Rule(last.x0, min(last.y0, r.y0), max(last.x1, r.x1), max(last.y1, r.y1))
        else:
            joined_h.append(r)
    joined_v: list[Rule] = []
    for r in vertical:
        last = joined_v[-1] if joined_v else None
        if last and abs((last.x0 + last.x1) / 2 - (r.x0 + r.x1) / 2) < 1.5 and r.y0 <= last.y1 + 2:
            joined_v[-1] = Rule(min(last.x0, r.x0), last.y0, max(last.x1, r.x1), max(last.y1, r.y1))
        else:
            joined_v.append(r)
    return joined_h, joined_v


# -- finding tables ------------------------------------------------------------------------
def find_tables(lines: Sequence[Line], rules: Sequence[Rule], page: int = 0) -> list[PageTable]:
    """The tables among a page's `lines` (top to bottom), with the page's drawn `rules`."""
    if sum(line.gapped() for line in lines) < MIN_TABLE_LINES:
        return []
    horizontal, vertical = _merged_rules(rules)
    heights = sorted(line.height for line in lines)
    line_height = max(heights[len(heights) // 2], 4.0)
    tables: list[PageTable] = []
    index = 0
    while index < len(lines):
        if not lines[index].gapped():
            index += 1
            continue
        stack = _stack(lines, index, line_height, horizontal)
        try:
            table = _table(stack, horizontal, vertical, line_height, page) if stack else None
        except _ColumnsOfText:
            # No table starts inside it either: the search goes on below its last line.
            index = next(n for n in range(index, len(lines)) if lines[n] is stack[-1]) + 1
            continue
        if table is None:
            index += 1
            continue
        first = next(n for n, line in enumerate(lines) if line.top == table.top)
        last = next(n for n in range(first, len(lines)) if lines[n].bottom == table.bottom)
        if first and _header_across(table, lines[first - 1], lines[first : last + 1]):
            first -= 1
        _caption(table, lines, first, last, line_height)
        table.opens_page = first == 0 or (
            first == 1 and bool(table.caption) and lines[0].text == table.caption
        )
        if not table.opens_page and _lead(table, lines[:first], line_height):
            table.opens_page = True
            table.lead = join_cell_lines([_same_line_join(line.runs) for line in lines[:first]])
            table.lead_spans = [(r.start, r.end) for line in lines[:first] for r in line.runs if r.start >= 0]
        table.ends_page = last == len(lines) - 1
        tables.append(table)
        index = last + 1
    return tables


def _header_across(table: PageTable, line: Line, stack: Sequence[Line]) -> bool:
    """Take `line`, right above the table, as its header when it is the column names set as
    one string across the white between the columns (gnuplot's "Format Explanation", whose
    one run kept it out of the table and made the first row its header): as close above
    the first row as the rows are to each other, within the table's width, short, crossing
    a separator, and cut at the spaces nearest the separators it crosses into one name
    per column. Returns whether it was taken (the table then starts at it)."""
    if table.header_count > 1 or len(line.runs) != 1 or _CAPTION.match(line.text) or len(stack) < 2:
        return False
    gaps = sorted(upper.bottom - lower.top for upper, lower in zip(stack, stack[1:], strict=False))
    spacing = 1.5 * gaps[len(gaps) // 2]  # a header's rule or padding may widen its gap a little
    left = min(li.runs[0].x0 for li in stack)
    right = max(li.runs[-1].x1 for li in stack)
    x0, x1 = line.runs[0].x0, line.runs[-1].x1
    if line.bottom - stack[0].top > spacing + 1 or x0 < left - COLUMN_GAP or x1 > right + COLUMN_GAP:
        return False
    if x1 - x0 > 0.6 * (right - left):
        return False  # a sentence above the table, not its column names
    crossed = [s for s in table.separators if x0 < s < x1]
    text = " ".join(line.text.split())
    if not crossed or len(text.split()) > 2 * (len(table.separators) + 1):
        return False
    # Where each separator falls in the text, if its characters were evenly wide; the
    # space nearest each is the cut.
    spaces = [n for n, ch in enumerate(text) if ch == " "]
    cuts: list[int] = []
    for s in crossed:
        at = (s - x0) / (x1 - x0) * len(text)
        free = [n for n in spaces if n not in cuts and (not cuts or n > cuts[-1])]
        if not free:
            return False
        cuts.append(min(free, key=lambda n: abs(n - at)))
    pieces = [text[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    if len(pieces) != len(table.separators) + 1 or _column_of(line.runs[0], table.separators):
        return False  # a name for every column, or no header
    table.grid.insert(0, pieces)
    table.header_count = 1
    table.top = line.top
    table.spans.extend((run.start, run.end) for run in line.runs if run.start >= 0)
    return True


def _lead(table: PageTable, above: Sequence[Line], line_height: float) -> bool:
    """Whether the lines `above` a table, the first of its page, are the end of a row the
    page break cut: one or two lines, close above it and to each other, no caption, their
    text in the key column alone. A word processor breaks a row whose key cell wraps inside
    it (LibreOffice's Chinese held-out table: "characters" alone above the rules); left out,
    the table did not open its page and was not merged with the part before it."""
    if not above or len(above) > 2 or not table.separators:
        return False
    lowest = above[-1]
    if lowest.bottom - table.top > MAX_LINE_GAP * line_height:
        return False
    for upper, lower in zip(above, above[1:], strict=False):
        if upper.bottom - lower.top > MAX_LINE_GAP * line_height:
            return False
    return all(
        not line.gapped() and not _CAPTION.match(line.text) and line.runs[-1].x1 < table.separators[0]
        for line in above
    )


def table_stacks(lines: Sequence[Line]) -> list[list[Line]]:
    """The stacks of lines that may be tables, from their geometry alone (no text needed):
    what `find_tables` then reads."""
    if sum(line.gapped() for line in lines) < MIN_TABLE_LINES:
        return []
    heights = sorted(line.height for line in lines)
    line_height = max(heights[len(heights) // 2], 4.0)
    stacks = []
    index = 0
    while index < len(lines):
        stack = _stack(lines, index, line_height, []) if lines[index].gapped() else []
        if stack:
            stacks.append(stack)
            index = lines.index(stack[-1]) + 1
        else:
            index += 1
    return stacks


def _stack(lines: Sequence[Line], start: int, line_height: float, horizontal: list[Rule]) -> list[Line]:
    """The lines from `start` that make one table: gapped lines and the wrapped lines
    between them, up to two ungapped lines in a row or a gap taller than a few lines."""
    stack = [lines[start]]
    left = lines[start].runs[0].x0
    second_column = lines[start].runs[1].x0 if len(lines[start].runs) > 1 else lines[start].runs[0].x1
    # Lines above the first gapped one that are indented past the key column: the end of a
    # row cut by the page break, at the top of the next page.
    for line in reversed(lines[:start]):
        if (
            line.gapped()
            or line.runs[0].x0 < left + COLUMN_GAP
            or line.bottom - stack[0].top > MAX_LINE_GAP * line_height
        ):
            break
        stack.insert(0, line)
    plain = 0  # ungapped lines at the end of the stack
    for line in lines[start + 1 :]:
        if line.runs[0].text == UNREAD:
            break  # a line the reader left unread is no line of a table
        gap = stack[-1].bottom - line.top
        if gap > MAX_LINE_GAP * line_height and not any(
            line.top - 1 <= (r.y0 + r.y1) / 2 <= stack[-1].bottom + 1 and _under(r, stack) for r in horizontal
        ):
            break  # a tall gap with no rule of the table's across it
        if _CAPTION.match(line.runs[0].text):
            break  # a caption under the table
        if line.gapped():
            plain = 0
        elif line.runs[0].x0 < left + COLUMN_GAP:
            if line.runs[-1].x1 > second_column + 2:
                break  # from the key column into the next: prose after the table
            plain += 1  # a wrapped key cell, or a caption
            if plain > 2:
                break
        stack.append(line)
    if sum(line.gapped() for line in stack) < MIN_TABLE_LINES:
        return []
    return stack  # ungapped lines at its end are a last row's wrapped cells, or prose (_table)


def _under(rule: Rule, stack: Sequence[Line]) -> bool:
    """Whether most of a rule lies under the stack's text: a table's rule is as wide as the
    table, where the top of a boxed note drawn across the page under a small table (the
    Debian Reference's "Tip" boxes) is no row's border."""
    left = min(line.runs[0].x0 for line in stack)
    right = max(line.runs[-1].x1 for line in stack)
    return min(rule.x1, right) - max(rule.x0, left) >= 0.5 * (rule.x1 - rule.x0)


def _valleys(stack: Sequence[Line]) -> list[float]:
    """x of the white between columns: where (almost) no line of the stack has text."""
    events: list[tuple[float, int]] = []
    for line in stack:
        for run in line.runs:
            events.append((run.x0, 1))
            events.append((run.x1, -1))
    events.sort()
    # A spanning label may cross a valley in a line or two, at most half the gapped
    # lines: a row taller than the rest of the table (a cell of a hundred words beside short
    # ones) made an eighth of the stack more than the runs of its key columns, and no valley
    # was found between them.
    tolerance = min(len(stack) // 8, sum(line.gapped() for line in stack) // 2)
    depth = 0
    separators: list[float] = []
    valley_start: float | None = None
    left, right = events[0][0], events[-1][0]
    for x, step in events:
        before = depth
        depth += step
        if before > tolerance >= depth and left < x < right:
            valley_start = x
        elif before <= tolerance < depth and valley_start is not None:
            if x - valley_start >= MIN_VALLEY:
                separators.append((valley_start + x) / 2)
            valley_start = None
    return separators


def _table(
    stack: list[Line],
    horizontal: list[Rule],
    vertical: list[Rule],
    line_height: float,
    page: int,
) -> PageTable | None:
    framed = _framed_apart(stack, horizontal, vertical)
    if framed is not None:
        # A table right above such frames ends where they start; no table is in them.
        above = [line for line in stack if line.bottom > framed]
        if sum(line.gapped() for line in above) >= MIN_TABLE_LINES:
            return _table(above, horizontal, vertical, line_height, page)
        raise _ColumnsOfText
    top, bottom = stack[0].top, stack[-1].bottom
    # The table's extent from its gapped lines: a prose line below it may start further left.
    left = min(line.runs[0].x0 for line in stack if line.gapped())
    right = max(line.runs[-1].x1 for line in stack if line.gapped())
    inside_v = [
        (r.x0 + r.x1) / 2
        for r in vertical
        if left + 2 < (r.x0 + r.x1) / 2 < right - 2 and r.y0 < top and r.y1 > bottom
    ]
    separators = _cluster(inside_v) if len(inside_v) >= 2 else _valleys(stack)
    # A line without a gap that crosses the columns over most of the table's width is
    # prose (in one run, or in several where a word is set in another font): the table
    # ends above it.
    if separators:
        for n, line in enumerate(stack):
            if (
                n
                and not line.gapped()
                and any(run.x0 < s - 2 and run.x1 > s + 2 for run in line.runs for s in separators)
                and line.runs[-1].x1 - line.runs[0].x0 > 0.6 * (right - left)
            ):
                stack = stack[:n]
                while stack and not stack[-1].gapped():
                    stack.pop()
                if sum(li.gapped() for li in stack) < MIN_TABLE_LINES:
                    return None
                return _table(stack, horizontal, vertical, line_height, page)
    if len(separators) + 1 < MIN_COLUMNS:
        return None
    # Ungapped lines after the last gapped one continue its wrapped cells when they start
    # right of the key column or close below; one starting in it further down is the prose
    # that follows the table.
    row_gap = _row_gap(stack, line_height)
    while (
        len(stack) > 1
        and not stack[-1].gapped()
        and _column_of(stack[-1].runs[0], separators) == 0
        and (row_gap < 0 or stack[-2].bottom - stack[-1].top > row_gap)
    ):
        stack = stack[:-1]
    top, bottom = stack[0].top, stack[-1].bottom
    width = len(separators) + 1
    across = [
        (r.y0 + r.y1) / 2
        for r in horizontal
        if min(r.x1, right) - max(r.x0, left) > 0.5 * (right - left)
        and bottom - 1 < (r.y0 + r.y1) / 2 < top + 1
    ]
    inner = [y for y in across if bottom + 1 < y < top - 1]
    keyed = sum(1 for line in stack if _column_of(line.runs[0], separators) == 0)
    # A caption heading the stack is above the table's top rule: that rule parts the caption
    # from the table but is no border between rows (a booktabs table under its caption
    # looked ruled row by row, its top and mid rules two inner rules, and its body one row).
    head = stack[1].top if len(stack) > 1 and _CAPTION.match(stack[0].text) else top
    ruled_rows = sum(1 for y in inner if y < head - 1) >= max(2, keyed // 2)
    rows_lines: list[list[Line]] = []
    boundaries: list[float] = sorted(inner, reverse=True)
    row_gap = _row_gap(stack, line_height)
    for line in stack:
        start_row = not rows_lines
        if not start_row:
            previous = rows_lines[-1][-1]
            crossed = any(line.top - 1 <= y <= previous.bottom + 1 for y in boundaries)
            if ruled_rows:
                start_row = crossed
            else:
                gap = previous.bottom - line.top
                if row_gap >= 0:
                    start_row = crossed or gap > row_gap
                else:
                    start_row = (
                        crossed or _column_of(line.runs[0], separators) == 0 or gap > 1.2 * line_height
                    )
        if start_row:
            rows_lines.append([line])
        else:
            rows_lines[-1].append(line)
    if _columns_of_text(rows_lines, separators):
        raise _ColumnsOfText
    # Most rows fill two cells or more; told from where the runs stand before any cell is
    # read (a run always has text), as most stacks tried are no table.
    if sum(
        1
        for lines in rows_lines
        if len({bisect.bisect_right(separators, run.x0 + 1) for line in lines for run in line.runs}) >= 2
    ) < max(2, len(rows_lines) // 2):
        return None
    # Dot leaders in a run are in its cell too: a table of contents is told before its cells
    # are read (the test on the cells below catches leaders set as several runs).
    if (
        sum(1 for lines in rows_lines if any(_LEADERS.search(r.text) for li in lines for r in li.runs))
        > len(rows_lines) / 3
    ):
        return None
    grid = [_cells(lines, separators, width) for lines in rows_lines]
    if sum(1 for row in grid if any(_LEADERS.search(c) for c in row)) > len(grid) / 3:
        return None  # a table of contents or an index: titles, dot leaders, page numbers
    if sum(1 for row in grid if sum(1 for c in row if c) >= 2) < max(2, len(grid) // 2):
        return None
    keys = [row[0] for row in grid if row[0]]
    if len(keys) >= 2 and all(_BULLET.match(key) for key in keys):
        return None  # a bulleted list: its marks stand apart from the items as a column would
    opening = [cell for cell in grid[0] if cell]
    if opening and opening[-1].endswith((":", "：")):
        # A sentence that announces what follows ("adjust the frame with \fboxrule:"), its
        # words spaced out, is no row of names: what is under it may still be a table.
        rest = stack[len(rows_lines[0]) :]
        if sum(line.gapped() for line in rest) < MIN_TABLE_LINES:
            return None
        return _table(rest, horizontal, vertical, line_height, page)
    header_count = _header_count(grid, rows_lines, boundaries, ruled_rows)
    spans = [(run.start, run.end) for line in stack for run in line.runs if run.start >= 0]
    return PageTable(page, top, bottom, separators, grid, header_count, spans=spans)


def frames(horizontal: Sequence[Rule], vertical: Sequence[Rule]) -> list[tuple[float, float, float, float]]:
    """Closed frames drawn with rules (left, bottom, right, top): two horizontal rules with
    the same ends joined by a vertical rule at each end. Rules as `_merged_rules` gives
    them, so a ruled table's inner rules, which run on across its columns, make no frame
    of a cell: its only frame is its outer border."""
    by_ends: dict[tuple[int, int], list[Rule]] = {}
    for rule in horizontal:
        by_ends.setdefault((round(rule.x0), round(rule.x1)), []).append(rule)
    found: list[tuple[float, float, float, float]] = []
    for rules in by_ends.values():
        for upper, lower in combinations(sorted(rules, key=lambda r: -r.y0), 2):
            x0, x1 = min(upper.x0, lower.x0), max(upper.x1, lower.x1)
            sides = [
                r
                for r in vertical
                if r.y0 <= lower.y1 + FRAME_SLOP
                and r.y1 >= upper.y0 - FRAME_SLOP
                and (abs(r.x0 - x0) <= FRAME_SLOP or abs(r.x1 - x1) <= FRAME_SLOP)
            ]
            if any(abs(r.x0 - x0) <= FRAME_SLOP for r in sides) and any(
                abs(r.x1 - x1) <= FRAME_SLOP for r in sides
            ):
                found.append((x0, lower.y0, x1, upper.y1))
    return found


def _framed_apart(
    stack: Sequence[Line], horizontal: Sequence[Rule], vertical: Sequence[Rule]
) -> float | None:
    """The top of the highest two frames side by side, white between them, that hold text
    of the stack; None when there are none. A code listing in its box beside the box of what
    it typesets (lshort-zh-cn's examples, each box's lines on their own baselines), two
    boxed notes: a person reads one box, then the other; their lines only look like a
    table's rows because they face each other."""
    if len(vertical) < 4:
        return None
    top, bottom = stack[0].top, stack[-1].bottom
    holding = [
        frame
        for frame in frames(horizontal, vertical)
        if frame[1] < top
        and frame[3] > bottom
        and any(
            frame[0] <= (run.x0 + run.x1) / 2 <= frame[2] and frame[1] <= (run.y0 + run.y1) / 2 <= frame[3]
            for line in stack
            for run in line.runs
        )
    ]
    return max(
        (
            max(a[3], b[3])
            for a in holding
            for b in holding
            if a[2] < b[0] and min(a[3], b[3]) > max(a[1], b[1])
        ),
        default=None,
    )


class _ColumnsOfText(Exception):
    """A stack of lines is a page set in columns (`_columns_of_text`) or text in frames side
    by side (`_framed_apart`): neither it nor any
    stack starting inside it is a table (tried from its next line, the last few lines of
    such a page looked like a small table of their own)."""


def _columns_of_text(rows_lines: Sequence[Sequence[Line]], separators: Sequence[float]) -> bool:
    """Whether the "rows" are a page set in columns (a two-column index, a glossary): most
    of them hold COLUMN_TEXT_LINES lines or more in two columns at once, or there is one
    row under the "header" and it is that tall (a page of entries whose columns the valleys
    did not split, under the running head). A table's tall row has one long cell beside
    short ones, among other rows; read as a table, each such "row" came back as one huge
    cell, cut into pieces under the running head as the header (TeX for the Impatient's
    index and command summary: 3,460 of its 4,794 chunks, which pushed its prose out of
    the search's candidates)."""
    if len(rows_lines) <= 2 and max(len(lines) for lines in rows_lines) >= COLUMN_TEXT_LINES:
        return True
    tall = 0
    for lines in rows_lines:
        per_column: dict[int, int] = {}
        for line in lines:
            for column in {bisect.bisect_right(separators, run.x0 + 1) for run in line.runs}:
                per_column[column] = per_column.get(column, 0) + 1
        if sum(1 for count in per_column.values() if count >= COLUMN_TEXT_LINES) >= 2:
            tall += 1
    return 2 * tall >= len(rows_lines)


def fill_spanned(header: Sequence[Sequence[str]]) -> list[list[str]]:
    """Header rows with a group label (every row but the last) standing in each column it
    spans: written once, in its first column, it carries right up to the next label."""
    filled = []
    for depth, row in enumerate(header):
        cells, carry = list(row), ""
        if depth < len(header) - 1:
            for column, value in enumerate(cells):
                carry = value or carry
                cells[column] = carry
        filled.append(cells)
    return filled


def _row_gap(stack: Sequence[Line], line_height: float) -> float:
    """The white above a line that starts a row, when rows are spaced further apart than
    the lines of a wrapped cell (a cell's padding): the middle of the widest jump between
    the stack's sorted gaps, if it is clear (ROW_GAP_JUMP of a line). -1 when rows and
    wrapped lines are set alike (the key column then tells them apart). A caption that
    heads the stack is left out: the white under it is no row's padding (lshort-zh-cn's
    booktabs tables, a caption over rows set line under line: the caption's white was the
    widest jump, and every row of the body became one)."""
    if stack and _CAPTION.match(stack[0].text):
        stack = stack[1:]
    gaps = sorted(upper.bottom - lower.top for upper, lower in zip(stack, stack[1:], strict=False))
    if len(gaps) < 2:
        return -1.0
    jump, at = max((b - a, n) for n, (a, b) in enumerate(zip(gaps, gaps[1:], strict=False)))
    if jump < max(2.5, ROW_GAP_JUMP * line_height):
        return -1.0
    return gaps[at] + jump / 2


def _cluster(xs: list[float]) -> list[float]:
    out: list[list[float]] = []
    for x in sorted(xs):
        if out and x - out[-1][-1] < 3:
            out[-1].append(x)
        else:
            out.append([x])
    return [sum(group) / len(group) for group in out]


def _column_of(run: Run, separators: Sequence[float]) -> int:
    return bisect.bisect_right(separators, run.x0 + 1)


def _cells(lines: Sequence[Line], separators: Sequence[float], width: int) -> list[str]:
    parts: list[list[str]] = [[] for _ in range(width)]
    columns: list[dict[int, list[Run]]] = []
    for line in lines:
        by_column: dict[int, list[Run]] = {}
        for run in line.runs:
            column = bisect.bisect_right(separators, run.x0 + 1)  # _column_of, inlined: per run
            if column in by_column:
                by_column[column].append(run)
            else:
                by_column[column] = [run]
        columns.append(by_column)
    if len(columns) > 1:
        _marks_to_their_words(columns)
    for by_column in columns:
        for column, runs in by_column.items():
            # One run in a cell's line (most cells): its text with its spaces made single.
            if len(runs) == 1:
                parts[column].append(" ".join(runs[0].text.split()))
            else:
                parts[column].extend(_same_line_join(band) for band in _stacked(runs))
    return [join_cell_lines(p) if len(p) != 1 or _has_soft_hyphen(p[0]) else p[0] for p in parts]


def _marks_to_their_words(columns: list[dict[int, list[Run]]]) -> None:
    """Move a cell's quote marks to the line of the words they enclose. The Debian
    Reference sets a command between quote marks small and high, centred on a row whose
    first cell wraps: the marks' middles fall in the first cell's upper line, the command's
    in the line below, and the cell read `” ” journalctl -b`. A line's part of a cell made
    only of marks (each under 0.6 of a text run's height, within its height and touching
    its left or right end) joins the line of that run, in the line above or below."""
    for n, by_column in enumerate(columns):
        for column, runs in list(by_column.items()):
            if len(runs) > 2:
                continue
            for other in (n - 1, n + 1):
                if not 0 <= other < len(columns) or column not in columns[other]:
                    continue
                words = columns[other][column]
                if all(_encloses(words, mark) for mark in runs):
                    words.extend(runs)
                    words.sort(key=itemgetter(0))  # a Run's x0
                    del by_column[column]
                    break


def _encloses(words: Sequence[Run], mark: Run) -> bool:
    """Whether `mark` is a quote mark of one of `words`: much shorter, within its height,
    touching its left or right end."""
    height = mark.y1 - mark.y0
    return any(
        height < 0.6 * (word.y1 - word.y0)
        and word.y0 - 0.5 <= mark.y0
        and mark.y1 <= word.y1 + 0.5
        and (-1.5 <= word.x0 - mark.x1 <= 3.0 or -1.5 <= mark.x0 - word.x1 <= 3.0)
        for word in words
    )


def _stacked(runs: Sequence[Run]) -> list[list[Run]]:
    """A cell's runs of one printed line in the lines of the cell they are on, top to bottom,
    each left to right. A row whose cells are centred on its height sets a cell of two
    lines one above and one below the one-line cells beside it, which tie the three into one
    printed line (`group_lines`); the cell's two runs, one over the other, were then joined
    as pieces of one line ("Not" over "supported" read "Notsupported", and a wrapped
    description's halves came back in the wrong order). Runs of text share a line when
    their heights overlap by a quarter of the smaller; a mark much shorter than the text (a
    quote mark set high, a superscript) is no line of its own: it joins the line nearest."""
    tallest = max(run.y1 - run.y0 for run in runs)
    bands: list[list[Run]] = []
    marks: list[Run] = []
    for run in sorted(runs, key=lambda r: -(r.y0 + r.y1) / 2):
        if run.y1 - run.y0 < 0.6 * tallest:
            marks.append(run)
            continue
        if bands:
            band = bands[-1]
            bottom = min(r.y0 for r in band)
            top = max(r.y1 for r in band)
            smaller = min(run.y1 - run.y0, top - bottom)
            if min(top, run.y1) - max(bottom, run.y0) > 0.25 * smaller:
                band.append(run)
                continue
        bands.append([run])
    if len(bands) <= 1:
        return [list(runs)]
    middles = [sum(r.y0 + r.y1 for r in band) / (2 * len(band)) for band in bands]
    for mark in marks:
        middle = (mark.y0 + mark.y1) / 2
        bands[min(range(len(bands)), key=lambda n: abs(middle - middles[n]))].append(mark)
    by_left = itemgetter(0)  # a Run's x0
    return [sorted(band, key=by_left) for band in bands]


def _has_soft_hyphen(text: str) -> bool:
    """Whether a one-line cell holds a soft-hyphen mark `join_cell_lines` takes out."""
    return "\x02" in text or "\u00ad" in text or "\ufffe" in text


def _header_count(
    grid: list[list[str]], rows_lines: list[list[Line]], boundaries: list[float], ruled: bool
) -> int:
    """Header rows: those above a mid-rule of a table not ruled row by row (booktabs), else
    the first row, and the second too when the first is a group header over it."""
    if len(grid) < 2:
        return 0
    if not ruled and boundaries:
        below = [n for n, lines in enumerate(rows_lines) if lines[0].top < boundaries[0]]
        if below and 0 < below[0] <= 3:
            return below[0]
    first, second = grid[0], grid[1]
    if (
        len(grid) > 2
        and 2 * sum(1 for c in first if c) <= len(first)
        and all(second)
        and not any(_NUMBER.match(c) for c in second)
    ):
        return 2
    return 1


def _caption(table: PageTable, lines: Sequence[Line], first: int, last: int, line_height: float) -> None:
    for n in (first - 1, last + 1):
        if 0 <= n < len(lines):
            line = lines[n]
            near = (line.bottom - table.top if n < first else table.bottom - line.top) < 3 * line_height
            if near and is_caption(line.text):
                table.caption = " ".join(line.text.split())
                table.spans.extend((run.start, run.end) for run in line.runs if run.start >= 0)
                return


# -- across pages --------------------------------------------------------------------------
def merge_continued(found: Sequence[PageTable]) -> list[Table]:
    """The document's tables: a table ending a page continues in one opening the next page
    with as many columns at the same places; a repeated header is dropped and a row the page
    break cut (its first cell empty) joined to the row it began."""
    tables: list[Table] = []
    raw_headers: list[list[list[str]]] = []  # each table's header rows as read, for dedupe
    previous: PageTable | None = None
    for table in found:
        if (
            tables
            and previous is not None
            and previous.ends_page
            and table.opens_page
            and table.page == previous.page + 1
            and _same_columns(previous, table)
        ):
            merged = tables[-1]
            if table.lead and merged.rows:  # the cut row's key cell ends above the table
                merged.rows[-1][0] = join_cell_lines([merged.rows[-1][0], table.lead])
                table.spans.extend(table.lead_spans)
            body = continued_rows(raw_headers[-1], table.grid, table.header_count)
            if body and merged.rows and _cut_row(body[0], merged.rows):
                cut = body.pop(0)
                merged.rows[-1] = [
                    join_cell_lines([a, b]) for a, b in zip(merged.rows[-1], cut, strict=False)
                ]
            table.merged_into = len(tables) - 1
            merged.rows.extend(body)
            merged.row_pages.extend([table.page + 1] * len(body))
            if table.page + 1 not in merged.pages:
                merged.pages.append(table.page + 1)
        else:
            rows = [list(r) for r in table.rows]
            tables.append(
                Table([table.page + 1], table.caption, table.header, rows, [table.page + 1] * len(rows))
            )
            raw_headers.append([list(r) for r in table.grid[: table.header_count]])
            table.merged_into = len(tables) - 1
        previous = table
    return tables


def _cut_row(row: Sequence[str], above: Sequence[Sequence[str]]) -> bool:
    """Whether `row`, opening a table's next page, is the end of the row the page break cut:
    its key cell is empty, or a column nearly every row fills is empty in it."""
    if not any(row):
        return False
    if not row[0].strip():
        return True
    for column, value in enumerate(row):
        filled = sum(1 for r in above if column < len(r) and r[column].strip())
        if not value.strip() and filled >= 0.9 * len(above) and len(above) >= 3:
            return True
    return False


def continued_rows(
    header: Sequence[Sequence[str]], grid: Sequence[Sequence[str]], header_count: int
) -> list[list[str]]:
    """The rows a table's continuation adds: its grid without the header when it repeats
    the first part's (`header`); with it when it does not (the "header" is then data)."""
    if header and len(grid) >= len(header):
        repeated = all(
            [normalised(c) for c in grid[n]] == [normalised(c) for c in header[n]] for n in range(len(header))
        )
        if repeated:
            return [list(r) for r in grid[len(header) :]]
    return [list(r) for r in grid]


def _same_columns(a: PageTable, b: PageTable) -> bool:
    if len(a.separators) != len(b.separators):
        return False
    return all(abs(x - y) < 15 for x, y in zip(a.separators, b.separators, strict=True))
