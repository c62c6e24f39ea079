"""Indexing the working folder's documents in the background while the chat waits for a question.

The first search of a folder indexes what is new or changed before it answers: a
600-page folder took 24–32 s. A chat started in a folder the user trusted (its files are
read in place, tools/workspace.py) starts one `FolderIndexer` at once, so by the first
question the index is ready or well on; a search then only checks each file's size and
modification time (~0.1 ms a file) and reads nothing twice: the index is the one the
search uses (indexes.db, one transaction per file, so the two never see half a file).

Bounded: at most MAX_FOLDER_FILES files (the folder search's own walk, hidden files and
links out of the folder left out) and BACKGROUND_INDEX_SECONDS; off with
BACKGROUND_INDEXING=false. Cancellable inside a file (`cancel`, called when the chat ends
or is interrupted): the pass reads each file as a cancellable call (documents/ocr.py
`ocr_call`), so the reading stops between pieces (a page, 1 MB of text), segmentation
batches and OCR pages, and the file's one transaction is never begun, or is rolled back
(`sqlite3.Connection.interrupt`) when the cancel comes while it is written: a file is
indexed whole or not at all, and the next pass reads it again. It only reads counters for
its view (`progress`); nothing here prints.

Two passes: the first indexes every file's text (a PDF read as with PDF_TABLES off, so
the folder is searchable at that cost), the second reads the tables of the PDFs that
may hold some and replaces each one's chunks whole (documents/index.py, `tables_pending`).
A cancel or a crash between or inside them leaves each PDF's text chunks in place; the
next pass, or the next search that reads tables, finishes the reading.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generalAgent.config.settings import DocumentSettings

if TYPE_CHECKING:
    from generalAgent.documents.index import SearchIndex

LOGGER = logging.getLogger(__name__)

# One background pass stops after this long; the first search goes on from there (as a
# search's own indexing does after FOLDER_INDEX_SECONDS).
BACKGROUND_INDEX_SECONDS = 1_800.0
# Files one pass considers, at most: the folder search's own bound (folder.MAX_FOLDER_FILES).
MAX_FILES = 2_000


@dataclass(frozen=True)
class IndexingProgress:
    """Where a background pass stands: files done of the folder's, the one being read."""

    done: int
    total: int
    current: str
    indexed: int  # newly indexed (the rest were unchanged, or unreadable)
    failed: int
    finished: bool
    stopped: str = ""  # why it stopped early: "cancelled", "time", or an error; "" when whole
    seconds: float = 0.0
    tables_done: int = 0  # PDFs whose tables the second pass has read
    tables_total: int = 0  # PDFs whose tables are to be read (known when the first pass ends)


