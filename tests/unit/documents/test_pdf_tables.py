"""PDF tables read as grids: found on the page, merged across pages, in search chunks with
their header, in query_table, read_file and `generalagent tables`; running heads and page
numbers left out of what is indexed."""

from __future__ import annotations

import ctypes
import json
from itertools import pairwise
from pathlib import Path

import pytest
from typer.testing import CliRunner

from generalAgent.config.settings import load_settings
from generalAgent.documents.extract import extract_document, preview_document
from generalAgent.documents.pdf_layout import has_aligned_columns, running_keys, strip_running
from generalAgent.documents.pdf_tables import (
    Line,
    PageTable,
    Rule,
    Run,
    find_tables,
    group_lines,
    join_cell_lines,
    merge_continued,
)
from generalAgent.documents.table_files import file_tables
from generalAgent.documents.tables import load_tables
from generalAgent.search.chunking import Block as ChunkBlock
from generalAgent.search.chunking import ChunkingConfig, chunk_blocks
from tests.support.table_pdfs import make_table_pdf

HEADER = ["Region", "Units", "Owner", "区域"]
OWNERS = ["Engineering and operations team", "Sales", "华东地区销售与市场部门联合小组"]


def table_rows(count: int) -> list[list[object]]:
    return [[f"Region {n}", n * 10, OWNERS[n % 3], "华东" if n % 2 else "华北"] for n in range(1, count + 1)]


def pages_of(pdf: Path) -> list[int]:
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    count = len(document)
    document.close()
    assert count >= 2  # the table continues on the next page
    return list(range(1, count + 1))


def documents(**overrides: object):
    return load_settings(env_file=None, documents=overrides).documents


# -- pure logic ----------------------------------------------------------------------------
def test_wrapped_cell_lines_join_as_a_reader_reads_them() -> None:
    assert join_cell_lines(["华东地区销售", "与市场部门"]) == "华东地区销售与市场部门"
    assert join_cell_lines(["Engineering and", "operations team"]) == "Engineering and operations team"
    assert join_cell_lines(["the multi-", "agent system"]) == "the multi-agent system"
    assert join_cell_lines(["12.2.0-", "14+deb12u1"]) == "12.2.0-14+deb12u1"
    assert join_cell_lines(["block\ufffe", "sorting"]) == "block-sorting"  # pdfium's line-end hyphen, printed
    assert (
        join_cell_lines(["a list -", "item"]) == "a list - item"
    )  # a dash after a space is no word's hyphen
    assert join_cell_lines(["", "  one  ", ""]) == "one"


def _line(y: float, *cells: tuple[float, str]) -> list[Run]:
    return [Run(x, y, x + 6 * len(text), y + 9, text) for x, text in cells]


def test_an_unruled_table_is_found_with_its_wrapped_cells_and_not_the_prose_around_it() -> None:
    runs = [
        *_line(700, (72, "A paragraph of prose that runs across the whole width of the page here.")),
        *_line(680, (72, "Table 3: Currencies")),
        *_line(660, (72, "Code"), (200, "Number"), (320, "Currency")),
        *_line(645, (72, "AED"), (200, "784"), (320, "UAE Dirham")),
        *_line(630, (72, "BOV"), (200, "984"), (320, "Mvdol (funds")),
        *_line(615, (320, "code)")),
        *_line(600, (72, "CHE"), (200, "947"), (320, "WIR Euro")),
        *_line(570, (72, "Prose again after the table, as wide as the paragraph above it was.")),
    ]
    (table,) = find_tables(group_lines(runs), [])
    assert table.caption == "Table 3: Currencies"
    assert table.header == [["Code", "Number", "Currency"]]
    assert table.rows == [
        ["AED", "784", "UAE Dirham"],
        ["BOV", "984", "Mvdol (funds code)"],
        ["CHE", "947", "WIR Euro"],
    ]


