"""A scanned page's table read as a table: OCR's pieces of text go to the same table
finder as a text layer's runs (rapidocr, the `ocr` extra; skipped without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.display import Message
from generalAgent.documents.extract import extract_document
from generalAgent.documents.ocr import ocr_call
from generalAgent.documents.pdf_tables import Run
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.table_files import file_tables
from generalAgent.documents.tables import load_tables
from tests.support.documents import make_scanned_table_pdf
from tests.support.tools import run_tool, workspace_root

pytest.importorskip("rapidocr_onnxruntime")

ROWS = [
    ["Region", "Units", "Revenue"],
    ["North", "120", "4800"],
    ["South", "95", "3610"],
    ["East", "143", "5720"],
    ["West", "88", "3168"],
]


def test_a_scanned_table_is_cited_by_row_with_its_header(tmp_path: Path, settings: Settings):
    path = make_scanned_table_pdf(tmp_path / "scan.pdf", ["Table 1: Units and revenue by region"], ROWS)
    blocks = extract_document(path, settings.documents).blocks
    rows = [b for b in blocks if ", table 1, " in b.place]
    assert rows and all(b.ocr for b in rows)
    text = "\n".join(b.text for b in rows)
    assert "| Region | Units | Revenue |" in text.replace("Reqion", "Region")  # OCR may misread a g
    for region, units, revenue in ROWS[1:]:
        assert f"| {units} | {revenue} |" in text and region in text
    assert rows[0].text.startswith("Table 1: Units and revenue by region (table 1, ")
    # The table's cells are not in the page's text a second time.
    prose = "\n".join(b.text for b in blocks if ", table " not in b.place)
    assert "4800" not in prose


def test_with_pdf_tables_off_a_scanned_table_is_its_lines(tmp_path: Path, data_dir: Path):
    settings = load_settings(env_file=None, documents={"pdf_tables": False})
    path = make_scanned_table_pdf(tmp_path / "scan.pdf", ["Units and revenue by region"], ROWS)
    blocks = extract_document(path, settings.documents).blocks
    assert not any(", table " in b.place for b in blocks)
    assert "4800" in "\n".join(b.text for b in blocks)


def test_a_scanned_chinese_table(tmp_path: Path, settings: Settings):
    rows = [["地区", "销量", "收入"], ["华北", "120", "4800"], ["华南", "95", "3610"], ["西部", "88", "3168"]]
    path = make_scanned_table_pdf(tmp_path / "scan.pdf", ["表 1 各地区销量与收入"], rows)
    blocks = extract_document(path, settings.documents).blocks
    text = "\n".join(b.text for b in blocks if ", table 1, " in b.place)
    assert "| 地区 | 销量 | 收入 |" in text
    assert "| 华北 | 120 | 4800 |" in text and "| 西部 | 88 | 3168 |" in text


def test_a_table_on_a_page_an_earlier_step_read_stays_a_table(tmp_path: Path, settings: Settings):
    # The background reading of a long scan indexes the document again at each step, the
    # pages read before coming from memory: their tables with them.
    path = make_scanned_table_pdf(tmp_path / "scan.pdf", ["Table 1: Units and revenue by region"], ROWS)
    texts: dict[int, str] = {}
    runs: dict[int, list[Run]] = {}
    with ocr_call(None, known=texts, known_runs=runs):
        first = extract_document(path, settings.documents).blocks
    assert list(texts) == list(runs) == [0]
    heard: list[tuple[str, int, int]] = []
    with ocr_call(None, known=texts, known_runs=runs):
        again = extract_document(path, settings.documents, lambda *step: heard.append(step)).blocks
    assert heard == []  # not read again
    assert [(b.place, b.text) for b in again] == [(b.place, b.text) for b in first]
    assert any(", table 1, " in b.place for b in again)


def test_query_table_answers_over_a_scanned_table_read_by_ocr(settings: Settings):
    # query_table and `generalagent tables` read a scan's tables as the indexer does.
    root = workspace_root(settings)
    make_scanned_table_pdf(root / "uploads" / "scan.pdf", ["Table 1: Units and revenue by region"], ROWS)
    listing, _ = run_tool(settings, "query_table", {"file_path": "uploads/scan.pdf"})
    assert 'table "table_1" (page 1, "Table 1: Units and revenue by region", read by OCR' in listing
    assert '"Units" INTEGER' in listing and '"Revenue" INTEGER' in listing
    sql = 'SELECT SUM("Revenue") FROM table_1'
    answer, _ = run_tool(settings, "query_table", {"file_path": "uploads/scan.pdf", "sql": sql})
    assert sql in answer and f"\n{sum(int(r[2]) for r in ROWS[1:])}\n" in answer


def test_a_scanned_table_is_listed_with_its_caption_and_marked_ocr(tmp_path: Path, settings: Settings):
    path = make_scanned_table_pdf(
        tmp_path / "scan.pdf", ["表 1 各地区销量与收入"], [["地区", "销量"], ["华北", "120"], ["华南", "95"]]
    )
    (table,) = file_tables(path, settings=settings.documents)
    # OCR reads the caption without the spaces around the number.
    assert table.ocr and table.caption.replace(" ", "") == "表1各地区销量与收入" and table.pages == [1]
    assert table.as_json(str(path))["rows"] == [["华北", 120], ["华南", 95]]


def test_without_ocr_a_scanned_pdf_says_its_tables_were_not_read(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
):
    path = make_scanned_table_pdf(tmp_path / "scan.pdf", ["Table 1: Units and revenue by region"], ROWS)
    monkeypatch.setattr("generalAgent.documents.pdf.ocr_installed", lambda: False)
    notes: list[Message] = []
    assert file_tables(path, settings=settings.documents, notes=notes) == []
    (note,) = notes
    assert note.english().startswith("scan.pdf has 1 page without a text layer; OCR is not installed")
    with pytest.raises(DocumentError, match="OCR is not installed, so its tables are not read"):
        load_tables(path, settings=settings.documents)
    off = load_settings(env_file=None, documents={"ocr_enabled": False})
    notes.clear()
    assert file_tables(path, settings=off.documents, notes=notes) == []
    assert "OCR is off (OCR_ENABLED=false)" in notes[0].english()


def test_a_scan_read_by_ocr_in_its_text_pass_is_not_read_by_ocr_again_for_its_tables(
    tmp_path: Path, settings: Settings
):
    from generalAgent.documents import open_index

    path = make_scanned_table_pdf(tmp_path / "scan.pdf", ["Table 1: Units and revenue by region"], ROWS)
    stages: list[str] = []
    with open_index(settings) as index:
        first = index.index_file(path, tables_later=True, progress=lambda stage, *_: stages.append(stage))
        assert first.tables_pending and "ocr" in stages
        stages.clear()
        second = index.index_file(path, tables_later=False, progress=lambda stage, *_: stages.append(stage))
        assert not second.tables_pending and "ocr" not in stages  # its OCR pieces came from the first
        places = [
            str(row[0])
            for row in index.db.execute(
                "SELECT c.metadata FROM chunks c WHERE c.item_id = ?", (second.item_id,)
            ).fetchall()
        ]
        assert any(", table 1, " in place for place in places)
