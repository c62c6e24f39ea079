"""The pure grid logic of PDF tables for any cells (hypothesis): joining a wrapped cell's lines,
merging a table across pages with its header once, finding a laid-out grid again, and runs
grouped into lines and rules joined exactly as their plain definitions do (ties included)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.documents.pdf_tables import (
    PageTable,
    Rule,
    Run,
    _merged_rules,
    find_tables,
    group_lines,
    join_cell_lines,
    merge_continued,
)

CJK = st.text(alphabet="营收增长客户满意度数据表格季度华东地区", min_size=1, max_size=8)
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
CELL = st.one_of(WORD, CJK, st.builds(lambda a, b: f"{a} {b}", WORD, WORD))


@given(st.lists(CJK, min_size=1, max_size=6))
def test_chinese_lines_join_without_any_space(lines: list[str]) -> None:
    assert join_cell_lines(lines) == "".join(lines)


@given(st.lists(st.lists(WORD, min_size=1, max_size=4), min_size=1, max_size=6))
def test_english_lines_join_with_one_space_and_lose_no_word(lines: list[list[str]]) -> None:
    joined = join_cell_lines([" ".join(words) for words in lines])
    assert joined.split(" ") == [word for words in lines for word in words]


@given(WORD.filter(lambda w: w[-1].isalpha()), WORD)
def test_a_word_hyphenated_at_a_line_end_is_one_word(head: str, tail: str) -> None:
    assert join_cell_lines([f"the {head}-", f"{tail} rest"]) == f"the {head}-{tail} rest"


def _page(page: int, grid: list[list[str]], *, opens: bool, ends: bool) -> PageTable:
    return PageTable(page, 700, 100, [150.0, 300.0], grid, 1, opens_page=opens, ends_page=ends)


ROWS = st.lists(st.lists(CELL, min_size=3, max_size=3), min_size=2, max_size=12, unique_by=lambda r: r[0])


@given(ROWS, st.lists(st.integers(1, 11), max_size=3), st.booleans())
def test_a_table_split_over_pages_merges_back_to_its_rows_header_once(
    rows: list[list[str]], cuts: list[int], repeat: bool
) -> None:
    header = ["Key", "Value", "备注"]
    bounds = sorted({c for c in cuts if c < len(rows)})
    parts = [rows[a:b] for a, b in zip([0, *bounds], [*bounds, len(rows)], strict=True)]
    pages = [
        _page(
            n,
            [header, *part] if n == 0 or repeat else part,
            opens=n > 0,
            ends=n < len(parts) - 1,
        )
        for n, part in enumerate(parts)
    ]
    # Without the header repeated, each later page's first row is taken for its header (as
    # find_tables would): the merge must see it is data.
    (table,) = merge_continued(pages)
    assert table.header == [header]
    assert table.rows == rows
    assert table.pages == list(range(1, len(parts) + 1))


@settings(max_examples=60)
@given(st.lists(st.lists(st.one_of(WORD, CJK), min_size=3, max_size=3), min_size=3, max_size=15))
def test_a_grid_laid_out_in_columns_is_read_back_cell_for_cell(cells: list[list[str]]) -> None:
    header = ["Name", "Count", "区域"]
    grid = [header, *cells]
    runs = [
        Run(72 + 150 * column, 700 - 15 * row, 72 + 150 * column + 7 * len(text), 709 - 15 * row, text)
        for row, values in enumerate(grid)
        for column, text in enumerate(values)
    ]
    (table,) = find_tables(group_lines(runs), [])
    assert table.header == [header]
    assert table.rows == cells


LONG_CELL = st.lists(st.one_of(WORD, CJK), min_size=1, max_size=40).map(" ".join)


@given(st.lists(LONG_CELL, min_size=2, max_size=5), st.integers(min_value=20, max_value=300))
def test_a_long_row_cut_into_pieces_fits_and_loses_no_character(cells: list[str], room: int) -> None:
    from generalAgent.documents.pdf import markdown_row, row_pieces

    pieces = row_pieces(cells, room + len(markdown_row([cells[0], *[""] * (len(cells) - 1)])))
    for piece in pieces:
        assert piece[0] == cells[0] and len(piece) == len(cells)  # the key cell in every piece
        assert len(markdown_row(piece)) <= room + len(markdown_row([cells[0], *[""] * (len(cells) - 1)]))
    for column in range(1, len(cells)):
        said = "".join(piece[column] for piece in pieces)
        assert said.replace(" ", "") == cells[column].replace(" ", "")


# Coordinates from a few values, so that runs share middles and left edges (ties a faster
# sort must order as the plain definition's stable sort does).
COORD = st.sampled_from([0.0, 1.0, 1.5, 2.0, 10.0, 10.5, 11.0, 12.0, 100.0])
RUNS = st.lists(
    st.builds(
        lambda x0, w, y0, h, text, start: Run(x0, y0, x0 + w, y0 + h, text, start),
        COORD,
        COORD,
        COORD,
        COORD,
        st.sampled_from(["a", "b", " ", "", "表"]),
        st.integers(-1, 50),
    ),
    max_size=30,
)


def _lines_as_defined(runs: list[Run]) -> list[tuple[list[Run], float, float]]:
    """group_lines' docstring written out plainly: runs top to bottom (then left to right,
    ties in the order given), a run joining the line when its middle is within the band or
    the line so far within the run's height; then a line lying within the band of the line
    under it joins that one."""
    lines: list[tuple[list[Run], float, float]] = []
    for run in sorted(runs, key=lambda r: (-(r.y0 + r.y1) / 2, r.x0)):
        if not run.text.strip():
            continue
        middle = (run.y0 + run.y1) / 2
        if lines and (
            lines[-1][2] - 0.5 <= middle <= lines[-1][1] + 0.5
            or (run.y0 - 0.5 <= lines[-1][2] and lines[-1][1] <= run.y1 + 0.5)
        ):
            members, top, bottom = lines[-1]
            lines[-1] = ([*members, run], max(top, run.y1), min(bottom, run.y0))
        else:
            lines.append(([run], run.y1, run.y0))
    joined: list[tuple[list[Run], float, float]] = []
    for members, top, bottom in reversed(lines):  # bottom up: each line into the one under it
        if joined and joined[-1][2] - 0.5 <= bottom and top <= joined[-1][1] + 0.5:
            under = joined[-1]
            joined[-1] = ([*under[0], *members], under[1], under[2])
        else:
            joined.append((members, top, bottom))
    return [(sorted(members, key=lambda r: r.x0), top, bottom) for members, top, bottom in reversed(joined)]


@given(RUNS)
def test_lines_are_grouped_as_defined_whatever_the_ties(runs: list[Run]) -> None:
    assert [(line.runs, line.top, line.bottom) for line in group_lines(runs)] == _lines_as_defined(runs)


@given(st.lists(st.tuples(COORD, COORD, COORD, COORD), max_size=30))
def test_rules_are_sorted_and_joined_as_defined_whatever_the_ties(
    boxes: list[tuple[float, float, float, float]],
) -> None:
    rules = [Rule(x0, y0, x0 + w, y0 + h) for x0, w, y0, h in boxes]
    horizontal = sorted((r for r in rules if r.horizontal), key=lambda r: (round((r.y0 + r.y1) / 2), r.x0))
    vertical = sorted((r for r in rules if not r.horizontal), key=lambda r: (round((r.x0 + r.x1) / 2), r.y0))
    want_h: list[Rule] = []
    for r in horizontal:
        last = want_h[-1] if want_h else None
        if last and abs((last.y0 + last.y1) / 2 - (r.y0 + r.y1) / 2) < 1.5 and r.x0 <= last.x1 + 2:
            want_h[-1] = Rule(last.x0, min(last.y0, r.y0), max(last.x1, r.x1), max(last.y1, r.y1))
        else:
            want_h.append(r)
    want_v: list[Rule] = []
    for r in vertical:
        last = want_v[-1] if want_v else None
        if last and abs((last.x0 + last.x1) / 2 - (r.x0 + r.x1) / 2) < 1.5 and r.y0 <= last.y1 + 2:
            want_v[-1] = Rule(min(last.x0, r.x0), last.y0, max(last.x1, r.x1), max(last.y1, r.y1))
        else:
            want_v.append(r)
    assert _merged_rules(rules) == (want_h, want_v)