def test_an_indented_prose_line_in_several_runs_ends_the_table_above_it() -> None:
    # A paragraph's first line, indented past the key column and set in several runs (a
    # word in another font), was read as a wrapped cell: the prose became a table row
    # and left the page's text (lshort-zh's examples beside their output).
    codes = [("AED", "784", "UAE Dirham"), ("BOV", "984", "Mvdol"), ("CHE", "947", "WIR Euro")]
    codes += [("CHF", "756", "Swiss Franc"), ("CHW", "948", "WIR Franc"), ("CLF", "990", "Unidad")]
    codes += [("COU", "970", "Unidad Valor"), ("CUC", "931", "Peso")]
    runs = _line(700, (72, "Code"), (200, "Number"), (320, "Currency"))
    for n, (code, number, name) in enumerate(codes):
        runs += _line(685 - 15 * n, (72, code), (200, number), (320, name))
    y = 685 - 15 * len(codes)
    words = ["An indented paragraph, set in ", "\\fbox", " reaching across the page"]
    x = 96.0
    for word in words:  # touching runs: no gap, one line of prose
        runs.append(Run(x, y, x + 6 * len(word), y + 9, word))
        x += 6 * len(word)
    runs += [*_line(y - 15, (72, "XAU"), (200, "959"), (320, "Gold"))]
    (table,) = find_tables(group_lines(runs), [])
    assert table.rows == [list(row) for row in codes]


@pytest.mark.parametrize(
    "marks", [["•", "–"], ["1)", "2)", "3)", "4)", "5)"], ["(a)", "(b)", "(c)", "(d)", "(e)"]]
)
def test_a_bulleted_or_numbered_list_is_no_table(marks: list[str]) -> None:
    # A list's marks stand in a column of their own, 8 points or more left of the items
    # (the Debian Reference, libtasn1's manual, TeX for the Impatient): read as a table, the
    # items left the prose of their page and came back under a "header", the first item.
    items = ["INTEGER;", "ENUMERATED;", "BOOLEAN;", "OBJECT IDENTIFIER;", "NULL;"]
    runs = [*_line(700, (72, "The types the parser knows:"))]
    for n, item in enumerate(items):
        runs += _line(685 - 15 * n, (80, marks[n % len(marks)]), (104, item))
    assert find_tables(group_lines(runs), []) == []


def test_a_sentence_announcing_a_table_is_not_its_header() -> None:
    # A justified line of prose whose words are spaced out (a code word in a wider font)
    # has a column's gap; ending in a colon it announces what follows, names no columns.
    runs = [*_line(715, (72, "You can adjust the width of the frame"), (330, "with fboxrule:"))]
    runs += _line(700, (72, "Code"), (200, "Number"), (320, "Currency"))
    codes = [("AED", "784", "UAE Dirham"), ("BOV", "984", "Mvdol"), ("CHE", "947", "WIR Euro")]
    for n, (code, number, name) in enumerate(codes):
        runs += _line(685 - 15 * n, (72, code), (200, number), (320, name))
    (table,) = find_tables(group_lines(runs), [])
    assert table.header == [["Code", "Number", "Currency"]]
    assert table.rows == [list(row) for row in codes]


def test_a_booktabs_header_is_every_line_above_the_mid_rule_and_spans_carry_over() -> None:
    runs = [
        *_line(700, (72, "Release"), (260, "Dates")),
        *_line(685, (72, "Version"), (160, "Name"), (260, "Created"), (360, "Ended")),
        *_line(670, (72, "1.1"), (160, "Buzz"), (260, "1993-08-16"), (360, "1997-06-05")),
        *_line(655, (72, "1.2"), (160, "Rex"), (260, "1996-06-17"), (360, "1998-06-05")),
        *_line(640, (72, "1.3"), (160, "Bo"), (260, "1996-12-12"), (360, "1999-03-09")),
    ]
    rules = [Rule(70, 712, 450, 713), Rule(70, 681.5, 450, 682.5), Rule(70, 636, 450, 637)]
    (table,) = find_tables(group_lines(runs), rules)
    assert table.header == [
        ["Release", "Release", "Dates", "Dates"],
        ["Version", "Name", "Created", "Ended"],
    ]
    assert [r[0] for r in table.rows] == ["1.1", "1.2", "1.3"]


def test_a_page_set_in_two_columns_under_its_running_head_is_no_table() -> None:
    # TeX for the Impatient's index: a running head with a gap, a little apart from two
    # columns of entries set line for line. Rows told apart by the white above them made
    # the head the header and the whole page one row of two huge cells: 3,460 chunks of
    # the book's 4,794, and its prose pushed out of the search's candidates.
    runs = _line(760, (72, "TeX for the Impatient"), (400, "No 367"))
    y = 760.0
    for n in range(24):
        y -= 20 if n % 8 == 0 else 12  # a little more white before each letter's entries
        runs += _line(y, (72, f"\\entry{n} , {3 * n + 1}"), (320, f"\\other{n} , {5 * n + 2}"))
    assert find_tables(group_lines(runs), []) == []


