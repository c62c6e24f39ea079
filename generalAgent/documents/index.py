"""Indexing files into the search store, and searching one indexed file.

`SearchIndex` is the shell around one search store (search/store.py): indexes.db (SQLite
FTS5 + jieba) in the terminal, or a team's PostgreSQL database (SEARCH_DATABASE_URL), so a
file indexed through one process or replica is found through every other. `index_file`
extracts, chunks, segments and writes one document in one transaction; `search` finds a
document's chunks for a query with the store's ranked lookup, which knowledge search
shares. Its statements are written once, in SQLite's words (`db`: the store's `sql`).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from generalAgent.config.settings import DocumentSettings
from generalAgent.display import N_, Message, os_error_reason
from generalAgent.documents import ocr_background
from generalAgent.documents.extract import open_document
from generalAgent.documents.ocr import current_call, ocr_call, stop_if_cancelled
from generalAgent.documents.pdf import PdfFirstPass
from generalAgent.documents.reading import DocumentError, DocumentStream, OpenFile, Reading, open_plainly
from generalAgent.search.chunking import BLOCK_SEPARATOR, Chunk, iter_chunks
from generalAgent.search.connection import IndexDatabase
from generalAgent.search.language import SAMPLE_CHARS, main_language
from generalAgent.search.lookup import ChunkHit, LookupNotes, QueryError
from generalAgent.search.query import phrasings
from generalAgent.search.regex_scan import regex_chunks
from generalAgent.search.schema import DOCUMENTS_DOMAIN, now_iso
from generalAgent.search.storage import ChunkRow, VectorSource, segment_rows
from generalAgent.search.store import (
    PRIVATE,
    TERMINAL,
    DocumentStaging,
    SearchStore,
    SqliteSearchStore,
    Viewer,
)

__all__ = ["ChunkHit", "IndexedDocument", "QueryError", "SearchIndex", "compute_file_hash"]

HASH_BLOCK = 1 << 20
# A PDF up to this size is read once: its bytes are hashed and then parsed from memory
# (pdfium reads a buffer faster than a Python file it must call back into). Other files are
# hashed and read in pieces, so a long text log never sits in memory whole.
IN_MEMORY_BYTES = 32 << 20
IN_MEMORY_SUFFIXES = frozenset({".pdf"})
# What an index keeps of its PDFs' first passes for their second (pdf.py `PdfFirstPass`:
# page texts, 2-5 KB a page in the bench manuals). `generalagent index` reads a folder's text before any of
# its tables; past this, the oldest are dropped and their second pass reads the file whole.
FIRST_PASSES_MAX_BYTES = 32 << 20
# A reader of a document's tables holds them (`tables_pending` = the Unix time it began)
# so that no other reads them at the same time; a claim older than this was left by a
# reader that died (a second pass of a 1,000-page manual takes about a minute).
TABLES_CLAIM_SECONDS = 900
TABLES_CLAIM_POLL_SECONDS = 0.2

# (stage, chunks done, chunks total): lets the CLI draw a progress bar.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class IndexedDocument:
    file_hash: str
    item_id: str
    name: str
    file_type: str
    total_chunks: int
    total_chars: int
    reused: bool  # True: an index of these bytes existed and was fresh
    seconds: float = 0.0
    # Embedding failed: the document is indexed for keyword search only (the model reads its
    # English, a person its UI language).
    warning: Message | None = None
    notes: str = ""  # what reading left out (pages OCR did not reach), and the background's progress
    # Reading's notes for a person (`generalagent index`), said in the UI language; `notes`
    # is the English the model and --json read.
    said_notes: tuple[Message, ...] = ()
    ocr_left: int = 0  # scanned pages the call's OCR limit left unread (read in the background)
    language: str = ""  # main language of the text ("en", "zh", ...; search/language.py)
    tables_pending: bool = False  # a PDF's text is indexed, its tables are still to be read


def chunk_metadata(place: str, ocr: bool, figure: bool = False) -> str:
    """The JSON stored with a chunk: its citable place, whether OCR read its text, and
    whether its page is mostly a figure (search then points to view_page)."""
    facts: dict[str, Any] = {}
    if place:
        facts["place"] = place
    if ocr:
        facts["ocr"] = True
    if figure:
        facts["figure"] = True
    return json.dumps(facts, ensure_ascii=False) if facts else "{}"


def chunk_rows(chunks: Sequence[Chunk]) -> list[ChunkRow]:
    """The rows that store `chunks`, each under a new id: one random prefix per call and the
    chunk's number (a uuid4 per chunk cost a 261-page manual 3% of its indexing)."""
    prefix = uuid.uuid4().hex[:24]
    # The chunks of one block share their place: its JSON is written once, not per chunk.
    metadata = functools.cache(chunk_metadata)
    return [
        ChunkRow(
            f"{prefix}{c.index:08x}",
            c.index,
            c.text,
            c.start,
            c.end,
            c.page,
            c.heading,
            metadata(c.place, c.ocr, c.figure),
        )
        for c in chunks
    ]


