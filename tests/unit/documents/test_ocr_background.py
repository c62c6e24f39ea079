"""A long scan read on in the background: the call answers from the pages it read, the rest
is read page by page after it, and each search answers from the pages read so far.

Real pdfium, the real RapidOCR engine (its own process), the real index; three small pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.documents import ocr_background
from generalAgent.documents.ocr import ocr_call, ocr_installed
from generalAgent.documents.search import FileSearch, search_document
from tests.support.documents import make_long_scan

pytestmark = pytest.mark.skipif(not ocr_installed(), reason="the ocr extra is not installed")


def test_the_rest_of_a_scan_is_read_in_the_background_and_searched_as_it_goes(data_dir: Path, tmp_path: Path):
    settings: Settings = load_settings(
        env_file=None, paths={"data_dir": data_dir}, documents={"ocr_max_pages_per_call": 1}
    )
    path = make_long_scan(tmp_path / "scan.pdf", 3, ["Invoice number 4711", "Paid in March."])

    def search() -> FileSearch:
        with ocr_call(settings.documents.ocr_max_pages_per_call):
            return search_document(settings.paths.indexes_db, settings.documents, path, "invoice 4711")

    first = search()
    assert {hit.hit.page for hit in first.results if hit.hit} == {1}
    assert "goes on in the background: 1 of its 3 scanned pages read so far" in first.warning
    job = ocr_background.job_for(path)
    assert job is not None and job.thread is not None
    job.thread.join(timeout=600)
    assert job.finished and not job.error and job.done == 3
    later = search()
    assert {hit.hit.page for hit in later.results if hit.hit} == {1, 2, 3}
    assert "background" not in later.warning


def test_a_changed_file_is_not_answered_by_the_old_reading(data_dir: Path, tmp_path: Path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(b"%PDF-1.4 old")
    job = ocr_background.start(path, 1, 0, lambda _job: 0)
    assert job.thread is not None
    job.thread.join(timeout=10)
    assert ocr_background.job_for(path) is job and job.note() == ""
    path.write_bytes(b"%PDF-1.4 new bytes")
    assert ocr_background.job_for(path) is None