def test_a_table_with_one_row_taller_than_the_others_is_found() -> None:
    # A description wrapped over a dozen lines beside short cells is one tall row of a
    # table, not a page set in columns.
    runs = _line(700, (72, "Code"), (200, "Number"), (320, "Currency"))
    runs += _line(685, (72, "AED"), (200, "784"), (320, "UAE Dirham"))
    runs += _line(670, (72, "BOV"), (200, "984"), (320, "Mvdol, a fund code"))
    for n in range(1, 12):
        runs += _line(670 - 12 * n, (320, f"explained, line {n}"))
    runs += _line(523, (72, "CHE"), (200, "947"), (320, "WIR Euro"))
    (table,) = find_tables(group_lines(runs), [])
    assert [row[0] for row in table.rows] == ["AED", "BOV", "CHE"]
    assert table.rows[1][2].endswith("explained, line 11")


def test_a_row_of_thirty_lines_without_rules_keeps_the_columns_beside_it() -> None:
    # Thirty wrapped lines were more than an eighth of the stack in the columns' white: the
    # key columns' four runs fell under that tolerance, and no valley parted them.
    runs = _line(700, (72, "Code"), (200, "Number"), (320, "Currency"))
    runs += _line(685, (72, "AED"), (200, "784"), (320, "UAE Dirham"))
    runs += _line(670, (72, "BOV"), (200, "984"), (320, "Mvdol, a fund code"))
    for n in range(1, 30):
        runs += _line(670 - 12 * n, (320, f"explained, line {n}"))
    runs += _line(307, (72, "CHE"), (200, "947"), (320, "WIR Euro"))
    (table,) = find_tables(group_lines(runs), [])
    assert [row[:2] for row in table.rows] == [["AED", "784"], ["BOV", "984"], ["CHE", "947"]]


def test_prose_with_font_changes_has_no_aligned_columns_but_a_table_beside_a_tall_row_has() -> None:
    # (left, bottom, right, top) in character order: a word in italics or code starts
    # wherever the sentence puts it; a table's cells start at its columns' edges.
    prose = []
    for n in range(30):
        y = 700 - 12 * n
        prose += [(72.0, y, 150.0 + 7 * n, y + 10), (160.0 + 7 * n, y, 200.0 + 7 * n, y + 10)]
    assert not has_aligned_columns(prose)
    table = [(72.0, y, 100.0, y + 10) for y in (700, 685, 670)]
    table = [box for b in table for box in (b, (200.0, b[1], 230.0, b[3]), (320.0, b[1], 380.0, b[3]))]
    table += [(320.0, 658.0 - 12 * n, 400.0, 668.0 - 12 * n) for n in range(30)]
    assert has_aligned_columns(table)


def test_a_row_cut_in_its_key_cell_by_the_page_break_is_joined_across_the_pages() -> None:
    # LibreOffice breaks a row inside its wrapped key cell: the next page opens with the
    # cell's last line alone ("characters") above the table's rows. The table then did not
    # open its page and stayed apart from the part before it (the Chinese held-out table).
    messages = [("'-b' invalid width", "无效的宽度"), ("'-c' invalid count", "无效的计数")]
    runs = _line(700, (72, "Message"), (300, "中文"))
    for n, (english, chinese) in enumerate(messages):
        runs += _line(685 - 15 * n, (72, english), (300, chinese))
    runs += _line(655, (72, "'-W' invalid number of"), (300, "无效的字符数"))
    first = find_tables(group_lines(runs), [], 0)
    runs = _line(740, (72, "characters"))
    for n, (english, chinese) in enumerate(
        [("'-l' invalid lines", "无效的行数"), ("'-o' bad", "无效的偏移")]
    ):
        runs += _line(725 - 15 * n, (72, english), (300, chinese))
    runs += _line(695, (72, "'-w' invalid"), (300, "无效的页宽"))
    second = find_tables(group_lines(runs), [], 1)
    (table,) = merge_continued([*first, *second])
    assert table.pages == [1, 2]
    assert [row[0] for row in table.rows] == [
        "'-b' invalid width",
        "'-c' invalid count",
        "'-W' invalid number of characters",
        "'-l' invalid lines",
        "'-o' bad",
        "'-w' invalid",
    ]


