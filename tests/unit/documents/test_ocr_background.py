"""A long scan read on in the background: the call answers from the pages it read, the rest
is read page by page after it, and each search answers from the pages read so far.

Real pdfium, the real RapidOCR engine (its own process), the real index; three small pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.documents.ocr import ocr_call, ocr_installed
from generalAgent.documents.ocr_background import MAX_ENDED_JOBS, ScanJobs
from generalAgent.documents.search import FileSearch, search_document
from generalAgent.tools.run_context import SessionScope
from tests.support.documents import make_long_scan

pytestmark = pytest.mark.skipif(not ocr_installed(), reason="the ocr extra is not installed")


def test_the_rest_of_a_scan_is_read_in_the_background_and_searched_as_it_goes(data_dir: Path, tmp_path: Path):
    settings: Settings = load_settings(
        env_file=None, paths={"data_dir": data_dir}, documents={"ocr_max_pages_per_call": 1}
    )
    path = make_long_scan(tmp_path / "scan.pdf", 3, ["Invoice number 4711", "Paid in March."])
    scans = ScanJobs()

    def search() -> FileSearch:
        with ocr_call(settings.documents.ocr_max_pages_per_call, scans=scans):
            return search_document(settings.paths.indexes_db, settings.documents, path, "invoice 4711")

    first = search()
    assert {hit.hit.page for hit in first.results if hit.hit} == {1}
    assert "goes on in the background: 1 of its 3 scanned pages read so far" in first.notes
    job = scans.job_for(path)
    assert job is not None and job.thread is not None
    job.thread.join(timeout=600)
    assert job.finished and not job.error and job.done == 3
    later = search()
    assert {hit.hit.page for hit in later.results if hit.hit} == {1, 2, 3}
    assert "background" not in later.notes


def test_a_changed_file_is_not_answered_by_the_old_reading(data_dir: Path, tmp_path: Path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(b"%PDF-1.4 old")
    scans = ScanJobs()
    job = scans.start(path, 1, 0, lambda _job: 0)
    assert job.thread is not None
    job.thread.join(timeout=10)
    assert scans.job_for(path) is job and job.note() == ""
    path.write_bytes(b"%PDF-1.4 new bytes")
    assert scans.job_for(path) is None


def test_two_sessions_read_on_scans_apart_and_a_closed_one_leaves_none(data_dir: Path, tmp_path: Path):
    """Two sessions of one process (an editor's) search the same long scan at once: each
    has its own reading, neither sees the other's; closing the sessions stops both readings
    and keeps none (the readings were one process-wide table before, never emptied)."""
    settings: Settings = load_settings(
        env_file=None, paths={"data_dir": data_dir}, documents={"ocr_max_pages_per_call": 1}
    )
    first_path = make_long_scan(tmp_path / "first.pdf", 3, ["Invoice number 4711"])
    second_path = make_long_scan(tmp_path / "second.pdf", 3, ["Receipt number 815"])
    one, other = SessionScope("one", tmp_path), SessionScope("other", tmp_path)

    def search(scope: SessionScope, path: Path, query: str) -> FileSearch:
        with ocr_call(settings.documents.ocr_max_pages_per_call, scope.cancelled, scans=scope.scans):
            return search_document(settings.paths.indexes_db, settings.documents, path, query)

    assert "goes on in the background" in search(one, first_path, "invoice 4711").notes
    assert "goes on in the background" in search(other, second_path, "receipt 815").notes
    assert [job.path.name for job in one.scans.jobs()] == ["first.pdf"]
    assert [job.path.name for job in other.scans.jobs()] == ["second.pdf"]
    assert one.scans.job_for(second_path) is None and other.scans.job_for(first_path) is None
    jobs = [*one.scans.jobs(), *other.scans.jobs()]

    one.close()
    other.close()
    assert one.scans.jobs() == [] and other.scans.jobs() == []
    assert all(
        job.cancelled.is_set() and job.thread is not None and not job.thread.is_alive() for job in jobs
    )


def test_ended_readings_kept_are_bounded(tmp_path: Path):
    scans = ScanJobs()
    for number in range(MAX_ENDED_JOBS + 10):
        path = tmp_path / f"scan{number}.pdf"
        path.write_bytes(b"%PDF-1.4 " + bytes([number]))
        job = scans.start(path, 1, 0, lambda _job: 0)
        assert job.thread is not None
        job.thread.join(timeout=10)
    kept = scans.jobs()
    assert len(kept) <= MAX_ENDED_JOBS + 1
    assert kept[-1].path.name == f"scan{MAX_ENDED_JOBS + 9}.pdf"
    scans.close()
    assert scans.jobs() == []
