"""Captions kept with their table or figure: a sentence that mentions a table is no caption,
a caption read as a row of the grid is the table's caption, a figure's caption is a
paragraph of its own; and a page's prose is chunked whole around its tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import extract_document, preview_document
from generalAgent.documents.pdf import join_pdf_lines
from generalAgent.documents.pdf_captions import is_caption, set_captions_apart, take_caption_row
from generalAgent.documents.pdf_tables import PageTable
from generalAgent.documents.table_files import file_tables
from tests.support.table_pdfs import make_table_pdf


@pytest.mark.parametrize(
    "line",
    [
        "Table 3: Units by region",
        "Table 11.16: 有助于邮件数据转换的软件包",
        "Table 2. Results of the survey",
        "TABLE IV",
        "表 4.2: 数学字母字体",
        "表 3 各地区销售额",
        "Table 12 Quarterly revenue by region",
    ],
)
def test_a_caption_is_a_caption(line: str):
    assert is_caption(line)


@pytest.mark.parametrize(
    "line",
    [
        "Table 3 shows the units of each region, as the survey counted them.",
        "表 4.2 中的 \\mathbf 命令只能获得直立、加粗的字母。如果想得到粗斜体，可以使用 ams\ufffe",
        "表 5 所示的数据来自 2023 年",
        "表3中列出了各个地区",
        "Tables 3 and 4 list the units",
    ],
)
def test_a_sentence_about_a_table_is_no_caption(line: str):
    assert not is_caption(line)


def test_figure_captions():
    assert is_caption("Figure 2: Flow through the mill", figure=True)
    assert is_caption("图 2 系统架构", figure=True)
    assert not is_caption("Figure 2 shows the flow", figure=True)
    assert not is_caption("Figure 2: Flow through the mill")  # a figure's, not a table's


def _table(grid: list[list[str]], header_count: int) -> PageTable:
    return PageTable(0, 700.0, 500.0, [100.0, 200.0], grid, header_count)


def test_a_caption_read_as_the_grids_first_row_becomes_the_caption():
    # lshort-zh's "表 4.2: 数学字母字体", set over the middle column, came as a header row.
    table = _table(
        [
            ["", "表 4.2: 数学字母字体", ""],
            ["示例", "命令", "依赖的宏包"],
            ["ABC", "\\mathrm", ""],
            ["xyz", "\\mathbf", ""],
        ],
        2,
    )
    take_caption_row(table)
    assert table.caption == "表 4.2: 数学字母字体"
    assert table.header == [["示例", "命令", "依赖的宏包"]]
    assert table.rows == [["ABC", "\\mathrm", ""], ["xyz", "\\mathbf", ""]]


def test_a_caption_under_the_table_in_its_last_row_and_a_row_of_one_cell_left_alone():
    table = _table([["Name", "Units"], ["North", "120"], ["South", "95"], ["Table 2: Units", ""]], 1)
    take_caption_row(table)
    assert table.caption == "Table 2: Units" and table.rows == [["North", "120"], ["South", "95"]]
    kept = _table([["Name", "Units"], ["North", "120"], ["Total", ""]], 1)
    take_caption_row(kept)
    assert kept.caption == "" and kept.rows == [["North", "120"], ["Total", ""]]


def test_a_figure_caption_is_its_own_paragraph():
    raw = "\n".join(
        [
            "The river runs past the old mill and the bridge before it reaches the weir, where it",
            "slows down for a while",
            "Figure 2: Flow of water through the old mill",
            "The river then bends north of the bridge and widens into the estuary at the end of",
            "its course.",
        ]
    )
    paragraphs = join_pdf_lines(set_captions_apart(raw)).split("\n\n")
    assert "Figure 2: Flow of water through the old mill" in paragraphs
    assert paragraphs[0].endswith("slows down for a while")
    assert paragraphs[-1].startswith("The river then bends")
    chinese = "河流流经旧磨坊和北桥，在堰处放缓，水位记录为三十一厘米左右，随后继续向东流去并\n汇入\n图 3 河流流量示意\n河流随后在桥北转弯，在入海口处变宽。"
    assert "图 3 河流流量示意" in join_pdf_lines(set_captions_apart(chinese)).split("\n\n")


def test_a_sentence_mentioning_the_table_stays_in_the_text(tmp_path: Path, settings: Settings):
    mention = "Table 1 lists the units of each region as the survey counted them"
    path = make_table_pdf(
        tmp_path / "report.pdf",
        ["Region", "Units"],
        [[f"Region {n}", n * 7] for n in range(1, 6)],
        caption=mention,
    )
    (table,) = file_tables(path)
    assert table.caption == "" and table.header == [["Region", "Units"]]
    blocks = extract_document(path, settings.documents).blocks
    prose = [b for b in blocks if ", table " not in b.place]
    rows = [b for b in blocks if ", table " in b.place]
    assert mention in " ".join(" ".join(b.text for b in prose).split())
    assert rows and not any(mention in b.text for b in rows)


def test_a_caption_opens_every_block_of_the_tables_rows(tmp_path: Path, settings: Settings):
    rows = [[f"Region {n}", n * 7] for n in range(1, 40)]
    path = make_table_pdf(
        tmp_path / "report.pdf", ["Region", "Units"], rows, caption="Table 1: Units by region"
    )
    (table,) = file_tables(path)
    assert table.caption == "Table 1: Units by region"
    blocks = [b for b in extract_document(path, settings.documents).blocks if ", table " in b.place]
    assert len(blocks) > 1 and all(
        b.text.startswith("Table 1: Units by region (table 1, row") for b in blocks
    )


def test_the_prose_around_a_table_is_one_block_and_read_file_keeps_the_order(
    tmp_path: Path, settings: Settings
):
    path = make_table_pdf(
        tmp_path / "report.pdf",
        ["Region", "Units"],
        [[f"Region {n}", n * 7] for n in range(1, 5)],
        paragraphs=2,
    )
    blocks = extract_document(path, settings.documents).blocks
    prose = [b for b in blocks if ", table " not in b.place]
    assert len(prose) == len({b.page for b in prose})  # one block of prose per page
    shown = preview_document(path, settings.documents)
    assert shown.index("Paragraph 2 of the report") < shown.index("| Region 1 | 7 |")