def test_a_line_above_a_table_opening_a_page_stays_prose_when_nothing_continues() -> None:
    runs = _line(740, (72, "characters"))
    for n, (code, name) in enumerate([("AED", "Dirham"), ("BOV", "Mvdol"), ("CHE", "WIR Euro")]):
        runs += _line(725 - 15 * n, (72, code), (300, name))
    (table,) = merge_continued(find_tables(group_lines(runs), [], 3))
    assert table.column_names() == ["AED", "Dirham"]
    assert [row[0] for row in table.rows] == ["BOV", "CHE"]


def _page_table(page: int, grid: list[list[str]], header: int, *, opens: bool, ends: bool) -> PageTable:
    return PageTable(page, 700, 100, [150.0, 300.0], grid, header, opens_page=opens, ends_page=ends)


def test_a_table_continued_on_the_next_page_is_one_table_its_repeated_header_once() -> None:
    header = ["Code", "Name", "中文"]
    first = _page_table(
        0, [header, ["AW", "Aruba", "阿鲁巴"], ["AF", "Afghani", "阿富"]], 1, opens=False, ends=True
    )
    # The next page repeats the header, then ends the row the page break cut ("stan", "汗").
    second = _page_table(
        1, [header, ["", "stan", "汗"], ["AO", "Angola", "安哥拉"]], 1, opens=True, ends=False
    )
    (table,) = merge_continued([first, second])
    assert table.pages == [1, 2]
    assert table.header == [header]
    assert table.rows == [
        ["AW", "Aruba", "阿鲁巴"],
        ["AF", "Afghani stan", "阿富汗"],
        ["AO", "Angola", "安哥拉"],
    ]
    assert table.row_pages == [1, 1, 2]

    # Without the header repeated, the next page's first row is data, not a header.
    bare = _page_table(
        1, [["AO", "Angola", "安哥拉"], ["AI", "Anguilla", "安圭拉"]], 1, opens=True, ends=False
    )
    (table,) = merge_continued([first, bare])
    assert [r[0] for r in table.rows] == ["AW", "AF", "AO", "AI"]

    # A table that does not open its page is another table.
    apart = _page_table(1, [header, ["AO", "Angola", "安哥拉"]], 1, opens=False, ends=False)
    assert len(merge_continued([first, apart])) == 2


def test_running_heads_footers_and_page_numbers_are_left_out() -> None:
    pages = [
        f"Annual report 2024\r\nBody text of page {n}, different each time: {'x' * n}\r\n{n}\r\nPage {n} of 5"
        for n in range(1, 6)
    ]
    keys = running_keys(pages)
    stripped = [strip_running(text, keys) for text in pages]
    assert all("Annual report" not in text and "of 5" not in text for text in stripped)
    assert all(f"Body text of page {n}" in text for n, text in enumerate(stripped, start=1))
    assert all(not text.rstrip().endswith(str(n)) for n, text in enumerate(stripped, start=1))
    # A line repeated on every page but the page's only line is its text, kept.
    assert strip_running("Annual report 2024", keys) == "Annual report 2024"


def test_a_line_run_of_one_printed_line_is_one_line() -> None:
    lines = group_lines(
        [Run(200, 100, 240, 109, "b"), Run(72, 100.5, 100, 109.5, "a"), Run(72, 80, 90, 89, "c")]
    )
    assert [[r.text for r in line.runs] for line in lines] == [["a", "b"], ["c"]]
    assert isinstance(lines[0], Line) and lines[0].gapped()


# -- a real PDF, end to end ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("style", "repeat"), [("grid", True), ("booktabs", False), ("none", True), ("none", False)]
)
def test_a_pdf_table_is_read_as_one_grid_across_its_pages(tmp_path: Path, style: str, repeat: bool) -> None:
    rows = table_rows(45)
    pdf = make_table_pdf(tmp_path / "report.pdf", HEADER, rows, style=style, repeat_header=repeat)
    (table,) = file_tables(pdf)
    assert table.pages == pages_of(pdf) and table.caption == "Table 1: Units by region"
    assert table.column_names() == HEADER
    assert table.rows == rows


