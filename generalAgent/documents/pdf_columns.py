"""The columns of a PDF page: where a two- or three-column page's gutters are, and its
printed lines in the order a reader reads them, down the first column, then the next.

A PDF's text comes in the order its producer drew it. Most draw a column at a time, and
that order is already right; some draw across the page a line at a time (left column's
line, then the right column's line at the same height), which read as the PDF's text
interleaves two unrelated sentences on every line, and which the table finder took for a
two-column table. This module decides from geometry alone (pdf_tables.Run boxes; no
pdfium here, no text needed), so it costs nothing until a page is known to be columns.
The steps, each with why:

1. The body: the page's lines without a running head or footer standing apart at the top
   or bottom (a footer in the left margin would otherwise end up between two columns).
2. Gutters: vertical strips at least MIN_GUTTER wide where (almost) no run of the body
   has ink, with a good share of the runs on each side. A title, a figure's caption or a
   paragraph across the page crosses a gutter; up to MAX_CROSSING of the lines may.
3. Columns of prose, not a table's: one or two gutters (two or three columns) of about
   equal width (two may differ more: a boxed note or sidebar beside the text), each with
   several lines that mostly fill it (MIN_FILL, and a third of them to its edge: FULL),
   as a justified or ragged paragraph does and a table's cells do not, without a table's white
   inside their lines (MAX_GAPPED; a table of contents' page numbers aside), and running
   on line after line (MAX_BLANK), where a table's column of short cells waits, blank,
   for the row's longest cell.
4. Bands: a line crossing a gutter spans the columns and stays where it is, between the
   band of columns above it and the one below; so does a stack of table rows laid across
   the columns (cells on both sides of a gutter, none of them a line of prose), so that
   a table is never cut into columns.
5. Reading order: band by band, each band's columns left to right, each column top down.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from statistics import median

from generalAgent.documents.pdf_tables import COLUMN_GAP, Line, Run, group_lines

# White between two columns (points): LaTeX sets 10, most journals 12 to 18; a word space
# is about 3, and white this wide never lines up down a page of prose by chance.
MIN_GUTTER = 8.0
# At most this share of the body's lines may cross a gutter (a title, an abstract or a
# figure's caption across the page, above or between the columns).
MAX_CROSSING = 0.25
# Each side of a gutter holds at least this share of the body's runs, and every column
# text on at least MIN_COLUMN_LINES lines.
MIN_SIDE = 0.15
MIN_COLUMN_LINES = 4
# Two or three columns: more strips of white down a page are a table's.
MAX_COLUMNS = 3
# More strips of white than this down a page are a table's, and are not tried as gutters.
MAX_CANDIDATES = 5
# Columns of one page are about as wide as each other (the widest at most this many
# times the narrowest).
MAX_WIDTH_RATIO = 1.6
# A sidebar beside the text (a boxed note, a margin column of its own) is narrower: two
# columns may differ up to this much when both are prose by every test below (a table's
# narrow column of keys or numbers is not: it neither fills its width nor runs on).
MAX_SIDEBAR_RATIO = 3.5
# A column of prose: its lines fill this share of its width (median); a table's column
# of short cells does not.
MIN_FILL = 0.6
# A column of prose: at least this share of its lines reach FULL of its width (the lines
# inside a paragraph run to its right edge, justified or not). A two-column table of
# short entries (an operation beside its command) fills 0.6 to 0.7 of its columns in the
# median too, but only its longest entries reach the edge: the Debian Reference's
# systemctl table 0.14 of its lines, LaTeX News' columns 0.51 to 0.73.
FULL = 0.85
MIN_FULL = 0.35
# A column of prose: at most this share of its lines have a table's white inside them
# (inline code or a formula set apart).
MAX_GAPPED = 0.25
# A column of prose: at most this share of its lines have more white than BLANK of a
# line's height under them (a heading, a paragraph set apart). Measured: LaTeX News'
# columns 0 to 0.38; in the tables of bench/pdf_tables and the Debian Reference that
# split into two even halves, the emptier half 0.48 to 1.
MAX_BLANK = 0.43
BLANK = 0.8
# Width (points) of the slices `may_have_gutter` looks at the page in.
SLICE = 2.0
# Lines at each end of the page that may be a running head or footer set apart.
EDGE_LINES = 2
# A table laid across the columns: at least this many table rows one after the other.
MIN_TABLE_ROWS = 3


@dataclass
class Region:
    """Lines read one after the other: a column of one band, or lines across the page."""

    lines: list[Line]
    spanning: bool


@dataclass(frozen=True)
class Columns:
    """The page's columns: their left and right edges (points), gutters between them."""

    edges: list[tuple[float, float]]
    # The gutters and their middles, made once: `column_of` and `crosses` run once a run
    # for every set of gutters tried.
    gutters: list[tuple[float, float]] = field(init=False, repr=False, compare=False)
    middles: list[float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        gutters = [(left[1], right[0]) for left, right in zip(self.edges, self.edges[1:], strict=False)]
        object.__setattr__(self, "gutters", gutters)
        object.__setattr__(self, "middles", [g[0] + (g[1] - g[0]) / 2 for g in gutters])

    def unevenness(self) -> float:
        """The widest column's width over the narrowest's (a page's columns are alike)."""
        widths = [right - left for left, right in self.edges]
        return max(widths) / min(widths)

    def column_of(self, run: Run) -> int:
        return bisect.bisect_right(self.middles, (run.x0 + run.x1) / 2)

    def crosses(self, run: Run) -> bool:
        return any(run.x0 < left - 1 and run.x1 > right + 1 for left, right in self.gutters)


def reading_regions(lines: Sequence[Line]) -> list[Region] | None:
    """The page's lines (top to bottom, as `group_lines` makes them) in reading order,
    region by region; None when the page is not set in columns (read it as it comes)."""
    if len(lines) < 2 * MIN_COLUMN_LINES:
        return None
    first, last = _body_bounds(lines)
    body = lines[first:last]
    columns = find_columns(body)
    if columns is None:
        return None
    spanning = [any(columns.crosses(run) for run in line.runs) for line in body]
    for start, end in _table_rows(body, columns, spanning):
        spanning[start:end] = [True] * (end - start)
    regions: list[Region] = []
    if first:
        regions.append(Region(list(lines[:first]), True))
    band: list[list[Run]] = [[] for _ in columns.edges]
    for line, across in zip(body, spanning, strict=True):
        if not across:
            for run in line.runs:
                band[columns.column_of(run)].append(run)
            continue
        _close_band(regions, band)
        band = [[] for _ in columns.edges]
        if regions and regions[-1].spanning:
            regions[-1].lines.append(line)
        else:
            regions.append(Region([line], True))
    _close_band(regions, band)
    if last < len(lines):
        if regions and regions[-1].spanning:
            regions[-1].lines.extend(lines[last:])
        else:
            regions.append(Region(list(lines[last:]), True))
    return regions


def _close_band(regions: list[Region], band: list[list[Run]]) -> None:
    for runs in band:
        if runs:
            regions.append(Region(group_lines(runs), False))


def _body_bounds(lines: Sequence[Line]) -> tuple[int, int]:
    """Indexes of the first line of the page's body and of the line after its last: the
    lines at either end standing apart (a running head, a footer, a page number) left out."""
    first, last = 0, len(lines)
    for _ in range(EDGE_LINES):
        if last - first > 2 and _apart(lines[first], lines[first + 1]):
            first += 1
        if last - first > 2 and _apart(lines[last - 2], lines[last - 1]):
            last -= 1
    return first, last


def _apart(upper: Line, lower: Line) -> bool:
    return upper.bottom - lower.top > 1.5 * max(upper.height, lower.height)


def may_have_gutter(boxes: Sequence[tuple[float, float, float, float]], lines: int) -> bool:
    """Whether the page's text rectangles (left, bottom, right, top) leave a strip of white
    that may be a gutter (`_gutters`, with MAX_CROSSING of about `lines` lines), told in one
    pass over 2-point slices of the page: most pages have none, and are then not grouped
    into lines only to find that out (with tables not read, nothing else needs them)."""
    if len(boxes) < 2 * MIN_COLUMN_LINES:
        return False
    left = min(box[0] for box in boxes)
    slices = int((max(box[2] for box in boxes) - left) / SLICE) + 2
    depth, ends, starts = [0] * slices, [0] * slices, [0] * slices
    for x0, _, x1, _ in boxes:
        first, last = int((x0 - left) / SLICE), int((x1 - left) / SLICE)
        depth[first] += 1
        depth[last + 1] -= 1
        ends[last] += 1
        starts[first] += 1
    allowed = MAX_CROSSING * lines
    need = max(MIN_COLUMN_LINES, MIN_SIDE * len(boxes))
    ended, started, inked, run = 0, len(boxes), 0, 0
    for n in range(slices):
        inked += depth[n]
        started -= starts[n]
        run = run + 1 if inked <= allowed and ended >= need and started >= need else 0
        if run >= 3:  # three whole slices: white of MIN_GUTTER (8 points) holds them
            return True
        ended += ends[n]
    return False


def find_columns(lines: Sequence[Line]) -> Columns | None:
    """The columns of a body of `lines`, or None when it is not set in two or three
    columns of prose (see the module's docstring). Of the strips of white found, the
    gutters are the one or two that leave columns of prose of the most even widths: a
    table of contents' page numbers stand apart from its titles by a strip of white too."""
    runs = [run for line in lines for run in line.runs]
    if len(runs) < 2 * MIN_COLUMN_LINES:
        return None
    candidates = _gutters(runs, len(lines))
    if not candidates or len(candidates) > MAX_CANDIDATES:
        return None  # white all over: a table's columns
    left, right = min(r.x0 for r in runs), max(r.x1 for r in runs)
    found = [
        columns
        for count in range(1, MAX_COLUMNS)
        for gutters in combinations(candidates, count)
        if (columns := _prose_columns(lines, left, right, gutters)) is not None
    ]
    return min(found, key=Columns.unevenness, default=None)


def _prose_columns(
    lines: Sequence[Line], left: float, right: float, gutters: Sequence[tuple[float, float]]
) -> Columns | None:
    """The columns these `gutters` make, when they are about as wide as each other and
    their lines mostly fill them."""
    bounds = [left, *[x for gutter in gutters for x in gutter], right]
    edges = [(bounds[n], bounds[n + 1]) for n in range(0, len(bounds), 2)]
    widths = [b - a for a, b in edges]
    if min(widths) <= 0:
        return None
    columns = Columns(edges)
    if columns.unevenness() > (MAX_SIDEBAR_RATIO if len(edges) == 2 else MAX_WIDTH_RATIO):
        return None
    # Filled by a line's stretch of text in the column, not by its runs: a word set in
    # another font is a run of its own.
    # A line of prose has no table's white inside it (COLUMN_GAP): a table's row does. A
    # table of contents' line has one, before its page number at the column's right edge.
    fills: list[list[float]] = [[] for _ in edges]
    gapped = [0 for _ in edges]
    heights: list[list[tuple[float, float]]] = [[] for _ in edges]  # (top, bottom) of each line
    for line in lines:
        pieces: dict[int, list[Run]] = {}
        for run in line.runs:
            if not columns.crosses(run):
                pieces.setdefault(columns.column_of(run), []).append(run)
        for column, piece in pieces.items():
            fills[column].append((piece[-1].x1 - piece[0].x0) / widths[column])
            gapped[column] += _gapped(piece) and not _page_number_apart(piece, edges[column][1])
            heights[column].append((max(r.y1 for r in piece), min(r.y0 for r in piece)))
    if any(len(f) < MIN_COLUMN_LINES or median(f) < MIN_FILL for f in fills):
        return None
    if any(sum(1 for fill in f if fill >= FULL) < MIN_FULL * len(f) for f in fills):
        return None
    if any(count > MAX_GAPPED * len(f) for count, f in zip(gapped, fills, strict=True)):
        return None
    if any(_blank_share(column) > MAX_BLANK for column in heights):
        return None
    return columns


def _blank_share(column: list[tuple[float, float]]) -> float:
    """The share of a column's lines with a blank line's white (or more) above the next:
    prose runs on line after line, a table's column of short cells waits for the row's
    longest cell (or for its padding) before the next row."""
    height = median(top - bottom for top, bottom in column)
    gaps = [upper[1] - lower[0] for upper, lower in zip(column, column[1:], strict=False)]
    return sum(1 for gap in gaps if gap > BLANK * height) / max(1, len(gaps))


def _page_number_apart(piece: list[Run], right: float) -> bool:
    """A table of contents' line: its only wide white before a short last run (a page
    number) that ends at the column's right edge."""
    last = piece[-1]
    return (
        not _gapped(piece[:-1])
        and last.x1 - last.x0 <= 3 * (last.y1 - last.y0)
        and right - last.x1 <= COLUMN_GAP
    )


def _gapped(piece: list[Run]) -> bool:
    return any(piece[n + 1].x0 - piece[n].x1 >= COLUMN_GAP for n in range(len(piece) - 1))


def _gutters(runs: Sequence[Run], lines: int) -> list[tuple[float, float]]:
    """Strips of white down the body: where at most MAX_CROSSING of its `lines` have ink, at
    least MIN_GUTTER wide, with MIN_SIDE of the runs wholly on each side. Each is the
    stretch of its valley crossed by the fewest runs (a title across it is tolerated)."""
    events = sorted([(run.x0, 1) for run in runs] + [(run.x1, -1) for run in runs])
    allowed = int(MAX_CROSSING * lines)  # a column of prose has ink on about every line
    ends = sorted(run.x1 for run in runs)
    starts = sorted(run.x0 for run in runs)
    need = max(MIN_COLUMN_LINES, MIN_SIDE * len(runs))
    gutters: list[tuple[float, float]] = []
    depth = 0
    valley: list[tuple[float, float, int]] = []  # (from, to, depth) pieces of the valley
    for (x, step), (following, _) in zip(events, [*events[1:], (events[-1][0], 0)], strict=True):
        depth += step
        if depth <= allowed and following > x:
            valley.append((x, following, depth))
            continue
        if valley:
            gutter = _deepest(valley)
            valley = []
            if (
                gutter is not None
                and bisect.bisect_right(ends, gutter[0] + 0.5) >= need
                and len(starts) - bisect.bisect_left(starts, gutter[1] - 0.5) >= need
            ):
                gutters.append(gutter)
    return gutters


def _deepest(valley: list[tuple[float, float, int]]) -> tuple[float, float] | None:
    """The widest stretch of the valley at its least depth, if at least MIN_GUTTER wide."""
    least = min(depth for _, _, depth in valley)
    stretches: list[tuple[float, float]] = []
    start: float | None = None
    end = 0.0
    for a, b, depth in valley:
        if depth == least:
            start = a if start is None else start
            end = b
        elif start is not None:
            stretches.append((start, end))
            start = None
    if start is not None:
        stretches.append((start, end))
    best = max(stretches, key=lambda s: s[1] - s[0])
    return best if best[1] - best[0] >= MIN_GUTTER else None


def _table_rows(lines: Sequence[Line], columns: Columns, spanning: list[bool]) -> list[tuple[int, int]]:
    """Stretches (start, end) of `lines` that are a table laid across the columns: at least
    MIN_TABLE_ROWS lines in a row with cells on both sides of a gutter, one side's cells
    apart by a table's white (COLUMN_GAP), and no side a line of prose."""
    stretches: list[tuple[int, int]] = []
    start = -1
    for n, line in enumerate([*lines, None]):
        row = line is not None and not spanning[n] and _table_row(line, columns)
        if row and start < 0:
            start = n
        elif not row and start >= 0:
            if n - start >= MIN_TABLE_ROWS:
                stretches.append((start, n))
            start = -1
    return stretches


def _table_row(line: Line, columns: Columns) -> bool:
    pieces: dict[int, list[Run]] = {}
    for run in line.runs:
        pieces.setdefault(columns.column_of(run), []).append(run)
    if len(pieces) < 2:
        return False
    gapped = any(
        piece[n + 1].x0 - piece[n].x1 >= COLUMN_GAP
        for piece in pieces.values()
        for n in range(len(piece) - 1)
    )
    return gapped and not any(_prose(piece, columns.edges[column]) for column, piece in pieces.items())


def _prose(piece: list[Run], edge: tuple[float, float]) -> bool:
    """A column's piece of a line that is a line of prose: one stretch of text from the
    column's left edge across most of it."""
    if _gapped(piece):
        return False
    left, right = edge
    return piece[0].x0 - left < COLUMN_GAP and piece[-1].x1 - piece[0].x0 >= MIN_FILL * (right - left)