def compute_file_hash(path: Path, open_file: OpenFile = open_plainly, algorithm: str = "md5") -> str:
    """A hash of the file's bytes (MD5 by default: identity for dedup in one user's index),
    read through `open_file`."""
    digest = hashlib.new(algorithm, usedforsecurity=False)
    with open_file(Path(path)) as handle:
        while block := handle.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def machine_name() -> str:
    """This machine, as a team's store tells apart the machines whose paths it records:
    the host name and, where one was written, /etc/machine-id (host names repeat across a
    team's laptops; containers of one image often share the image's machine-id but each
    has a host name of its own)."""
    try:
        machine_id = Path("/etc/machine-id").read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        machine_id = ""
    return f"{socket.gethostname()}/{machine_id[:64]}"


class FirstPasses:
    """The first passes of PDFs whose tables are pending, by file hash, for their second
    pass (pdf.py `PdfFirstPass`), within FIRST_PASSES_MAX_BYTES: one index's, never shared
    between indexes or processes (the second pass without one reads the file whole)."""

    def __init__(self, max_bytes: int = FIRST_PASSES_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._kept: dict[str, tuple[PdfFirstPass, int]] = {}
        self._bytes = 0

    def keep(self, file_hash: str, first: PdfFirstPass) -> None:
        self.take(file_hash)
        size = first.size()
        if size > self.max_bytes:
            return
        while self._kept and self._bytes + size > self.max_bytes:
            self.take(next(iter(self._kept)))
        self._kept[file_hash] = (first, size)
        self._bytes += size

    def take(self, file_hash: str) -> PdfFirstPass | None:
        """The first pass kept for `file_hash`, no longer kept; None when there is none."""
        kept = self._kept.pop(file_hash, None)
        if kept is None:
            return None
        self._bytes -= kept[1]
        return kept[0]


class SearchIndex(IndexDatabase):
    """The documents part of the search store. Use as a context manager, or call `close()`."""

    def __init__(
        self,
        db_path: Path,
        settings: DocumentSettings,
        vectors: VectorSource | None = None,
        open_file: OpenFile = open_plainly,
        *,
        conn: sqlite3.Connection | None = None,
        store: SearchStore | None = None,
        viewer: Viewer = TERMINAL,
        owns_store: bool = False,
    ) -> None:
        """`open_file` opens every file this index reads (to hash or extract it); the read
        tools pass the workspace's verified opener. `conn` is a connection to indexes.db to
        borrow (see `IndexDatabase`); `store`, a search store to use instead (a team's
        PostgreSQL one: search/store.py `open_search_store`), closed by `close()` only
        when `owns_store`.
        `viewer`: who indexes, the owner of the documents this index adds (their private
        space; the same bytes are indexed once, whoever adds them again)."""
        super().__init__(db_path, settings, conn=conn)
        self.vector_source = vectors
        self.open_file = open_file
        self.viewer = viewer
        self._store = store
        self._owns_store = owns_store
        self.first_passes = FirstPasses()

    @property
    def store(self) -> SearchStore:
        """The store the documents live in: the borrowed one, or indexes.db's."""
        if self._store is None:
            self._store = SqliteSearchStore(self.db_path, self.settings, conn=self.conn)
        return self._store

    def close(self) -> None:
        if self._store is not None and self._owns_store:
            self._store.close()
            self._store = None
        elif self._store is not None and self._store.backend == "sqlite" and self._conn is not None:
            self._store = None  # indexes.db's store borrows the connection closed below
        super().close()

    @property
    def db(self) -> Any:
        """The store's statements (sqlite3.Connection's execute, with `?` marks)."""
        return self.store.sql

    @property
    def location(self) -> str:
        """Where the index is, for the user: indexes.db's path, or 'PostgreSQL'."""
        return str(self.db_path) if self.store.backend == "sqlite" else "PostgreSQL (SEARCH_DATABASE_URL)"

    # -- state of one file ------------------------------------------------------------
    def document(self, file_hash: str) -> Any:
        return self.db.execute("SELECT * FROM documents WHERE file_hash = ?", (file_hash,)).fetchone()

    def is_fresh(self, path: Path, file_hash: str | None = None) -> bool:
        """Indexed with the current segmenter within INDEX_STALE_THRESHOLD_HOURS."""
        return self._fresh(self.document(file_hash or self.file_hash(path)))

    def _fresh(self, record: Any) -> bool:
        if record is None or record["segmenter"] != self.segmenter.name:
            return False
        age = datetime.now(UTC) - datetime.fromisoformat(record["indexed_at"])
        return age < timedelta(hours=self.settings.index_stale_threshold_hours)

    def file_hash(self, path: Path) -> str:
        """The hash of the file at `path` (`hash_algorithm`), read from the index while the
        file's size and modification time are those recorded when it was last hashed there
        (no re-reading: hashing a 250-page PDF costs several times the search itself)."""
        path = Path(path).resolve()
        stat = path.stat()
        known = self._known_path(path)
        if known is not None and (known["file_size"], known["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns):
            return str(known["file_hash"])
        return compute_file_hash(path, self.open_file, self.hash_algorithm)

    @property
    def hash_algorithm(self) -> str:
        """SHA-256 in a team's store, where one user's file must never pass for another's;
        MD5 in indexes.db (one user's, and its existing documents keep their identity)."""
        return "md5" if self.store.backend == "sqlite" else "sha256"

    @functools.cached_property
    def _machine(self) -> str:
        return machine_name()

    def _path_is(self, path: Path) -> tuple[str, list[str]]:
        """The condition naming `path` in document_paths: in a team's store, as seen on
        this machine (postgres_schema.py, 0004)."""
        if self.store.backend == "sqlite":
            return "path = ?", [str(path)]
        return "machine = ? AND path = ?", [self._machine, str(path)]

    def _known_path(self, path: Path) -> Any:
        where, values = self._path_is(path)
        return self.db.execute(
            f"SELECT file_hash, file_size, mtime_ns FROM document_paths WHERE {where}", values
        ).fetchone()

    def tables_pending(self, path: Path) -> bool:
        """Whether the file at `path` is indexed with its text only, its tables still to be
        read (`index_file(tables_later=False)` reads them)."""
        try:
            record = self.document(self.file_hash(Path(path)))
        except OSError:
            return False
        return record is not None and bool(record["tables_pending"])

    def _defers_tables(self, path: Path, tables_later: bool | None) -> bool:
        """Whether this indexing of `path` reads its text now and its tables later: only a
        PDF's, only with PDF_TABLES on. `tables_later=None` lets the call decide: a chat's
        call (it has a session whose background finishes the reading) does; a command
        (`generalagent search`, which has no later) does not."""
        if not self.settings.pdf_tables or Path(path).suffix.lower() != ".pdf":
            return False
        if tables_later is not None:
            return tables_later
        call = current_call()
        return call is not None and call.scans is not None and call.known is None

    # -- writing ----------------------------------------------------------------------
    def index_file(
        self,
        path: Path,
        *,
        force: bool = False,
        progress: Progress | None = None,
        tables_later: bool | None = None,
    ) -> IndexedDocument:
        """Index `path` unless these bytes are already indexed and fresh.

        A different version previously indexed from the same path is removed in the same
        transaction. Raises `DocumentError` for files that cannot be read.

        Tables read after the text is searchable: with `tables_later`, a PDF is read as
        with PDF_TABLES off (running heads, page numbers and columns still handled) and
        marked `tables_pending` when a page may hold a table; an indexing without it (the
        second pass) finds the mark, reads the PDF with its tables and replaces the
        document's chunks whole, under the same item, in one transaction: the result is
        the one-pass reading's, byte for byte. Until then the text chunks stay and are
        searched. `None`: decided by the call (`_defers_tables`); a chat's call then
        reads the tables in the session's background (`_read_tables_on`).
        """
        began = time.perf_counter()
        path = Path(path).resolve()
        try:
            stat = path.stat()
            known = self._known_path(path)
            unchanged = known is not None and (known["file_size"], known["mtime_ns"]) == (
                stat.st_size,
                stat.st_mtime_ns,
            )
            data: bytes | None = None
            if known is not None and unchanged:
                file_hash = str(known["file_hash"])
            elif stat.st_size <= IN_MEMORY_BYTES and path.suffix.lower() in IN_MEMORY_SUFFIXES:
                with self.open_file(path) as handle:
                    data = handle.read(IN_MEMORY_BYTES + 1)
                if len(data) > IN_MEMORY_BYTES:  # it grew since the stat: read it as a large file
                    data = None
                    file_hash = compute_file_hash(path, self.open_file, self.hash_algorithm)
                else:
                    file_hash = hashlib.new(self.hash_algorithm, data, usedforsecurity=False).hexdigest()
            else:
                file_hash = compute_file_hash(path, self.open_file, self.hash_algorithm)
        except FileNotFoundError:
            raise DocumentError(N_("{name} does not exist; check the path."), name=path.name) from None
        except IsADirectoryError:
            raise DocumentError(N_("{name} is a folder; give a file inside it."), name=path.name) from None
        except OSError as exc:
            raise DocumentError(
                N_("{name} cannot be read: {reason}."), name=path.name, reason=os_error_reason(exc)
            ) from None
        record = self.document(file_hash)
        call = current_call()
        background = call.scans.job_for(path) if call is not None and call.scans is not None else None
        later = self._defers_tables(path, tables_later)
        # A document whose tables are pending is fresh to a reading that defers them (its
        # text is searchable), stale to one that reads them: that is the second pass.
        if (
            record is not None
            and not force
            and self._fresh(record)
            and (later or not record["tables_pending"])
        ):
            if record["tables_pending"] and tables_later is None:
                background = self._read_tables_on(path, background)
            if not unchanged:  # a search writes nothing unless the path points elsewhere now
                with self.store.transaction():
                    self._remember_path(path, file_hash, stat)
            return IndexedDocument(
                file_hash,
                record["item_id"],
                record["file_name"],
                record["file_type"],
                record["total_chunks"],
                0,
                reused=True,
                seconds=time.perf_counter() - began,
                language=record["language"],
                notes=background.note() if background is not None else "",
                tables_pending=bool(record["tables_pending"]),
            )

        # One reader of a document's tables at a time (a chat's search and the background
        # pass, or another process, may both come to them): the second waits for the first's
        # result rather than reading them again.
        claim = 0
        if record is not None and record["tables_pending"] and not later:
            claim = self._claim_tables(file_hash, path.name)
            if not claim:  # read meanwhile by the reader that held them: its result stands
                return self.index_file(path, force=force, progress=progress, tables_later=tables_later)
        try:
            # The bytes just hashed are the bytes indexed (no second read, and no change between).
            opener = self.open_file if data is None else (lambda _path: io.BytesIO(data))
            settings = self.settings.model_copy(update={"pdf_tables": False}) if later else self.settings
            # The second pass of a PDF whose text is indexed: the chunks its tables leave as they
            # were keep their words (jieba's segmentation is most of a Chinese PDF's indexing),
            # and the pages its first pass read here are not read again (`PdfFirstPass`).
            segmented = None
            reading = Reading(keep_first_pass=later)
            first = self.first_passes.take(file_hash)
            if record is not None and record["tables_pending"] and record["segmenter"] == self.segmenter.name:
                segmented = self._segmented(record["item_id"])
                reading.first_pass = first if not later and not force else None
            stream = open_document(path, settings, progress, open_file=opener, reading=reading)
            item_id = record["item_id"] if record is not None else uuid.uuid4().hex
            model = self.vector_source.model if self.vector_source else ""
            with self.store.staging() as staged:
                warning, language = self._stage(stream, staged, progress, segmented)
                pending = later and stream.reading.table_pages > 0
                stamp = now_iso()
                with self.store.transaction() as conn:
                    # Another process may have indexed the same bytes since the lookup above; write
                    # into its item, or its chunks and a second, unreferenced item would both stay.
                    current = conn.execute(
                        "SELECT item_id FROM documents WHERE file_hash = ?", (file_hash,)
                    ).fetchone()
                    if current is not None:
                        item_id = current[0]
                    # A new document is its indexer's, in their private space; one indexed
                    # before keeps its owner (the bytes are one document, whoever reads them).
                    conn.execute(
                        "INSERT INTO items (id, domain, category, title, content, source, source_path,"
                        " owner, space, created_at, updated_at) VALUES (?, ?, ?, ?, '', 'file', ?, ?, ?, ?, ?)"
                        " ON CONFLICT(id) DO UPDATE SET content = '', source_path = excluded.source_path,"
                        " updated_at = excluded.updated_at",
                        (
                            item_id,
                            DOCUMENTS_DOMAIN,
                            stream.file_type,
                            stream.name,
                            str(path),
                            self.viewer.user,
                            PRIVATE,
                            stamp,
                            stamp,
                        ),
                    )
                    staged.write_content(conn, item_id)
                    # The second pass: a passage its tables leave as it was keeps its vector (the
                    # vector of a text depends on the text alone; re-embedding a manual locally
                    # takes minutes). Read in the transaction, so no vector of a passage now gone
                    # and none written meanwhile by the background embedding is missed.
                    kept = self._vectors_by_text(conn, item_id) if segmented is not None else {}
                    staged.write_chunks(conn, item_id, model)
                    if kept:
                        self._carry_vectors(conn, item_id, kept)
                    conn.execute(
                        "INSERT INTO documents (file_hash, item_id, file_name, file_type, file_size,"
                        " indexed_at, total_chunks, segmenter, language, tables_pending)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                        " ON CONFLICT(file_hash) DO UPDATE SET indexed_at = excluded.indexed_at,"
                        " total_chunks = excluded.total_chunks, segmenter = excluded.segmenter,"
                        " language = excluded.language, tables_pending = excluded.tables_pending",
                        (
                            file_hash,
                            item_id,
                            stream.name,
                            stream.file_type,
                            path.stat().st_size,
                            stamp,
                            staged.chunks,
                            self.segmenter.name,
                            language,
                            int(pending),
                        ),
                    )
                    self._remember_path(path, file_hash, stat)
        except BaseException:
            if claim:  # left as it was, pending: the next reader reads them
                self._release_tables(file_hash, claim)
            raise
        if progress:
            progress("write", staged.chunks, staged.chunks)
        first_pass = stream.reading.first_pass if pending else None
        if first_pass is not None:
            self.first_passes.keep(file_hash, first_pass)
        read_on = self._read_on(path, stream.reading, background)
        if pending and tables_later is None and not read_on:  # a chat's call: its session reads them
            job = self._read_tables_on(path, background, file_hash)
            read_on = job.note() if job is not None else ""
        return IndexedDocument(
            file_hash,
            item_id,
            stream.name,
            stream.file_type,
            staged.chunks,
            staged.chars,
            reused=False,
            seconds=time.perf_counter() - began,
            warning=warning,
            # What OCR's page limits left unread (documents/ocr.py), said with the result.
            notes=" ".join([*(note.english() for note in stream.reading.notes), read_on]).strip(),
            said_notes=tuple(stream.reading.notes),
            language=language,
            ocr_left=stream.reading.ocr_left,
            tables_pending=pending,
        )

    def _claim_tables(self, file_hash: str, name: str) -> int:
        """Take the reading of the document's pending tables: `tables_pending` set to the
        time it starts (a Unix time, > 1), in one statement, so that of two readers one
        takes it. While another reader holds it, wait (cancellable) for its result; a claim
        older than TABLES_CLAIM_SECONDS was left by a reader that died and is taken over.
        The claim's time, or 0 when the tables were read meanwhile (or the document went)."""
        while True:
            now = int(time.time())
            with self.store.transaction() as conn:
                taken = conn.execute(
                    "UPDATE documents SET tables_pending = ? WHERE file_hash = ?"
                    " AND (tables_pending = 1 OR (tables_pending > 1 AND tables_pending < ?))",
                    (now, file_hash, now - TABLES_CLAIM_SECONDS),
                ).rowcount
            if taken:
                return now
            record = self.document(file_hash)
            if record is None or not record["tables_pending"]:
                return 0
            stop_if_cancelled(name)
            time.sleep(TABLES_CLAIM_POLL_SECONDS)

    def _release_tables(self, file_hash: str, claim: int) -> None:
        """The claim `claim` given back unread (a cancel, an error): pending again."""
        with self.store.transaction() as conn:
            conn.execute(
                "UPDATE documents SET tables_pending = 1 WHERE file_hash = ? AND tables_pending = ?",
                (file_hash, claim),
            )

    def _read_on(self, path: Path, reading: Reading, running: ocr_background.ScanJob | None) -> str:
        """When a call's OCR limit left pages of a scan unread, read them in the background
        (ocr_background.py) and say so; '' when there is nothing to read on, or when this
        is itself a step of the background reading."""
        call = current_call()
        if not reading.ocr_left or call is None or call.known is not None or call.scans is None:
            return ""
        if running is not None and not running.finished:
            return running.note()

        def step(job: ocr_background.ScanJob, index: SearchIndex) -> int:
            return index.index_file(path, force=True).ocr_left

        def read_on(job: ocr_background.ScanJob) -> AbstractContextManager[object]:
            return ocr_call(
                ocr_background.OCR_STEP_PAGES, job.cancelled, known=job.texts, known_runs=job.runs
            )

        return call.scans.start(
            path, reading.ocr_read, reading.ocr_left, self._in_own_store(read_on, step)
        ).note()

    def _read_tables_on(
        self, path: Path, running: ocr_background.ScanJob | None, file_hash: str = ""
    ) -> ocr_background.ScanJob | None:
        """Read the tables of `path` (indexed with its text only) in the session's background,
        as a long scan's OCR is read on (ocr_background.py): one step, an indexing that reads
        them, in a store of its own, handed the first pass this index kept of `file_hash`.
        The job running for these bytes (OCR's, whose steps read tables, or this one) is
        returned as it is; None outside a chat's call."""
        call = current_call()
        if call is None or call.scans is None:
            return running
        if running is not None and not running.finished:
            return running
        first = self.first_passes.take(file_hash) if file_hash else None

        def step(job: ocr_background.ScanJob, index: SearchIndex) -> int:
            if first is not None:
                index.first_passes.keep(file_hash, first)
            index.index_file(path, tables_later=False)
            return 0

        def read_on(job: ocr_background.ScanJob) -> AbstractContextManager[object]:
            return ocr_call(None, job.cancelled)

        return call.scans.start(path, 0, 1, self._in_own_store(read_on, step), kind=ocr_background.TABLES)

    def _in_own_store(
        self,
        read_on: Callable[[ocr_background.ScanJob], AbstractContextManager[object]],
        step: Callable[[ocr_background.ScanJob, SearchIndex], int],
    ) -> Callable[[ocr_background.ScanJob], int]:
        """A background job's step: `step` run inside the call `read_on` opens for the job, on
        an index of this one's settings over a store of its own (the background thread's:
        this index's store is used by one call at a time)."""
        db_path, settings, vectors, open_file, viewer = (
            self.db_path,
            self.settings,
            self.vector_source,
            self.open_file,
            self.viewer,
        )
        reopen = self.store.reopen

        def run(job: ocr_background.ScanJob) -> int:
            with (
                read_on(job),
                reopen() as store,
                SearchIndex(db_path, settings, vectors, open_file, store=store, viewer=viewer) as index,
            ):
                return step(job, index)

        return run

    @staticmethod
    def _vectors_by_text(conn: Any, item_id: str) -> dict[str, tuple[str, bytes]]:
        """The item's chunks that have a vector: text -> (model, vector)."""
        return {
            text: (model, vector)
            for text, model, vector in conn.execute(
                "SELECT f.text, v.model, v.vector FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
                " JOIN chunk_vectors v ON v.chunk_rowid = c.rowid WHERE c.item_id = ?",
                (item_id,),
            ).fetchall()
        }

    @staticmethod
    def _carry_vectors(conn: Any, item_id: str, kept: dict[str, tuple[str, bytes]]) -> None:
        """Give the item's new chunks without a vector the vector their text had."""
        unembedded = conn.execute(
            "SELECT c.rowid, f.text FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
            " LEFT JOIN chunk_vectors v ON v.chunk_rowid = c.rowid"
            " WHERE c.item_id = ? AND v.chunk_rowid IS NULL",
            (item_id,),
        ).fetchall()
        carried = [(rowid, *kept[text]) for rowid, text in unembedded if text in kept]
        if carried:
            conn.executemany(
                "INSERT INTO chunk_vectors (chunk_rowid, model, vector) VALUES (?, ?, ?)", carried
            )

    def _segmented(self, item_id: str) -> dict[str, str]:
        """The indexed Chinese chunks of `item_id`, each text with its segmented words."""
        return dict(
            self.db.execute(
                "SELECT f.text, f.text_jieba FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
                " WHERE c.item_id = ? AND f.text_jieba != ''",
                (item_id,),
            ).fetchall()
        )

    def _stage(
        self,
        stream: DocumentStream,
        staged: DocumentStaging,
        progress: Progress | None,
        segmented: dict[str, str] | None = None,
    ) -> tuple[Message | None, str]:
        """Read, chunk, segment (and embed) the document block by block into `staged`;
        returns a warning when embeddings failed and the document is indexed for keyword
        search only, and the text's main language (told from its first SAMPLE_CHARS).
        Nothing here holds the write lock."""
        stage = "embed" if self.vector_source is not None else "segment"
        warning: Message | None = None
        sample: list[str] = []
        sampled = 0
        # Ctrl-C is seen between pieces (1 MB of text, a page) and every SEGMENT_STEP_ROWS
        # chunks of their segmentation: a 40 MB file stops within a second, not at its end.
        between = functools.partial(stop_if_cancelled, stream.name)
        for number, (block, chunks) in enumerate(iter_chunks(stream.blocks, self.chunking)):
            between()
            if sampled < SAMPLE_CHARS:
                sample.append(block.text[: SAMPLE_CHARS - sampled])
                sampled += len(sample[-1])
            rows = chunk_rows(chunks)
            words = segment_rows(rows, self.segmenter, stream.name, lambda _done: between(), segmented)
            vectors = None
            if self.vector_source is not None and warning is None:
                vectors, warning = self._vectors(rows)
                if warning is not None:
                    staged.drop_vectors()
            staged.add(f"{BLOCK_SEPARATOR if number else ''}{block.text}", rows, words, vectors)
            if progress:
                # Chunks so far, and the total they point to at this share of the file read.
                share = stream.reading.share
                estimate = round(staged.chunks / share) if share else staged.chunks
                progress(stage, staged.chunks, max(estimate, staged.chunks))
        staged.flush()  # the last pieces staged now, not under the write lock
        return warning, main_language("\n".join(sample))

    def _vectors(self, rows: Sequence[ChunkRow]) -> tuple[list[bytes] | None, Message | None]:
        if self.vector_source is None or not rows:
            return None, None
        from generalAgent.search.embeddings import EmbeddingError

        try:
            return self.vector_source.vectors([r.text for r in rows]), None
        except EmbeddingError as exc:
            return None, Message(
                N_("Embeddings failed, indexed for keyword search only: {problem}"), {"problem": exc.said}
            )

    def _remember_path(self, path: Path, file_hash: str, stat: os.stat_result) -> None:
        """Point `path` at `file_hash` (with the size and modification time it was hashed at);
        drop the version it pointed at if nothing else does."""
        where, values = self._path_is(path)
        previous = self.db.execute(f"SELECT file_hash FROM document_paths WHERE {where}", values).fetchone()
        if self.store.backend == "sqlite":
            self.db.execute(
                "INSERT INTO document_paths (path, file_hash, file_size, mtime_ns) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(path) DO UPDATE SET file_hash = excluded.file_hash,"
                " file_size = excluded.file_size, mtime_ns = excluded.mtime_ns",
                (str(path), file_hash, stat.st_size, stat.st_mtime_ns),
            )
        else:
            self.db.execute(
                "INSERT INTO document_paths (machine, path, file_hash, file_size, mtime_ns)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT(machine, path) DO UPDATE SET"
                " file_hash = excluded.file_hash, file_size = excluded.file_size, mtime_ns = excluded.mtime_ns",
                (self._machine, str(path), file_hash, stat.st_size, stat.st_mtime_ns),
            )
            # A path recorded before machines were told apart: this machine's now (its old
            # version, an MD5 identity, goes if no other path shows it).
            legacy = self.db.execute(
                "DELETE FROM document_paths WHERE machine = '' AND path = ? RETURNING file_hash", (str(path),)
            ).fetchone()
            if legacy and legacy[0] != file_hash:
                self._drop_unreferenced(legacy[0])
        if previous and previous[0] != file_hash:
            self._drop_unreferenced(previous[0])

    def _drop_unreferenced(self, file_hash: str) -> bool:
        still_used = self.db.execute(
            "SELECT 1 FROM document_paths WHERE file_hash = ? LIMIT 1", (file_hash,)
        ).fetchone()
        if still_used:
            return False
        return self._delete_document(file_hash)

    def _delete_document(self, file_hash: str) -> bool:
        cursor = self.db.execute(
            "DELETE FROM items WHERE id = (SELECT item_id FROM documents WHERE file_hash = ?)",
            (file_hash,),
        )
        return cursor.rowcount > 0

    # -- maintenance ------------------------------------------------------------------
    def cleanup_for_file(self, path: Path, keep_hash: str) -> int:
        """Remove the index of an older version of the file at `path` (not `keep_hash`).

        A version that another path still shows is kept for that path.
        """
        path = Path(path).resolve()
        where, values = self._path_is(path)
        with self.store.transaction() as conn:
            row = conn.execute(f"SELECT file_hash FROM document_paths WHERE {where}", values).fetchone()
            if row is None or row[0] == keep_hash:
                return 0
            conn.execute(f"DELETE FROM document_paths WHERE {where}", values)
            return int(self._drop_unreferenced(row[0]))

    def cleanup_old(self, days: int = 30) -> int:
        """Delete documents indexed more than `days` days ago; returns how many."""
        cutoff = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
        with self.store.transaction() as conn:
            hashes = [
                r[0] for r in conn.execute("SELECT file_hash FROM documents WHERE indexed_at <= ?", (cutoff,))
            ]
            for file_hash in hashes:
                self._delete_document(file_hash)
        if hashes and self.store.backend == "sqlite":
            self.conn.execute("VACUUM")  # give the space back to the disk (PostgreSQL's autovacuum does)
        return len(hashes)

    def stats(self) -> dict[str, Any]:
        files, chunks, size = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(total_chunks), 0), COALESCE(SUM(file_size), 0) FROM documents"
        ).fetchone()
        items = self.db.execute("SELECT COUNT(*) FROM items").fetchone()[0]
        if self.store.backend == "sqlite":
            paths = (self.db_path, Path(f"{self.db_path}-wal"))
            db_size = sum(p.stat().st_size for p in paths if p.exists())
        else:
            db_size = int(self.db.execute("SELECT pg_database_size(current_database())").fetchone()[0])
        return {
            "total_files": int(files),
            "total_chunks": int(chunks),
            "total_size_bytes": int(size),
            "knowledge_items": int(items) - int(files),
            "db_path": self.location,
            "db_size_bytes": db_size,
        }

    # -- reading ----------------------------------------------------------------------
    def search(
        self, path: Path, query: str | Sequence[str], max_results: int | None = None, *, regex: bool = False
    ) -> list[ChunkHit]:
        """Best chunks of the already indexed file at `path`; [] if it is not indexed."""
        try:
            file_hash = self.file_hash(Path(path))
        except OSError:
            return []
        record = self.document(file_hash)
        if record is None:
            return []
        return self.search_item(record["item_id"], query, max_results, regex=regex)

    def search_item(
        self,
        item_id: str,
        query: str | Sequence[str],
        max_results: int | None = None,
        *,
        regex: bool = False,
        chunks: int | None = None,
        semantic: Sequence[Sequence[tuple[int, float]]] = (),
        notes: LookupNotes | None = None,
    ) -> list[ChunkHit]:
        """Best chunks of one indexed document (or any item) by its id (SEARCH_MAX_RESULTS_DEFAULT
        of them unless `max_results` says). `query` is one string or several phrasings of
        one question, fused by rank (search/lookup.py). `chunks`, the document's number of
        chunks when the caller knows it, saves scanning them for their rowids; `semantic`
        are rankings of its chunks by vectors (search/semantic.py), fused with the rest;
        `notes` is told what the lookup added to the query (its dictionary gloss)."""
        if max_results is None:
            max_results = self.settings.search_max_results_default
        if regex:
            if not isinstance(query, str):
                raise QueryError("a regular expression search takes one pattern, not a list")
            return regex_chunks(self.db, item_id, query, max_results)
        rowid_range = self.store.item_rowid_range(item_id, chunks)
        if rowid_range is None:
            return []
        return self.store.find_chunks(
            query if isinstance(query, str) else phrasings(query),
            max_results,
            rowid_range=rowid_range,
            semantic=semantic,
            notes=notes,
        )

    def language(self, item_id: str) -> str:
        """The stored main language of an indexed document ("" when unknown)."""
        row = self.db.execute("SELECT language FROM documents WHERE item_id = ?", (item_id,)).fetchone()
        return str(row[0]) if row is not None else ""

    def neighbours(self, item_id: str, chunk_index: int, before: int = 1, after: int = 1) -> list[ChunkHit]:
        return self.store.window(item_id, chunk_index - before, chunk_index + after)