@pytest.mark.parametrize("style", ["grid", "none"])
def test_a_cell_opening_with_punctuation_keeps_its_characters(tmp_path: Path, style: str) -> None:
    # pdfium's box of a period or a comma sits on the baseline: asking for the character
    # at a run's left edge found the letter after it, and ".deb" was read as "Format 1 .d"
    # and "eb". A run's characters are now those of its text object, found in order.
    suffixes = [".deb", ".pdf", ",txt", ".tar.gz", "'quoted'", "-v", "_under", "·dot"]
    rows: list[list[object]] = [
        [f"Format {n}", suffix, n + 0.5, "(optional)"] for n, suffix in enumerate(suffixes, 1)
    ]
    pdf = make_table_pdf(tmp_path / "suffixes.pdf", ["Format", "Suffix", "Size", "Note"], rows, style=style)
    (table,) = file_tables(pdf)
    assert table.rows == rows


@pytest.mark.parametrize("style", ["grid", "booktabs", "none"])
def test_a_table_with_a_row_taller_than_most_of_the_page_is_found(tmp_path: Path, style: str) -> None:
    # A cell of 80 words wrapped over some forty lines, one text rectangle each: the
    # page's rectangles no longer outnumbered its lines by half, and the page was not read
    # as geometry at all. Its other lines start runs at the same places: that is the sign.
    # Without rules across the rows, the tall cell's lines also hid the white between the
    # short columns (fewer runs than an eighth of the stack's lines).
    note = " ".join(f"clause{n}" for n in range(80))
    rows: list[list[object]] = [["AED", 784, "Dirham", "short"], ["BOV", 984, "Mvdol", note]]
    rows.append(["CHE", 947, "WIR Euro", "short"])
    pdf = make_table_pdf(tmp_path / "tall.pdf", ["Code", "Number", "Currency", "Note"], rows, style=style)
    (table,) = file_tables(pdf)
    assert table.rows == rows
    blocks = extract_document(pdf, documents()).blocks
    assert any(", table 1, " in b.place and "clause79" in b.text for b in blocks)


def test_chunks_keep_each_row_with_its_header_and_leave_running_heads_out(tmp_path: Path) -> None:
    pdf = make_table_pdf(tmp_path / "report.pdf", HEADER, table_rows(45))
    settings = documents()
    blocks = extract_document(pdf, settings).blocks
    assert not any("Quarterly report 2024" in b.text or "Page 1" in b.text for b in blocks)
    table_blocks = [b for b in blocks if ", table 1, " in b.place]
    assert table_blocks[0].place.startswith("page 1, table 1, rows 1–")
    last = pages_of(pdf)[-1]
    assert table_blocks[-1].place.startswith(f"page {last}, table 1, rows ") and table_blocks[
        -1
    ].place.endswith("–45")
    for block in table_blocks:
        assert block.whole and len(block.text) <= settings.chunk_max_size
        assert block.text.split("\n")[1] == "| Region | Units | Owner | 区域 |"
    assert table_blocks[0].text.split("\n")[3] == "| Region 1 | 10 | Sales | 华东 |"
    seen: set[int] = set()
    for block in table_blocks:  # each block's rows are the ones its place names, in order
        first, _, last = block.place.rpartition(" ")[2].partition("–")
        rows = [int(line.split(" | ")[0].removeprefix("| Region ")) for line in block.text.split("\n")[3:]]
        assert rows == list(range(int(first), int(last or first) + 1))
        seen.update(rows)
    assert seen == set(range(1, 46))
    assert not any("Region" in b.text for b in blocks if ", table " not in b.place)  # rows left the page text


def test_a_row_longer_than_a_chunk_is_cut_into_pieces_each_under_the_header(tmp_path: Path) -> None:
    # One row's text longer than CHUNK_MAX_SIZE: the chunker cut the block anywhere, and
    # every piece after the first was cells without their column names or key.
    long_note = " ".join(f"clause{n} applies" for n in range(12))
    rows = [[f"Region {n}", n * 10, long_note if n == 2 else "Sales", "华北"] for n in range(1, 6)]
    pdf = make_table_pdf(tmp_path / "long.pdf", HEADER, rows, paragraphs=1)
    settings = documents(chunk_max_size=150, chunk_overlap=20)
    config = ChunkingConfig(settings.chunk_max_size, settings.chunk_overlap, settings.chunk_min_size)
    _content, chunks = chunk_blocks(extract_document(pdf, settings).blocks, config)
    pieces = [c for c in chunks if c.place.endswith("table 1, row 2")]
    assert len(pieces) >= 2
    for chunk in pieces:
        assert chunk.text.split("\n")[1] == "| Region | Units | Owner | 区域 |"
        assert chunk.text.split("\n")[3].startswith("| Region 2 | ")
    said = " ".join(c.text.split("\n")[3].split(" | ")[2] for c in pieces)
    assert " ".join(said.split()) == long_note
    preview = preview_document(pdf, settings)
    assert f"| Region 2 | 20 | {long_note} | 华北 |" in preview