class FolderIndexer:
    """One background pass over a folder's documents into indexes.db."""

    def __init__(
        self,
        db_path: Path,
        settings: DocumentSettings,
        folder: Path,
        *,
        max_files: int = MAX_FILES,
        max_seconds: float = BACKGROUND_INDEX_SECONDS,
        on_done: Callable[[IndexingProgress], None] | None = None,
    ) -> None:
        self.db_path, self.settings, self.folder = db_path, settings, folder
        self.max_files, self.max_seconds, self.on_done = max_files, max_seconds, on_done
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._done = self._total = self._indexed = self._failed = 0
        self._tables_done = self._tables_total = 0
        self._current = ""
        self._finished = False
        self._stopped = ""
        self._began = 0.0
        self._ended = 0.0
        self._connection: sqlite3.Connection | None = None  # the pass's, while it runs

    def start(self) -> FolderIndexer:
        self._began = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="folder-indexer", daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop within the file being read: its reading at the next piece, its write (one
        transaction) rolled back if it is under way; the next pass reads that file again."""
        self._cancelled.set()
        with self._lock:
            if self._connection is not None:
                # Thread-safe; ends the statement running now (none: no effect), and SQLite
                # rolls back the transaction it was part of.
                self._connection.interrupt()

    def wait(self, seconds: float | None = None) -> bool:
        """Wait for the pass to end; False if it still runs after `seconds`."""
        if self._thread is not None:
            self._thread.join(seconds)
        return self._thread is None or not self._thread.is_alive()

    def progress(self) -> IndexingProgress:
        with self._lock:
            end = self._ended or time.monotonic()
            return IndexingProgress(
                self._done,
                self._total,
                self._current,
                self._indexed,
                self._failed,
                self._finished,
                self._stopped,
                round(end - self._began, 3) if self._began else 0.0,
                self._tables_done,
                self._tables_total,
            )

    def _run(self) -> None:
        # The engine loads here, in the pass's thread: the chat's prompt never waits for it.
        from generalAgent.documents.folder import searchable_files
        from generalAgent.documents.index import SearchIndex
        from generalAgent.documents.ocr import ocr_call

        deadline = self._began + self.max_seconds
        try:
            files, _more = searchable_files(self.folder, self.max_files)
            with self._lock:
                self._total = len(files)
            # One cancellable call for the whole pass (no OCR page limit: nobody waits on it,
            # as for `generalagent index`), whose event is the pass's own.
            with SearchIndex(self.db_path, self.settings) as index, ocr_call(None, self._cancelled):
                with self._lock:
                    self._connection = index.conn
                try:
                    pending = self._index_each(index, files, deadline)
                    self._read_tables(index, pending, deadline)
                finally:
                    with self._lock:  # closed next: nothing may interrupt it any more
                        self._connection = None
        except Exception as exc:  # a locked or damaged index: the search indexes as before
            LOGGER.warning("background indexing of %s stopped: %s", self.folder, exc)
            self._stop(f"{type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._finished, self._current, self._ended = True, "", time.monotonic()
            if self.on_done is not None:
                self.on_done(self.progress())

    def _index_each(self, index: SearchIndex, files: list[Path], deadline: float) -> list[Path]:
        """The first pass: every file's text; the PDFs whose tables are still to be read."""
        from generalAgent.documents.reading import DocumentError

        pending: list[Path] = []
        for path in files:
            if self._cancelled.is_set() or time.monotonic() > deadline:
                self._stop("cancelled" if self._cancelled.is_set() else "time")
                return []
            with self._lock:
                self._current = path.name
            try:
                document = index.index_file(path, tables_later=True)
            except (DocumentError, sqlite3.OperationalError) as exc:
                if self._cancelled.is_set():  # stopped inside the file (not its fault): read again next time
                    self._stop("cancelled")
                    return []
                if not isinstance(exc, DocumentError):
                    raise
                with self._lock:
                    self._failed += 1
            else:
                with self._lock:
                    self._indexed += 0 if document.reused else 1
                if document.tables_pending:
                    pending.append(path)
            with self._lock:
                self._done += 1
        return pending

    def _read_tables(self, index: SearchIndex, pending: list[Path], deadline: float) -> None:
        """The second pass: each PDF read with its tables, its chunks replaced whole."""
        from generalAgent.documents.reading import DocumentError

        with self._lock:
            self._tables_total = len(pending)
        for path in pending:
            if self._cancelled.is_set() or time.monotonic() > deadline:
                self._stop("cancelled" if self._cancelled.is_set() else "time")
                return
            with self._lock:
                self._current = path.name
            try:
                index.index_file(path, tables_later=False)
            except (DocumentError, sqlite3.OperationalError) as exc:
                if self._cancelled.is_set():  # its text chunks stay; the next pass reads its tables
                    self._stop("cancelled")
                    return
                if not isinstance(exc, DocumentError):
                    raise
                # Changed into something unreadable since the first pass: its search says so.
            with self._lock:
                self._tables_done += 1

    def _stop(self, why: str) -> None:
        with self._lock:
            self._stopped = self._stopped or why
