"""Embedding the chunks that have no vector yet: after indexing, in the background, resumable.

Indexing writes text and chunks only; vectors come after, from here, so neither indexing
nor a search ever waits for an embedding endpoint or model. What is embedded is recorded
by the vectors themselves (chunk_vectors, one row per chunk with its model's name): a pass
takes the chunks without a vector of the current model, in rowid order, a batch at a
time, and writes each batch in its own transaction. So a pass stopped anywhere (Ctrl-C,
the process ends, the endpoint dies) loses at most one batch, and the next pass continues
where it stopped; chunks added since are picked up, deleted ones go with their vectors
(ON DELETE CASCADE), and a change of model re-embeds everything, one batch at a time,
each vector replacing the other model's. When a pass ends the KNN index of the model is
brought up to date (search/vector_index.py) and indexes of models no longer used dropped.

A batch the endpoint does not answer within EMBEDDING_TIMEOUT is asked again in halves, and
the pass goes on with the smaller batches: on a loaded machine a local server took up to
266 s for a batch of 32 (issue 39), and failing the pass there left everything unembedded.
Only a single chunk that still times out ends the pass.

The same pass serves a team's PostgreSQL store (SEARCH_DATABASE_URL): its statements are
the store's `sql` with SQLite's `?` marks, each batch written in the store's transaction,
so a document one replica indexed is embedded by whichever process runs a pass next.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generalAgent.display import N_, Message, said_of_error
from generalAgent.search import vector_index
from generalAgent.search.connection import connect, transaction
from generalAgent.search.embeddings import EmbeddingCancelled, EmbeddingError, EmbeddingTimeout, stopped_by
from generalAgent.search.storage import VectorSource

if TYPE_CHECKING:
    from generalAgent.search.store import SearchStore

# Called with (chunks embedded in this pass, chunks that were pending when it started).
EmbedProgress = Callable[[int, int], None]


def pending_count(conn: Any, model: str) -> int:
    """Chunks without a vector of `model`."""
    return int(
        conn.execute(
            "SELECT COUNT(*) FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_rowid = c.rowid"
            " WHERE v.chunk_rowid IS NULL OR v.model != ?",
            (model,),
        ).fetchone()[0]
    )


def embed_pending(
    target: sqlite3.Connection | SearchStore,
    embedder: VectorSource,
    batch_size: int,
    progress: EmbedProgress | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Embed every chunk without a vector of `embedder.model` (see the module) in indexes.db
    (its connection) or a search store; returns how many were embedded. Raises
    EmbeddingError when the embedder fails (what was written before stays)."""
    conn: Any
    model = embedder.model
    if isinstance(target, sqlite3.Connection):
        conn = target

        def write() -> AbstractContextManager[Any]:
            return transaction(target)

        def settle() -> None:
            settle_knn_indexes(target, model)
    else:
        conn, write = target.sql, target.transaction

        def settle() -> None:
            target.settle_vectors(model)

    total = pending_count(conn, model)
    done, last = 0, 0
    while stop is None or not stop.is_set():
        rows = conn.execute(
            "SELECT c.rowid, c.id, f.text FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
            " LEFT JOIN chunk_vectors v ON v.chunk_rowid = c.rowid"
            " WHERE c.rowid > ? AND (v.chunk_rowid IS NULL OR v.model != ?) ORDER BY c.rowid LIMIT ?",
            (last, model, batch_size),
        ).fetchall()
        if not rows:
            break
        try:
            with stopped_by(stop):  # a stop gives up the batch in flight, not after its answer
                blobs = embedder.vectors([row[2] for row in rows])
        except EmbeddingCancelled:
            break  # the batch waits for the next pass
        except EmbeddingTimeout:
            if len(rows) == 1:
                raise
            batch_size = max(1, len(rows) // 2)  # a slow endpoint: smaller batches from here on
            continue
        with write():
            for (rowid, chunk_id, _), blob in zip(rows, blobs, strict=True):
                # The chunk may have been replaced while it was embedded (a re-indexed
                # document can reuse rowids): the vector is written only for the same chunk.
                if conn.execute(
                    "SELECT 1 FROM chunks WHERE rowid = ? AND id = ?", (rowid, chunk_id)
                ).fetchone():
                    conn.execute("DELETE FROM chunk_vectors WHERE chunk_rowid = ?", (rowid,))
                    conn.execute(
                        "INSERT INTO chunk_vectors (chunk_rowid, model, vector) VALUES (?, ?, ?)",
                        (rowid, model, blob),
                    )
        done += len(rows)
        last = rows[-1][0]
        if progress is not None:
            progress(done, max(total, done))
    if stop is None or not stop.is_set():
        settle()  # the vector index (sqlite-vec's, pgvector's) brought up to date
    return done


def settle_knn_indexes(conn: sqlite3.Connection, model: str) -> None:
    """Bring the model's KNN index up to date (made on first use) and drop the indexes of
    models whose vectors are all gone; nothing when sqlite-vec cannot load."""
    if vector_index.load_extension(conn) is not None:
        return
    for (other,) in conn.execute("SELECT model FROM knn_indexes WHERE model != ?", (model,)).fetchall():
        if conn.execute("SELECT 1 FROM chunk_vectors WHERE model = ? LIMIT 1", (other,)).fetchone() is None:
            vector_index.drop(conn, other)
    vector_index.build(conn, model)


class BackgroundEmbedding:
    """One thread per process embedding what is pending in indexes.db, or in the store
    `open_store` opens (the team's, on a connection of the thread's own), started again
    after each indexing (`kick`). A failing embedder stops it for the session: `problem`
    says why, as a Message (the model's note takes its English; a person's line, its UI
    language), and search goes on with keywords and says so once."""

    def __init__(
        self,
        db_path: Path,
        embedder: VectorSource,
        batch_size: int,
        open_store: Callable[[], SearchStore] | None = None,
    ) -> None:
        self.db_path = db_path
        self.open_store = open_store
        self.embedder = embedder
        self.batch_size = batch_size
        self.problem: Message | None = None
        self.embedded = 0
        self._lock = threading.Lock()
        self._again = False
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None and self._thread.is_alive()

    def kick(self) -> None:
        """Embed what is pending now (a pass already running goes round once more)."""
        with self._lock:
            if self.problem is not None or self._stop.is_set():
                return
            if self._thread is not None and self._thread.is_alive():
                self._again = True
                return
            self._again = False
            self._thread = threading.Thread(target=self._run, name="background-embedding", daemon=True)
            self._thread.start()

    def wait(self, seconds: float) -> bool:
        """Wait for the running pass to end; False if it is still running after `seconds`."""
        thread = self._thread
        if thread is not None:
            thread.join(seconds)
        return not self.running

    def stop(self) -> None:
        """Stop now, the batch in flight given up (the rest waits for the next session)."""
        self._stop.set()

    def _run(self) -> None:
        from generalAgent.search.lookup import QueryError

        target: sqlite3.Connection | SearchStore
        try:
            target = connect(self.db_path) if self.open_store is None else self.open_store()
        except Exception as exc:  # DatabaseError: the search that kicked it reports the database
            self.problem = _said(exc)
            return
        try:
            while True:
                self.embedded += embed_pending(target, self.embedder, self.batch_size, stop=self._stop)
                with self._lock:
                    if not self._again or self._stop.is_set():
                        self._thread_done()
                        return
                    self._again = False
        except EmbeddingError as exc:
            self.problem = exc.said
        except sqlite3.Error as exc:  # e.g. locked for longer than the write wait: next kick retries
            failed = Message(N_("the index database failed ({problem})"), {"problem": str(exc)})
            self.problem = None if "locked" in str(exc) else failed
        except QueryError as exc:  # the team's database lost or refused: off for the session, said once
            self.problem = _said(exc)
        finally:
            target.close()

    def _thread_done(self) -> None:
        """Called under the lock as the pass ends, so a `kick` from now on starts a new thread."""
        self._thread = None


def _said(exc: BaseException) -> Message:
    said = said_of_error(exc)
    return said if isinstance(said, Message) else Message(N_("{problem}"), {"problem": said})


# What a search tool appends to its answer (the model reads it, so it stays English).
STILL_EMBEDDING = (
    "Note: meaning-based search is still embedding new passages in the background; until it "
    "finishes, they are found by their words only."
)
EMBEDDING_FAILED = "Note: Semantic search is off for this session ({reason}); keyword search still works."


class SemanticSession:
    """What a process's search tools share about semantic search: the embedder, its
    background pass, and whether the model was told that it failed (once is enough)."""

    def __init__(
        self,
        db_path: Path,
        embedder: VectorSource,
        batch_size: int,
        open_store: Callable[[], SearchStore] | None = None,
    ) -> None:
        self.background = BackgroundEmbedding(db_path, embedder, batch_size, open_store)
        self._told = False

    def for_query(self) -> VectorSource | None:
        """The embedder for a query; None once it failed (keyword search only)."""
        return self.background.embedder if self.background.problem is None else None

    def failed(self, reason: str | Message, told: bool = False) -> None:
        """The query could not be embedded: off for the session (`told`: the answer said so)."""
        said = reason if isinstance(reason, Message) else Message(N_("{problem}"), {"problem": reason})
        self.background.problem = self.background.problem or said
        self._told = self._told or told

    def after_search(self) -> str:
        """Start embedding what the search indexed; the note for the answer, or ""."""
        self.background.kick()
        if self.background.problem is not None:
            if self._told:
                return ""
            self._told = True
            return EMBEDDING_FAILED.format(reason=self.background.problem.english())
        return STILL_EMBEDDING if self.background.running else ""