def test_read_file_shows_a_pdf_table_once_as_a_markdown_table(tmp_path: Path) -> None:
    pdf = make_table_pdf(tmp_path / "report.pdf", HEADER, table_rows(45))
    preview = preview_document(pdf, documents())
    assert len(pages_of(pdf)) == 3 and preview.count("| Region | Units | Owner | 区域 |") == 1
    shown = [line for line in preview.splitlines() if line.startswith("| Region ")]
    assert [line.split(" | ")[0] for line in shown] == ["| Region"] + [f"| Region {n}" for n in range(1, 46)]
    assert "| Region 45 | 450 | Engineering and operations team | 华东 |" in preview
    assert "[preview:" not in preview  # nothing was left out
    assert "Table 1: Units by region (table 1)" in preview


def test_query_table_sums_a_pdf_table_exactly(tmp_path: Path) -> None:
    rows = table_rows(45)
    pdf = make_table_pdf(tmp_path / "report.pdf", HEADER, rows, style="booktabs", repeat_header=False)
    database = load_tables(pdf)
    last = pages_of(pdf)[-1]
    assert f'table "table_1" (pages 1–{last}, "Table 1: Units by region"; 45 rows)' in database.describe()
    assert '"Units" INTEGER' in database.describe()
    result = database.query('SELECT SUM("Units") FROM table_1 WHERE "区域" = \'华东\'')
    assert result.rows == [(sum(int(r[1]) for r in rows if r[3] == "华东"),)]


def test_a_pdf_without_tables_reads_as_before(tmp_path: Path) -> None:
    from tests.support.documents import make_pdf

    pdf = make_pdf(tmp_path / "plain.pdf", [["第一页的内容", "second line"], ["Page two text"]])
    on = extract_document(pdf, documents()).blocks
    off = extract_document(pdf, documents(pdf_tables=False)).blocks
    assert [b.text for b in on] == [b.text for b in off] == ["第一页的内容 second line", "Page two text"]


