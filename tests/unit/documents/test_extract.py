"""Extraction of each format from real files, and a clear message for every unreadable one."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import (
    DocumentError,
    extract_document,
    group_rows,
    join_pdf_lines,
    preview_document,
)
from tests.unit.documents.builders import (
    make_docx,
    make_image_pdf,
    make_pdf,
    make_pptx,
    make_scanned_pdf,
    make_xlsx,
)


def test_pdf_pages_keep_their_numbers_and_join_wrapped_lines(tmp_path: Path, settings: Settings):
    pdf = make_pdf(
        tmp_path / "report.pdf",
        [
            ["第一季度营收增长百分之二十，客户满意度", "持续提升。"],
            ["The baseline results of the multi-agent system", "version 4.1 are described here."],
        ],
    )
    document = extract_document(pdf, settings.documents)
    assert document.file_type == "pdf"
    assert [b.page for b in document.blocks] == [1, 2]
    assert document.blocks[0].text == "第一季度营收增长百分之二十，客户满意度持续提升。"
    assert "multi-agent system version 4.1" in document.blocks[1].text


def test_join_pdf_lines_rules():
    assert join_pdf_lines("中文第一行\r\n第二行") == "中文第一行第二行"
    assert join_pdf_lines("English words\r\nwrap here") == "English words wrap here"
    assert join_pdf_lines("hyphen\x02\r\nated") == "hyphenated"
    assert join_pdf_lines("the multi-\r\nagent system") == "the multi-agent system"
    assert join_pdf_lines("para one.\r\n\r\npara two") == "para one.\n\npara two"


def test_docx_headings_paragraphs_and_tables(tmp_path: Path, settings: Settings):
    path = make_docx(
        tmp_path / "plan.docx",
        "Quarterly plan",
        ["Revenue grew in every region.", "客户满意度调查已经完成。"],
        [["Region", "Revenue"], ["North", "120"], ["South", "95"]],
    )
    text = extract_document(path, settings.documents).text
    assert text.startswith("# Quarterly plan")
    assert "客户满意度调查已经完成。" in text
    assert "Region | Revenue\nNorth | 120\nSouth | 95" in text


def test_xlsx_sheets_repeat_the_header_in_every_group(tmp_path: Path, settings: Settings):
    rows = [["Name", "Score"]] + [[f"person{i}", i] for i in range(45)]
    path = make_xlsx(tmp_path / "scores.xlsx", {"Scores": rows, "空表": [["only header"]]})
    document = extract_document(path, settings.documents)
    groups = [b for b in document.blocks if b.heading == "Scores"]
    assert len(groups) == 3  # 20 + 20 + 5 rows
    assert all(g.text.startswith("Name | Score\n") and g.whole for g in groups)
    assert all(g.page == 1 for g in groups)
    assert "person44 | 44" in groups[-1].text
    assert [b.page for b in document.blocks if b.heading == "空表"] == [2]


def test_group_rows_stays_within_the_chunk_size_and_numbers_its_rows(settings: Settings):
    rows = [(1, "h1 | h2")] + [(n, "x" * 150) for n in range(3, 13)]  # row 2 was empty
    groups = list(group_rows(rows, settings.documents))
    assert all(len(text) <= settings.documents.chunk_max_size for text, _, _ in groups)
    assert sum(text.count("x" * 150) for text, _, _ in groups) == 10
    assert groups[0][1] == 3 and groups[-1][2] == 12
    assert all(later[1] == earlier[2] + 1 for earlier, later in zip(groups, groups[1:], strict=False))


def test_pptx_slides_with_titles_and_notes(tmp_path: Path, settings: Settings):
    path = make_pptx(
        tmp_path / "deck.pptx",
        [("Roadmap", "Ship search in May", "Mention the budget"), ("路线图", "五月发布", "")],
    )
    blocks = extract_document(path, settings.documents).blocks
    assert [(b.page, b.heading) for b in blocks] == [(1, "Roadmap"), (2, "路线图")]
    assert "Ship search in May" in blocks[0].text
    assert "Notes: Mention the budget" in blocks[0].text


def test_text_utf8_gb18030_markdown_and_code(tmp_path: Path, settings: Settings):
    (tmp_path / "notes.md").write_text("# 标题\n\n正文内容", encoding="utf-8")
    (tmp_path / "legacy.txt").write_bytes("营收增长报告".encode("gb18030"))
    (tmp_path / "tool.py").write_text("# not a heading\nprint('hi')\n", encoding="utf-8")
    assert extract_document(tmp_path / "notes.md", settings.documents).file_type == "markdown"
    assert extract_document(tmp_path / "legacy.txt", settings.documents).text == "营收增长报告"
    code = extract_document(tmp_path / "tool.py", settings.documents)
    assert code.blocks[0].markdown is False


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("empty.pdf", b"", "is empty"),
        ("broken.pdf", b"%PDF-1.7 this is not really a pdf", "not a readable PDF"),
        ("broken.docx", b"PK\x03\x04 truncated zip", "not a valid .docx"),
        ("broken.xlsx", b"just text", "not a valid .xlsx"),
        ("broken.pptx", b"just text", "not a valid .pptx"),
        ("locked.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, "password-protected"),
        ("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, "save it as .docx"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        ("blank.txt", b"   \n\n  ", "contains no text"),
        ("latin1.txt", bytes([0x81, 0x30, 0x81]) + b"\xff\xfe\xfd", "neither UTF-8 nor GB18030"),
    ],
)
def test_unreadable_files_give_one_clear_message(
    tmp_path: Path, settings: Settings, name: str, content: bytes, expected: str
):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DocumentError) as error:
        extract_document(path, settings.documents)
    message = str(error.value)
    assert expected in message
    assert name in message
    assert "Traceback" not in message


def test_encrypted_pdf(tmp_path: Path, settings: Settings):
    path = make_pdf(tmp_path / "secret.pdf", [["confidential"]], password="hunter2")
    with pytest.raises(DocumentError, match="secret.pdf is password-protected"):
        extract_document(path, settings.documents)


def test_a_pdf_with_neither_text_nor_pictures_says_so(tmp_path: Path, settings: Settings):
    path = make_scanned_pdf(tmp_path / "report.pdf")
    with pytest.raises(DocumentError, match=r"report.pdf has no text layer \(scanned\?\) and no text was"):
        extract_document(path, settings.documents)


def test_a_scanned_page_is_read_by_ocr_and_marked(tmp_path: Path, settings: Settings):
    path = make_image_pdf(
        tmp_path / "scan.pdf", ["Quarterly revenue grew by twenty percent.", "Invoice number 4711"]
    )
    heard: list[tuple[str, int, int]] = []
    document = extract_document(path, settings.documents, lambda *step: heard.append(step))
    [page] = document.blocks
    assert page.ocr and page.page == 1 and page.place == "page 1"
    # The model reads every letter but often drops the spaces between English words.
    assert "Quarterlyrevenuegrewbytwentypercent." in page.text.replace(" ", "")
    assert "4711" in page.text
    assert heard == [("ocr", 1, 1)]


def test_ocr_off_leaves_a_scanned_pdf_unread(tmp_path: Path, data_dir: Path):
    from generalAgent.config.settings import load_settings

    settings = load_settings(env_file=None, documents={"ocr_enabled": False})
    path = make_image_pdf(tmp_path / "scan.pdf", ["Quarterly revenue grew."])
    with pytest.raises(DocumentError, match="no text layer"):
        extract_document(path, settings.documents)


def test_ocr_lines_come_back_in_reading_order():
    from generalAgent.documents.ocr import lines_in_reading_order

    def box(x: float, y: float) -> list[list[float]]:
        return [[x, y], [x + 50, y], [x + 50, y + 10], [x, y + 10]]

    found = [
        (box(200, 41), "right", 0.9),
        (box(10, 80), "second line", 0.95),
        (box(10, 40), "left", 0.9),
        (box(10, 120), "smudge", 0.2),
    ]
    assert lines_in_reading_order(found) == "left right\nsecond line"


def test_huge_files_are_refused_before_reading(tmp_path: Path, data_dir: Path):
    from generalAgent.config.settings import load_settings

    settings = load_settings(env_file=None, documents={"index_max_file_mb": 1})
    path = tmp_path / "huge.txt"
    path.write_bytes(b"a" * (1024 * 1024 + 1))
    with pytest.raises(DocumentError, match="over the 1 MB limit; split it or raise INDEX_MAX"):
        extract_document(path, settings.documents)


def test_missing_file_and_folder(tmp_path: Path, settings: Settings):
    with pytest.raises(DocumentError, match="does not exist"):
        extract_document(tmp_path / "nope.pdf", settings.documents)
    with pytest.raises(DocumentError, match="is a folder"):
        extract_document(tmp_path, settings.documents)


def test_preview_respects_the_page_and_character_limits(tmp_path: Path):
    from generalAgent.config.settings import load_settings

    settings = load_settings(env_file=None, documents={"pdf_preview_pages": 2, "pdf_preview_chars": 1_000})
    pages = [[f"Page {n} line {i} with some words" for i in range(40)] for n in range(1, 5)]
    path = make_pdf(tmp_path / "long.pdf", pages)
    preview = preview_document(path, settings.documents)
    body, note = preview.rsplit("\n\n[preview:", 1)
    assert len(body) <= 1_000
    assert "Page 3" not in body
    assert "search the file for the rest" in note
