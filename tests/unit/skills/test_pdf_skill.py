"""The pdf skill's scripts, run as the agent runs them, on PDFs the tests build."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from reportlab.lib.pdfencrypt import StandardEncryption

from tests.unit.skills.conftest import RunScript
from tests.unit.skills.sample_documents import (
    PAGE_1_TEXT,
    PAGE_2_TEXT,
    PAGE_3_TITLE,
    TABLE_ROWS,
    write_borderless_table_pdf,
    write_corrupt_pdf,
    write_report_pdf,
    write_scanned_pdf,
    write_text_pdf,
)

EXTRACT_TEXT = "skills/pdf/scripts/extract_text.py"
EXTRACT_TABLES = "skills/pdf/scripts/extract_tables.py"
SPLIT = "skills/pdf/scripts/split.py"
MERGE = "skills/pdf/scripts/merge.py"
INFO = "skills/pdf/scripts/info.py"
RENDER = "skills/pdf/scripts/render_pages.py"


@pytest.fixture
def report(workspace: Path) -> str:
    write_report_pdf(workspace / "uploads" / "report.pdf")
    return "uploads/report.pdf"


@pytest.fixture
def encrypted(workspace: Path) -> str:
    write_report_pdf(workspace / "uploads" / "secret.pdf", encrypt="s3cret")
    return "uploads/secret.pdf"


def page_texts(path: Path) -> list[str]:
    pdf = pdfium.PdfDocument(path)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def assert_one_line_error(result, exit_code: int, *fragments: str) -> None:
    assert result.returncode == exit_code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


# -- extract_text -----------------------------------------------------------------------


@pytest.mark.smoke
def test_text_of_every_page_is_marked_with_its_page_number(run_script: RunScript, report: str):
    result = run_script(EXTRACT_TEXT, report)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("=== page 1 / 3 ===") < out.index(PAGE_1_TEXT)
    assert out.index("=== page 2 / 3 ===") < out.index(PAGE_2_TEXT) < out.index("=== page 3 / 3 ===")
    assert "\r" not in out


def test_only_the_chosen_pages_are_extracted(run_script: RunScript, report: str):
    result = run_script(EXTRACT_TEXT, report, "--pages", "2")
    assert result.returncode == 0, result.stderr
    assert PAGE_2_TEXT in result.stdout
    assert PAGE_1_TEXT not in result.stdout and "page 1 /" not in result.stdout


def test_chinese_punctuation_in_page_ranges_is_understood(run_script: RunScript, report: str):
    result = run_script(EXTRACT_TEXT, report, "--pages", "1，3", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert [entry["page"] for entry in json.loads(result.stdout)] == [1, 3]


def test_json_format_gives_page_and_text(run_script: RunScript, report: str):
    result = run_script(EXTRACT_TEXT, report, "--format", "json", "--pages", "2-3")
    pages = json.loads(result.stdout)
    assert [entry["page"] for entry in pages] == [2, 3]
    assert PAGE_2_TEXT in pages[0]["text"] and PAGE_3_TITLE in pages[1]["text"]


def test_text_is_saved_under_temp_and_summarised(run_script: RunScript, report: str, workspace: Path):
    result = run_script(EXTRACT_TEXT, report, "--output", "temp/report.txt")
    assert result.returncode == 0, result.stderr
    assert "temp/report.txt" in result.stdout and "3 of 3 pages" in result.stdout
    saved = (workspace / "temp" / "report.txt").read_text(encoding="utf-8")
    assert PAGE_2_TEXT in saved and "=== page 3 / 3 ===" in saved


def test_output_is_utf8_even_when_the_terminal_says_ascii(run_script: RunScript, report: str):
    result = run_script(EXTRACT_TEXT, report, "--pages", "2", env={"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 0, result.stderr
    assert PAGE_2_TEXT in result.stdout


@pytest.mark.parametrize("target", ["../escape.txt", "/tmp/escape.txt", "uploads/copy.txt"])
def test_text_is_never_written_outside_outputs_or_temp(
    run_script: RunScript, report: str, workspace: Path, target: str
):
    result = run_script(EXTRACT_TEXT, report, "--output", target)
    assert_one_line_error(result, 2, "outputs/ or temp/")
    assert not (workspace / "uploads" / "copy.txt").exists()
    assert not (workspace.parent / "escape.txt").exists()


def test_scanned_pdf_is_reported_as_having_no_text_layer(run_script: RunScript, workspace: Path):
    write_scanned_pdf(workspace / "uploads" / "scan.pdf")
    result = run_script(EXTRACT_TEXT, "uploads/scan.pdf")
    assert_one_line_error(result, 4, "no text layer", "scanned")
    assert result.stdout == ""


def test_encrypted_pdf_asks_for_a_password(run_script: RunScript, encrypted: str):
    assert_one_line_error(run_script(EXTRACT_TEXT, encrypted), 3, "password-protected", "--password")
    wrong = run_script(EXTRACT_TEXT, encrypted, "--password", "guess")
    assert_one_line_error(wrong, 3, "wrong password")


def test_encrypted_pdf_opens_with_its_password(run_script: RunScript, encrypted: str):
    result = run_script(EXTRACT_TEXT, encrypted, "--password", "s3cret", "--pages", "2")
    assert result.returncode == 0, result.stderr
    assert PAGE_2_TEXT in result.stdout
    from_env = run_script(EXTRACT_TEXT, encrypted, "--pages", "1", env={"PDF_PASSWORD": "s3cret"})
    assert PAGE_1_TEXT in from_env.stdout


def test_owner_password_only_pdf_opens_without_asking(run_script: RunScript, workspace: Path):
    protection = StandardEncryption("", ownerPassword="owner", canPrint=0, canCopy=0)
    write_report_pdf(workspace / "uploads" / "locked.pdf", encrypt=protection)
    result = run_script(EXTRACT_TEXT, "uploads/locked.pdf", "--pages", "1")
    assert result.returncode == 0, result.stderr
    assert PAGE_1_TEXT in result.stdout


def test_damaged_pdf_is_one_clear_error(run_script: RunScript, workspace: Path):
    write_corrupt_pdf(workspace / "uploads" / "broken.pdf")
    assert_one_line_error(run_script(EXTRACT_TEXT, "uploads/broken.pdf"), 1, "damaged")


def test_a_file_that_is_not_a_pdf_is_named_as_such(run_script: RunScript, workspace: Path):
    (workspace / "uploads" / "notes.pdf").write_text("just some notes", encoding="utf-8")
    assert_one_line_error(run_script(EXTRACT_TEXT, "uploads/notes.pdf"), 1, "not a PDF")


def test_missing_file_is_one_clear_error(run_script: RunScript):
    assert_one_line_error(run_script(EXTRACT_TEXT, "uploads/nope.pdf"), 1, "no such file")


@pytest.mark.parametrize(
    ("pages", "message"), [("4", "out of range"), ("0", "out of range"), ("two", "bad page range")]
)
def test_bad_page_ranges_say_what_is_wrong(run_script: RunScript, report: str, pages: str, message: str):
    assert_one_line_error(run_script(EXTRACT_TEXT, report, "--pages", pages), 2, message)


def test_file_names_in_chinese_work(run_script: RunScript, workspace: Path):
    write_report_pdf(workspace / "uploads" / "年度报告.pdf")
    result = run_script(EXTRACT_TEXT, "uploads/年度报告.pdf", "--output", "outputs/年度报告.txt")
    assert result.returncode == 0, result.stderr
    assert "outputs/年度报告.txt" in result.stdout
    assert PAGE_2_TEXT in (workspace / "outputs" / "年度报告.txt").read_text(encoding="utf-8")


# -- extract_tables ---------------------------------------------------------------------


def test_ruled_table_comes_out_as_markdown_with_its_page(run_script: RunScript, report: str):
    result = run_script(EXTRACT_TABLES, report)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "### Page 3, table 1 (3 rows x 3 columns)"
    assert "| Region | Q1 | Q2 |" in lines
    assert "| North | 10 | 12 |" in lines
    assert "| 南区 | 7 | 9 |" in lines


def test_tables_as_csv_files_hold_the_cells(run_script: RunScript, report: str, workspace: Path):
    result = run_script(EXTRACT_TABLES, report, "--format", "csv", "--output", "outputs/tables/")
    assert result.returncode == 0, result.stderr
    file = workspace / "outputs" / "tables" / "report-page-003-table-1.csv"
    assert "outputs/tables/report-page-003-table-1.csv" in result.stdout
    assert file.read_bytes().startswith(b"\xef\xbb\xbf")  # the BOM Excel needs for Chinese
    with file.open(encoding="utf-8-sig", newline="") as handle:
        assert list(csv.reader(handle)) == TABLE_ROWS


def test_tables_as_json_carry_page_and_rows(run_script: RunScript, report: str):
    result = run_script(EXTRACT_TABLES, report, "--format", "json")
    assert json.loads(result.stdout) == [{"page": 3, "table": 1, "rows": TABLE_ROWS}]


def test_csv_needs_an_output_folder(run_script: RunScript, report: str):
    assert_one_line_error(run_script(EXTRACT_TABLES, report, "--format", "csv"), 2, "--output")


def test_pages_without_tables_say_so_and_suggest_the_text_strategy(run_script: RunScript, report: str):
    result = run_script(EXTRACT_TABLES, report, "--pages", "1-2")
    assert result.returncode == 0, result.stderr
    assert "No tables found on pages 1-2" in result.stdout and "--strategy text" in result.stdout


def test_borderless_table_is_found_with_the_text_strategy(run_script: RunScript, workspace: Path):
    write_borderless_table_pdf(workspace / "uploads" / "plain.pdf")
    assert "No tables found" in run_script(EXTRACT_TABLES, "uploads/plain.pdf").stdout
    result = run_script(EXTRACT_TABLES, "uploads/plain.pdf", "--strategy", "text", "--format", "json")
    assert json.loads(result.stdout)[0]["rows"] == TABLE_ROWS


def test_tables_of_an_encrypted_pdf_need_the_password(run_script: RunScript, encrypted: str):
    assert_one_line_error(run_script(EXTRACT_TABLES, encrypted), 3, "password")
    result = run_script(EXTRACT_TABLES, encrypted, "--password", "s3cret", "--format", "json")
    assert json.loads(result.stdout)[0]["rows"] == TABLE_ROWS


# -- split and merge --------------------------------------------------------------------


def test_split_copies_chosen_pages_in_the_given_order(run_script: RunScript, report: str, workspace: Path):
    result = run_script(SPLIT, report, "--pages", "3,1", "--output", "outputs/excerpt.pdf")
    assert result.returncode == 0, result.stderr
    assert "outputs/excerpt.pdf: 2 pages" in result.stdout
    texts = page_texts(workspace / "outputs" / "excerpt.pdf")
    assert len(texts) == 2
    assert PAGE_3_TITLE in texts[0] and PAGE_1_TEXT in texts[1]


def test_split_every_n_pages_makes_numbered_parts(run_script: RunScript, report: str, workspace: Path):
    result = run_script(SPLIT, report, "--every", "2", "--output", "outputs/parts")
    assert result.returncode == 0, result.stderr
    parts = workspace / "outputs" / "parts"
    assert sorted(p.name for p in parts.iterdir()) == ["report-p1-2.pdf", "report-p3.pdf"]
    assert len(page_texts(parts / "report-p1-2.pdf")) == 2
    assert PAGE_3_TITLE in page_texts(parts / "report-p3.pdf")[0]


def test_split_of_an_encrypted_pdf_warns_that_the_copy_is_unprotected(
    run_script: RunScript, encrypted: str, workspace: Path
):
    result = run_script(SPLIT, encrypted, "--pages", "2", "--password", "s3cret", "-o", "outputs/part.pdf")
    assert result.returncode == 0, result.stderr
    assert "not" in result.stdout.splitlines()[-1] and "password" in result.stdout
    assert PAGE_2_TEXT in page_texts(workspace / "outputs" / "part.pdf")[0]


def test_split_refuses_to_overwrite_its_input(run_script: RunScript, workspace: Path):
    write_text_pdf(workspace / "outputs" / "draft.pdf", ["one", "two"])
    result = run_script(SPLIT, "outputs/draft.pdf", "--pages", "1", "-o", "outputs/draft.pdf")
    assert_one_line_error(result, 2, "is the input")
    assert len(page_texts(workspace / "outputs" / "draft.pdf")) == 2


def test_split_output_must_be_a_pdf_under_outputs(run_script: RunScript, report: str):
    assert_one_line_error(run_script(SPLIT, report, "--pages", "1", "-o", "../out.pdf"), 2, "outputs/")
    assert_one_line_error(run_script(SPLIT, report, "--pages", "1", "-o", "outputs/out.txt"), 2, ".pdf")


def test_merge_joins_whole_files_and_page_selections_in_order(run_script: RunScript, workspace: Path):
    write_text_pdf(workspace / "uploads" / "a.pdf", ["A one", "A two"])
    write_text_pdf(workspace / "uploads" / "b.pdf", ["B one", "B two", "B three"])
    result = run_script(MERGE, "uploads/a.pdf", "uploads/b.pdf:3,1", "--output", "outputs/merged.pdf")
    assert result.returncode == 0, result.stderr
    assert "(4 pages)" in result.stdout
    texts = page_texts(workspace / "outputs" / "merged.pdf")
    assert [t.strip() for t in texts] == ["A one", "A two", "B three", "B one"]


def test_merge_with_an_encrypted_input(run_script: RunScript, encrypted: str, workspace: Path):
    write_text_pdf(workspace / "uploads" / "cover.pdf", ["Cover"])
    args = ("uploads/cover.pdf", encrypted, "-o", "outputs/all.pdf")
    assert_one_line_error(run_script(MERGE, *args), 3, "password")
    result = run_script(MERGE, *args, "--password", "s3cret")
    assert result.returncode == 0, result.stderr
    assert "not" in result.stdout.splitlines()[-1]
    assert len(page_texts(workspace / "outputs" / "all.pdf")) == 4


def test_merge_needs_two_existing_inputs(run_script: RunScript, report: str):
    assert_one_line_error(run_script(MERGE, report, "-o", "outputs/m.pdf"), 2, "split.py")
    missing = run_script(MERGE, report, "uploads/missing.pdf", "-o", "outputs/m.pdf")
    assert_one_line_error(missing, 1, "uploads/missing.pdf", "no such file")


# -- info and render_pages --------------------------------------------------------------


def test_info_reports_pages_metadata_and_outline(run_script: RunScript, report: str):
    result = run_script(INFO, report)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Pages: 3" in out
    assert "A4 portrait (210 x 297 mm) x3" in out
    assert "Encrypted: no" in out and "Text layer: on every page" in out
    assert "Title: Annual review 2024" in out and "Author: Finance team" in out
    assert "季度报告 ... page 2" in out


def test_info_as_json(run_script: RunScript, encrypted: str):
    result = run_script(INFO, encrypted, "--json", "--password", "s3cret")
    info = json.loads(result.stdout)
    assert info["pages"] == 3 and info["encrypted"] is True
    assert info["outline"][1] == {"level": 1, "title": "季度报告", "page": 2}


def test_info_flags_a_scanned_pdf(run_script: RunScript, workspace: Path):
    write_scanned_pdf(workspace / "uploads" / "scan.pdf")
    result = run_script(INFO, "uploads/scan.pdf")
    assert result.returncode == 0, result.stderr
    assert "Text layer: none" in result.stdout


def test_render_pages_writes_png_images_at_the_requested_dpi(
    run_script: RunScript, report: str, workspace: Path
):
    result = run_script(RENDER, report, "--pages", "2", "--dpi", "72", "-o", "outputs/pages")
    assert result.returncode == 0, result.stderr
    image = workspace / "outputs" / "pages" / "report-page-002.png"
    assert "outputs/pages/report-page-002.png" in result.stdout
    from PIL import Image

    with Image.open(image) as picture:
        assert picture.format == "PNG"
        width, height = picture.size
        assert abs(width - 595) <= 1 and abs(height - 842) <= 1  # A4 at 72 dpi


def test_render_pages_rejects_an_unreasonable_dpi(run_script: RunScript, report: str):
    assert_one_line_error(run_script(RENDER, report, "--dpi", "5000", "-o", "outputs/p"), 2, "dpi")