def test_generalagent_tables_prints_each_table_once_with_its_pages(tmp_path: Path) -> None:
    from generalAgent.cli.app import app, register_subcommands

    register_subcommands()
    rows = table_rows(45)
    pdf = make_table_pdf(tmp_path / "report.pdf", HEADER, rows)
    result = CliRunner().invoke(app, ["tables", str(pdf), "--json"])
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.strip().splitlines()
    table = json.loads(line)
    assert table == {
        "file": str(pdf),
        "pages": pages_of(pdf),
        "caption": "Table 1: Units by region",
        "header": HEADER,
        "rows": rows,
        "ocr": False,
    }
    csv = tmp_path / "units.csv"
    csv.write_text("Region,Units\nNorth,3\nSouth,4\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["tables", str(csv)])
    assert (
        result.exit_code == 0
        and "| Region | Units |\n| --- | --- |\n| North | 3 |\n| South | 4 |" in result.stdout
    )


def test_a_table_row_is_cited_by_page_table_and_row(tmp_path: Path) -> None:
    from generalAgent.documents.citations import check_quote
    from generalAgent.documents.index import SearchIndex

    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    pdf = make_table_pdf(tmp_path / "report.pdf", HEADER, table_rows(45))
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        item = index.index_file(pdf).item_id
        found = check_quote(index.conn, item, "| Region 7 | 70 | Sales | 华东 |", "page 1, table 1, row 7")
        assert found.place == "page 1" and found.found
        moved = check_quote(index.conn, item, "| Region 45 | 450 | Engineering", "page 1, table 1, row 45")
        assert not moved.found and moved.elsewhere == [f"page {pages_of(pdf)[-1]}"]
        # The running head is in no page's text a citation is checked against.
        head = check_quote(index.conn, item, "Quarterly report 2024", "page 1")
        assert not head.found and head.elsewhere == []


def test_runs_are_matched_to_their_characters_as_a_walk_over_every_character_would(tmp_path: Path) -> None:
    # char_spans gallops over a text object's characters instead of asking for each one's
    # object; the stretches must be the ones a plain walk finds, on every page.
    import pypdfium2
    import pypdfium2.raw as pdfium_c

    from generalAgent.documents.pdf_layout import char_spans

    pdf = make_table_pdf(tmp_path / "t.pdf", HEADER, table_rows(70), style="none", paragraphs=6)
    document = pypdfium2.PdfDocument(pdf)
    try:
        for number in range(len(document)):
            textpage = document[number].get_textpage()
            walked: list[list[int]] = []
            current = None
            for index in range(pdfium_c.FPDFText_CountChars(textpage)):
                owner = pdfium_c.FPDFText_GetTextObject(textpage, index)
                address = ctypes.cast(owner, ctypes.c_void_p).value if owner else None
                if address is None:
                    continue
                if address != current:
                    walked.append([index, index])
                    current = address
                walked[-1][1] = index
            assert [list(span) for span in char_spans(textpage, 10**9)] == walked
            assert len(walked) == pdfium_c.FPDFText_CountRects(textpage, 0, -1)
    finally:
        document.close()


def test_a_table_block_also_carries_a_neighbouring_row_that_fits() -> None:
    # Rows are grouped into blocks up to a chunk's size; a question whose words sit in two
    # neighbouring rows of different groups found neither. A block also holds the row
    # before and after its own when they fit (here the short row 2 beside row 3).
    from generalAgent.documents.pdf import table_blocks
    from generalAgent.documents.pdf_tables import Table

    rows = [["one", "a " * 75], ["two", "b"], ["three", "c " * 75], ["four", "d " * 75]]
    table = Table([1], "Table 1: Notes", [["Key", "Note"]], rows, [1, 1, 1, 1])
    blocks = table_blocks(table, 1, 1, "", 260)
    assert [b.place for b in blocks] == [
        "page 1, table 1, rows 1–2",
        "page 1, table 1, rows 2–3",
        "page 1, table 1, row 4",
    ]
    assert all(len(b.text) <= 260 for b in blocks)
    keys = [[line.split(" | ")[0].removeprefix("| ") for line in b.text.split("\n")[3:]] for b in blocks]
    assert keys == [["one", "two"], ["two", "three"], ["four"]]
    from generalAgent.documents.pdf import pdf_preview_texts

    (shown,) = pdf_preview_texts(blocks)  # read_file shows each row once
    assert [line.split(" | ")[0] for line in shown.split("\n")[3:]] == ["| one", "| two", "| three", "| four"]


def test_a_full_table_block_hands_its_short_last_row_to_the_next(tmp_path: Path) -> None:
    # A block full of rows got no neighbour, so a question whose words sit in its last row
    # and the next block's first met in no passage. Blocks now overlap as prose chunks do:
    # the next block opens with the last row when its line is within CHUNK_OVERLAP; a
    # longer row is not repeated (it re-cuts every block after it; docs/benchmarks.md).
    settings = documents()
    long_owner = "Engineering, operations and field service team of the northern coastal area"

    def blocks_of(owner: str, overlap: int = settings.chunk_overlap) -> list[ChunkBlock]:
        rows = [[f"Region {n}", n * 10, owner, "华东"] for n in range(1, 33)]
        pdf = make_table_pdf(tmp_path / f"{len(owner)}.pdf", HEADER, rows, paragraphs=1)
        read = extract_document(pdf, documents(chunk_overlap=overlap)).blocks
        return [b for b in read if ", table 1, " in b.place]

    def numbers(block: ChunkBlock) -> list[int]:
        return [int(line.split(" | ")[0].removeprefix("| Region ")) for line in block.text.split("\n")[3:]]

    def shared(blocks: list[ChunkBlock]) -> list[bool]:
        """Whether the next block on the page holds a block's last row too."""
        return [numbers(a)[-1] in numbers(b) for a, b in pairwise(blocks) if a.page == b.page]

    short, long = blocks_of("Sales"), blocks_of(long_owner)
    assert all(len(line) <= settings.chunk_overlap for b in short for line in b.text.split("\n")[3:])
    assert all(len(line) > settings.chunk_overlap for b in long for line in b.text.split("\n")[3:])
    assert len(shared(short)) >= 4 and all(shared(short))
    assert [b.place for b in long] == [b.place for b in blocks_of(long_owner, overlap=0)]
    for blocks in (short, long):
        assert all(len(b.text) <= settings.chunk_max_size for b in blocks)
        assert {n for b in blocks for n in numbers(b)} == set(range(1, 33))
