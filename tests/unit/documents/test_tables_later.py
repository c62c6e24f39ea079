"""A PDF's tables read after its text is searchable (documents/index.py, `tables_pending`),
on both backends of the search store: the text first, marked; the second pass replaces the
chunks whole with exactly what one pass with tables gives; in between, and after a cancel
or a change of the file, the index is whole and searchable."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.documents import open_index
from generalAgent.documents.background_indexing import FolderIndexer
from generalAgent.documents.index import SearchIndex
from generalAgent.documents.ocr import ocr_call
from generalAgent.documents.ocr_background import TABLES, ScanJobs
from generalAgent.documents.reading import ReadingCancelled
from generalAgent.search.background_embedding import embed_pending, pending_count
from tests.support.postgres import fresh_schema_url
from tests.support.table_pdfs import make_table_pdf

HEADER = ["Region", "Units", "Owner"]


def rows(count: int, owner: str = "华东地区销售部") -> list[list[object]]:
    # Chinese cells: the second pass takes the segmentation of the chunks it leaves as they were.
    return [[f"Region {n}", n * 10, owner] for n in range(1, count + 1)]


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, data_dir: Path) -> Iterator[Settings]:
    urls = fresh_schema_url() if request.param == "postgresql" else iter([None])
    for url in urls:
        yield load_settings(
            env_file=None,
            paths={"data_dir": data_dir, "search_database_url": url},
            documents={"embedding_model": None},
        )


@pytest.fixture
def index(settings: Settings) -> Iterator[SearchIndex]:
    with open_index(settings) as index:
        yield index


@pytest.fixture
def report(tmp_path: Path) -> Path:
    return make_table_pdf(tmp_path / "report.pdf", HEADER, rows(45))


def chunks(index: SearchIndex, path: Path) -> list[tuple[object, ...]]:
    """Everything a search reads of each chunk of the document at `path` (ids left out:
    they are new at every indexing)."""
    record = index.document(index.file_hash(path))
    return [
        tuple(row)
        for row in index.db.execute(
            "SELECT c.chunk_index, f.text, f.text_jieba, f.title, c.start_position, c.end_position,"
            " c.page, c.heading, c.metadata FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
            " WHERE c.item_id = ? ORDER BY c.chunk_index",
            (record["item_id"],),
        ).fetchall()
    ]


def places(index: SearchIndex, path: Path) -> list[str]:
    return [str(row[8]) for row in chunks(index, path)]


def test_two_passes_leave_what_one_pass_with_tables_leaves(index: SearchIndex, report: Path) -> None:
    one_pass = index.index_file(report, tables_later=False)
    assert not one_pass.tables_pending and not index.tables_pending(report)
    whole = chunks(index, report)
    assert any('"page 1, table 1, rows 1' in place for place in places(index, report))
    assert any(row[2] for row in whole)  # segmented words stored

    first = index.index_file(report, force=True, tables_later=True)
    assert first.tables_pending and index.tables_pending(report)
    assert first.item_id == one_pass.item_id
    assert chunks(index, report) != whole and not any(", table " in p for p in places(index, report))

    second = index.index_file(report, tables_later=False)
    assert not second.reused and not second.tables_pending and not index.tables_pending(report)
    assert second.item_id == one_pass.item_id and second.total_chunks == one_pass.total_chunks
    assert chunks(index, report) == whole
    # Read whole: a further indexing of either kind reads nothing.
    assert index.index_file(report).reused and index.index_file(report, tables_later=True).reused


def test_a_search_while_the_tables_are_pending_finds_the_text(index: SearchIndex, report: Path) -> None:
    index.index_file(report, tables_later=True)
    assert index.index_file(report, tables_later=True).reused  # the text pass does not read it again
    hits = index.search(report, "Region 37", 5)
    assert hits and "Region 37" in hits[0].text and hits[0].place.startswith("page ")
    assert ", table " not in hits[0].place


def test_a_pdf_without_a_table_like_page_is_read_whole_in_the_first_pass(
    index: SearchIndex, tmp_path: Path
) -> None:
    from tests.support.documents import make_pdf

    plain = make_pdf(tmp_path / "plain.pdf", [["A page of prose about backups and restores."]])
    document = index.index_file(plain, tables_later=True)
    assert not document.tables_pending and not index.tables_pending(plain)


def test_a_cancelled_second_pass_keeps_the_text_chunks_and_the_mark(index: SearchIndex, report: Path) -> None:
    index.index_file(report, tables_later=True)
    text_chunks = chunks(index, report)
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(ReadingCancelled), ocr_call(None, cancelled):
        index.index_file(report, tables_later=False)
    assert chunks(index, report) == text_chunks and index.tables_pending(report)
    index.index_file(report, tables_later=False)  # the next pass reads the tables
    assert not index.tables_pending(report) and any(", table 1, " in p for p in places(index, report))


def test_a_file_changed_while_its_tables_are_pending_is_read_whole_once(
    index: SearchIndex, report: Path, tmp_path: Path
) -> None:
    first = index.index_file(report, tables_later=True)
    make_table_pdf(report, HEADER, rows(30, owner="Marketing"))  # new bytes at the same path
    document = index.index_file(report, tables_later=False)
    assert document.file_hash != first.file_hash and not document.tables_pending
    assert index.document(first.file_hash) is None  # the old version went with its text chunks
    assert any("Marketing" in str(row[1]) for row in chunks(index, report))
    assert any(", table 1, " in p for p in places(index, report))


class DigestVectors:
    """Vectors that depend on the text alone (a stand-in for an embedding model: which
    chunks get vectors is what is tested, not what the vectors mean)."""

    model = "digest-test"

    def vectors(self, texts: Sequence[str], progress: object = None) -> list[bytes]:
        return [hashlib.sha256(text.encode()).digest() for text in texts]


def test_replaced_chunks_lose_their_vectors_the_unchanged_keep_them_and_the_new_ones_are_embedded(
    index: SearchIndex, report: Path
) -> None:
    vectors = DigestVectors()
    index.index_file(report, tables_later=True)
    embed_pending(index.store, vectors, 16)
    assert pending_count(index.db, vectors.model) == 0
    text_pass = {str(row[1]) for row in chunks(index, report)}
    index.index_file(report, tables_later=False)
    orphans = index.db.execute(
        "SELECT COUNT(*) FROM chunk_vectors v WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.rowid = v.chunk_rowid)"
    ).fetchone()[0]
    assert orphans == 0
    after = [str(row[1]) for row in chunks(index, report)]
    new_texts = [text for text in after if text not in text_pass]
    assert new_texts and len(new_texts) < len(after)  # the tables' rows are new, the prose is not
    # Only the new passages wait for a vector; the others kept theirs, which is their text's.
    assert pending_count(index.db, vectors.model) == len(new_texts)
    embed_pending(index.store, vectors, 16)
    assert pending_count(index.db, vectors.model) == 0
    record = index.document(index.file_hash(report))
    for text, vector in index.db.execute(
        "SELECT f.text, v.vector FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
        " JOIN chunk_vectors v ON v.chunk_rowid = c.rowid WHERE c.item_id = ?",
        (record["item_id"],),
    ).fetchall():
        assert bytes(vector) == DigestVectors().vectors([text])[0]


def test_a_chats_search_answers_from_the_text_and_reads_the_tables_in_the_background(
    index: SearchIndex, report: Path
) -> None:
    jobs = ScanJobs()
    try:
        with ocr_call(5, scans=jobs):
            document = index.index_file(report)
        assert document.tables_pending and "tables of report.pdf are being read" in document.notes
        job = jobs.job_for(report)
        assert job is not None and job.kind == TABLES
        assert job.thread is not None
        job.thread.join(60)
        assert job.finished and not job.error
        assert not index.tables_pending(report)
        with ocr_call(5, scans=jobs):
            again = index.index_file(report)
        assert again.reused and not again.tables_pending and not again.notes
        assert any(", table 1, " in p for p in places(index, report))
    finally:
        jobs.close()


def test_the_background_pass_indexes_the_text_of_every_file_then_the_tables(
    settings: Settings, tmp_path: Path
) -> None:
    if settings.paths.search_database_url:
        pytest.skip("the chat's background pass indexes indexes.db")
    folder = tmp_path / "folder"
    folder.mkdir()
    make_table_pdf(folder / "a.pdf", HEADER, rows(20))
    (folder / "notes.md").write_text("# Notes\n\nBackups run nightly.\n", encoding="utf-8")
    indexer = FolderIndexer(settings.paths.indexes_db, settings.documents, folder).start()
    assert indexer.wait(120)
    progress = indexer.progress()
    assert progress.indexed == 2 and progress.tables_total == 1 and progress.tables_done == 1
    assert not progress.stopped
    with open_index(settings) as index:
        assert not index.tables_pending(folder / "a.pdf")
        assert any(", table 1, " in p for p in places(index, folder / "a.pdf"))


def test_a_background_pass_cancelled_between_its_passes_leaves_the_text_searchable(
    settings: Settings, tmp_path: Path
) -> None:
    if settings.paths.search_database_url:
        pytest.skip("the chat's background pass indexes indexes.db")
    folder = tmp_path / "folder"
    folder.mkdir()
    pdf = make_table_pdf(folder / "a.pdf", HEADER, rows(20))
    indexer = FolderIndexer(settings.paths.indexes_db, settings.documents, folder)
    first_pass = indexer._index_each

    def then_cancel(*args: object) -> list[Path]:
        pending = first_pass(*args)  # type: ignore[arg-type]
        indexer.cancel()  # the user leaves between the two passes
        return pending

    indexer._index_each = then_cancel  # type: ignore[method-assign]
    indexer.start()
    assert indexer.wait(120)
    assert indexer.progress().stopped == "cancelled"
    with open_index(settings) as index:
        assert index.tables_pending(pdf)
        assert index.search(pdf, "Region 7", 5)


def styled_pdf(path: Path, prose_pages: int, table: Sequence[Sequence[object]] = ()) -> Path:
    """Pages of prose whose every word changes font (commands and terms set in bold and
    italic, as manuals set them): more text runs than lines, as on a page of a table, but
    no white between them; then, given `table`, a page with that table (unruled columns)."""
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    words = [
        "the",
        "backup",
        "service",
        "copies",
        "every",
        "changed",
        "file",
        "to",
        "the",
        "archive",
        "each",
        "night",
    ]
    fonts = ["Helvetica", "Helvetica-Bold", "Helvetica-Oblique"]
    pdf = canvas.Canvas(str(path))
    for page in range(prose_pages):
        y = 780
        for line in range(30):
            x = 60.0
            for n, word in enumerate(words):
                font = fonts[(n + line + page) % len(fonts)]
                pdf.setFont(font, 10)
                pdf.drawString(x, y, word + " ")
                x += stringWidth(word + " ", font, 10)
            y -= 14
        pdf.showPage()
    if table:
        y = 780
        pdf.setFont("Helvetica", 10)
        pdf.drawString(60, y, "Units by region, as counted at the end of the year.")
        y -= 28
        for row in table:
            for column, cell in enumerate(row):
                pdf.drawString(60 + 130 * column, y, str(cell))
            y -= 16
        pdf.showPage()
    pdf.save()
    return path


def test_a_pdf_whose_pages_only_look_like_a_table_is_read_whole_in_its_first_pass(
    index: SearchIndex, tmp_path: Path
) -> None:
    # Runs outnumber lines on every page (the first, cheap sign), but no stack of lines
    # has a column's white: the table finder would read nothing, so nothing is pending.
    pdf = styled_pdf(tmp_path / "styled.pdf", 3)
    document = index.index_file(pdf, tables_later=True)
    assert not document.tables_pending and not index.tables_pending(pdf)
    whole = chunks(index, pdf)
    assert index.index_file(pdf, tables_later=False).reused  # no second pass
    assert index.index_file(pdf, force=True, tables_later=False).total_chunks == len(whole)
    assert chunks(index, pdf) == whole  # what one pass with tables gives


def test_the_second_pass_reads_again_only_the_pages_that_may_hold_a_table(
    index: SearchIndex, tmp_path: Path
) -> None:
    pdf = styled_pdf(tmp_path / "mixed.pdf", 2, [HEADER, *rows(8, owner="East")])
    first = index.index_file(pdf, tables_later=True)
    assert first.tables_pending
    kept = index.first_passes.take(first.file_hash)
    assert kept is not None and kept.candidates == [2]  # 0-based: the table's page only
    # The prose pages come from what the first pass read, not from the file again.
    kept.texts[0] = "What the first pass kept of page one, which the second pass does not read again."
    index.first_passes.keep(first.file_hash, kept)
    second = index.index_file(pdf, tables_later=False)
    assert not second.tables_pending
    page_one = " ".join(str(row[1]) for row in chunks(index, pdf) if row[6] == 1)
    assert "kept of page one" in page_one and "archive" not in page_one
    assert "archive" in " ".join(str(row[1]) for row in chunks(index, pdf) if row[6] == 2)
    assert any('"page 3, table 1, rows 1' in place for place in places(index, pdf))
    assert index.first_passes.take(first.file_hash) is None  # handed over once


def test_an_index_keeps_first_passes_within_its_bound(index: SearchIndex, tmp_path: Path) -> None:
    a = make_table_pdf(tmp_path / "a.pdf", HEADER, rows(40))
    b = make_table_pdf(tmp_path / "b.pdf", HEADER, rows(40, owner="West"))
    first_a = index.index_file(a, tables_later=True)
    kept = index.first_passes.take(first_a.file_hash)
    assert kept is not None
    index.first_passes.max_bytes = kept.size() + kept.size() // 2  # room for one
    index.first_passes.keep(first_a.file_hash, kept)
    first_b = index.index_file(b, tables_later=True)
    assert index.first_passes.take(first_a.file_hash) is None  # the older one made room
    assert index.first_passes.take(first_b.file_hash) is not None
    # Without what its first pass kept, a second pass reads the file whole: the same result.
    index.index_file(a, tables_later=False)
    assert any('"page 1, table 1, rows 1' in place for place in places(index, a))


def test_two_readers_of_one_pdfs_tables_read_them_once(settings: Settings, report: Path) -> None:
    """A chat's search and the background pass (or two processes) that both come to a PDF's
    pending tables: the second waits for the first's result instead of reading them too."""
    with open_index(settings) as index:
        index.index_file(report, tables_later=True)
    results: dict[str, object] = {}
    second_done = threading.Event()

    def second_reader() -> None:
        with open_index(settings) as other:
            results["second"] = other.index_file(report, tables_later=False)
        second_done.set()

    thread = threading.Thread(target=second_reader)

    def progress(stage: str, done: int, total: int) -> None:
        if not thread.is_alive() and not second_done.is_set():
            thread.start()  # the second comes while the first reads
            results["waited"] = not second_done.wait(1.5)

    with open_index(settings) as index:
        first = index.index_file(report, tables_later=False, progress=progress)
    thread.join(60)
    second = results["second"]
    assert results["waited"] and not first.reused
    assert getattr(second, "reused", None) is True and getattr(second, "tables_pending", None) is False
    with open_index(settings) as index:
        assert not index.tables_pending(report)
        assert any(", table 1, " in p for p in places(index, report))


def test_a_reader_that_stops_gives_its_claim_back(index: SearchIndex, report: Path) -> None:
    index.index_file(report, tables_later=True)
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(ReadingCancelled), ocr_call(None, cancelled):
        index.index_file(report, tables_later=False)
    record = index.document(index.file_hash(report))
    assert record["tables_pending"] == 1  # pending, held by nobody: the next reader does not wait
    began = time.monotonic()
    index.index_file(report, tables_later=False)
    assert time.monotonic() - began < 30 and not index.tables_pending(report)


def test_a_claim_left_by_a_reader_that_died_is_taken_over(index: SearchIndex, report: Path) -> None:
    first = index.index_file(report, tables_later=True)
    with index.store.transaction() as conn:  # a reader that began 20 minutes ago and died
        conn.execute(
            "UPDATE documents SET tables_pending = ? WHERE file_hash = ?",
            (int(time.time()) - 1_200, first.file_hash),
        )
    began = time.monotonic()
    second = index.index_file(report, tables_later=False)
    assert not second.reused and not index.tables_pending(report)
    assert time.monotonic() - began < 30
