"""Pages set in two or three columns read column by column: a sentence cut by the column
break reads on in the next column, a title or a table across the columns stays in its
place, and a page of columns is no table. The PDFs draw each row of lines across the page
at once (tests/support/column_pdfs.py), so the PDF's own text order interleaves them."""

from __future__ import annotations

import re
from pathlib import Path

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import extract_document
from generalAgent.documents.pdf import pdf_preview_texts, read_pdf_tables
from generalAgent.documents.pdf_columns import find_columns
from generalAgent.documents.pdf_tables import Line, Run
from tests.support.column_pdfs import make_column_pdf, make_offset_columns_pdf, make_sidebar_pdf
from tests.support.tools import run_tool, workspace_root

RIVERS = ["flows", "bends", "floods", "dries"]


def english(count: int) -> tuple[str, list[str]]:
    sentences = [
        f"Sentence number {n} says that the river {RIVERS[n % 4]} near the old mill {n * 7}."
        for n in range(count)
    ]
    return " ".join(sentences), sentences


def page_text(path: Path, settings: Settings) -> str:
    blocks = extract_document(path, settings.documents).blocks
    assert not any(", table " in block.place for block in blocks), "a page of columns read as a table"
    return "\n".join(block.text for block in blocks)


def in_order(text: str, sentences: list[str]) -> bool:
    """Every sentence whole, with one space between words, in the order written."""
    flat = " ".join(text.split())
    places = [flat.find(sentence) for sentence in sentences]
    return -1 not in places and places == sorted(places)


def test_two_columns_read_down_the_first_then_the_second(tmp_path: Path, settings: Settings):
    text, sentences = english(50)
    path = make_column_pdf(tmp_path / "two.pdf", text, columns=2, title="Notes on the River")
    read = page_text(path, settings)
    assert read.startswith("Notes on the River\n\n")  # the title across the columns, in its place
    assert in_order(read, sentences)
    # The column break falls inside a sentence: it reads on in the next column.
    assert sum(1 for s in sentences if s in " ".join(read.split())) == len(sentences)


def test_three_columns(tmp_path: Path, settings: Settings):
    text, sentences = english(50)
    read = page_text(make_column_pdf(tmp_path / "three.pdf", text, columns=3), settings)
    assert in_order(read, sentences)


def test_chinese_columns_join_without_spaces_across_the_break(tmp_path: Path, settings: Settings):
    sentences = [
        f"第{n}段说明河流在旧磨坊附近{['流淌', '转弯', '泛滥', '干涸'][n % 4]}，水位记录为{n * 7}厘米。"
        for n in range(60)
    ]
    path = make_column_pdf(tmp_path / "zh.pdf", "".join(sentences), columns=2, chinese=True, title="河流笔记")
    read = page_text(path, settings)
    flat = re.sub(r"\s+", "", read)
    assert [flat.find(s) for s in sentences] == sorted(flat.find(s) for s in sentences)
    assert all(s in flat for s in sentences)
    assert not re.search(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]", read)  # no space inside Chinese


def test_a_table_across_the_columns_stays_whole_and_in_place(tmp_path: Path, settings: Settings):
    text, sentences = english(48)
    table = [
        ["Station", "Depth (m)", "Flow (m3/s)", "Season"],
        ["Old mill", "2.4", "31.5", "spring"],
        ["North bridge", "3.1", "40.2", "summer"],
        ["Weir", "1.7", "22.8", "autumn"],
        ["Estuary", "5.6", "88.0", "winter"],
    ]
    path = make_column_pdf(tmp_path / "table.pdf", text, columns=2, table=table, rows_above_table=10)
    tables = read_pdf_tables(path.open("rb"), path)
    assert len(tables) == 1
    assert [row[:4] for row in tables[0].rows] == [row for row in table[1:]]
    blocks = extract_document(path, settings.documents).blocks
    prose = "\n".join(b.text for b in blocks if ", table " not in b.place)
    assert in_order(prose, [s for s in sentences if s in " ".join(prose.split())])
    # As a reader reads the page (read_file), the table stands between the text above it
    # (both columns) and the text under it; search chunks the page's prose as one block.
    assert len([b for b in blocks if ", table " not in b.place]) == 1
    texts = pdf_preview_texts(blocks)
    first_table = next(n for n, t in enumerate(texts) if "| Station | Depth (m) |" in t)
    before = " ".join(texts[:first_table])
    after = " ".join(texts[first_table + 1 :])
    assert "Sentence number 0 " in before and "Sentence number 47 " in after
    assert sum(s in " ".join(prose.split()) for s in sentences) >= len(sentences) - 2  # cut at the table


def test_a_page_of_one_column_stays_as_it_came(tmp_path: Path, settings: Settings):
    text, sentences = english(20)
    read = page_text(make_column_pdf(tmp_path / "one.pdf", text, columns=1), settings)
    assert in_order(read, sentences)


def _line(y: float, *spans: tuple[float, float]) -> Line:
    return Line([Run(x0, y, x1, y + 9, "#") for x0, x1 in spans], y + 9, y)


def test_a_table_of_numbers_is_no_columns():
    # Four columns of short cells: white strips all down the page, but no column of prose.
    table = [_line(700 - 12 * n, (72, 150), (250, 280), (380, 400), (480, 520)) for n in range(30)]
    assert find_columns(table) is None
    # Two columns of prose, lines filling each: columns.
    prose = [_line(700 - 12 * n, (72, 290), (310, 528)) for n in range(30)]
    columns = find_columns(prose)
    assert columns is not None and len(columns.edges) == 2


def test_view_page_gives_a_model_that_does_not_see_the_columns_in_order(settings: Settings):
    text, sentences = english(50)
    make_column_pdf(workspace_root(settings) / "uploads" / "two.pdf", text, columns=2)
    answer, _ = run_tool(settings, "view_page", {"file_path": "uploads/two.pdf", "page": 1})
    assert "this model does not take images" in answer
    assert in_order(answer, sentences[:20])  # the page's text is cut for the model


def test_a_two_column_table_of_wrapped_text_is_no_columns():
    # A phrase beside its translation, the translation wrapping onto two lines: the left
    # column stands blank beside the second line of each row, as prose never does.
    lines = []
    y = 700.0
    for _ in range(12):
        lines.append(_line(y, (72, 280), (310, 520)))
        lines.append(_line(y - 12, (310, 500)))
        y -= 30
    assert find_columns(lines) is None


def test_columns_on_different_baselines_read_column_by_column(tmp_path: Path, settings: Settings):
    # The second column half a line lower than the first, drawn across the page by height:
    # pdfium puts every piece on a line of its own, and the page read as drawn interleaved
    # the two columns' sentences.
    text, sentences = english(50)
    read = page_text(make_offset_columns_pdf(tmp_path / "offset.pdf", text), settings)
    assert in_order(read, sentences)


def test_a_boxed_note_beside_the_text_is_read_after_it_not_line_by_line(tmp_path: Path, settings: Settings):
    text, sentences = english(30)
    notes = [f"Note {n}: the gauge at the weir read {n * 3} centimetres that morning." for n in range(10)]
    path = make_sidebar_pdf(tmp_path / "sidebar.pdf", text, " ".join(notes))
    read = page_text(path, settings)  # and no table
    assert in_order(read, sentences)
    assert in_order(read, notes)
