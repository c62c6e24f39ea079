"""What the chat says of scans read on by OCR in the background: one line when a reading
begins, one when it ends (or stops), the toolbar's pages while it runs; in both languages."""

from __future__ import annotations

from pathlib import Path

from generalAgent import i18n
from generalAgent.cli.ocr_progress import OcrProgress
from generalAgent.documents.ocr_background import ScanJob


def scan(name: str, done: int, total: int) -> ScanJob:
    return ScanJob(Path("/docs") / name, file_size=1, mtime_ns=1, done=done, total=total)


def test_a_reading_is_announced_once_shown_while_it_runs_and_said_done_once() -> None:
    job = scan("scan.pdf", 20, 120)
    progress = OcrProgress(lambda: [job])
    assert progress.has_news()
    assert progress.news() == [
        ("dim", "OCR scan.pdf: 20/120 pages; reading on in the background, searchable as it goes.")
    ]
    assert progress.news() == [] and not progress.has_news()
    job.done = 40
    assert progress.toolbar() == "OCR scan.pdf: 40/120 pages"
    job.done, job.finished = 120, True
    assert progress.toolbar() == "" and progress.running() == []
    assert progress.news() == [("dim", "OCR of scan.pdf done: 120 pages read, now searchable.")]
    assert progress.news() == []


def test_a_reading_that_ended_between_two_looks_is_said_once_and_a_stop_is_a_warning() -> None:
    quick, broken = scan("quick.pdf", 6, 6), scan("broken.pdf", 5, 9)
    quick.finished = True
    broken.finished, broken.error = True, "page 6 is damaged"
    assert OcrProgress(lambda: [quick, broken]).news() == [
        ("dim", "OCR of quick.pdf done: 6 pages read, now searchable."),
        ("yellow", "OCR of broken.pdf stopped: page 6 is damaged"),
    ]


def test_several_readings_share_the_toolbar_and_a_name_cannot_break_its_line() -> None:
    jobs = [scan("a.pdf", 1, 8), scan("evil\n\x1b[2J.pdf", 5, 10)]
    toolbar = OcrProgress(lambda: jobs).toolbar()
    assert toolbar.startswith("OCR a.pdf: 1/8 pages · OCR evil")
    assert "\n" not in toolbar and "\x1b" not in toolbar


def test_the_lines_in_chinese(chinese: None) -> None:
    job = scan("扫描件.pdf", 40, 120)
    progress = OcrProgress(lambda: [job])
    assert progress.news() == [
        ("dim", "OCR 扫描件.pdf：40/120 页；其余页面在后台继续识别，已识别的页面即可搜索。")
    ]
    assert progress.toolbar() == "OCR 扫描件.pdf：40/120 页"
    job.done, job.finished = 120, True
    assert progress.news() == [("dim", "扫描件.pdf 的 OCR 已完成：共识别 120 页，现在全部可以搜索。")]


def test_a_pdfs_tables_read_in_the_background_are_said_as_tables_in_both_languages(chinese: None) -> None:
    from generalAgent.documents.ocr_background import TABLES

    job = ScanJob(Path("/docs/report.pdf"), file_size=1, mtime_ns=1, total=1, kind=TABLES)
    progress = OcrProgress(lambda: [job])
    assert progress.news() == [("dim", "正在后台读取 report.pdf 的表格；它的文字现在已可搜索。")]
    assert progress.toolbar() == "report.pdf 的表格"
    job.done, job.finished = 1, True
    assert progress.news() == [("dim", "report.pdf 的表格已读取：表格各行可搜索，按表格引用。")]
    i18n.use_language("en")
    failed = ScanJob(Path("/docs/bad.pdf"), file_size=1, mtime_ns=1, total=1, kind=TABLES, finished=True)
    failed.error = "page 3 is damaged"
    assert OcrProgress(lambda: [failed]).news() == [
        ("yellow", "Reading the tables of bad.pdf stopped: page 3 is damaged")
    ]
