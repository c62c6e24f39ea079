"""Writing chunks and content into indexes.db, and reading an item's content back.

Chunks and content are staged in the connection's temporary database while a document is
read and segmented, then moved into place by SQL alone inside one short write
transaction (`Staging`); content is read back in pieces through incremental blob I/O, so a
200 MB text file is never one value in memory, neither written nor read.
"""

from __future__ import annotations

import codecs
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, NamedTuple, Protocol, Self

from generalAgent.search.connection import ended
from generalAgent.search.segmentation import Segmenter

CONTENT_READ_BYTES = 1 << 20  # an indexed file's text is read back this much at a time
# Staged pieces wait in memory until they hold this much text, then go to the temporary
# tables in one transaction: a PDF comes a page at a time, and a transaction of three
# statements per page was a tenth of indexing a 261-page manual's text.
STAGE_BATCH_CHARS = 1 << 20


class ChunkRow(NamedTuple):
    id: str
    chunk_index: int
    text: str
    start_position: int
    end_position: int
    page: int | None = None
    heading: str = ""
    metadata: str = "{}"


class VectorSource(Protocol):
    """Turns chunk texts into float32 vectors (see generalAgent.search.embeddings)."""

    model: str

    def vectors(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> list[bytes]: ...


# How often segmentation reports its progress: a few hundredths of a second of jieba's work
# on our chunks, so the caller can also stop it there (Ctrl-C while a large file is indexed).
SEGMENT_STEP_ROWS = 32


def segment_rows(
    rows: Sequence[ChunkRow],
    segmenter: Segmenter,
    title: str,
    progress: Callable[[int], None] | None = None,
    known: Mapping[str, str] | None = None,
) -> list[tuple[str, str]]:
    """(segmented text, title column) of each row, computed before the write transaction
    opens: segmentation is the slow part of indexing and must not hold the write lock.
    `known`: chunk texts already segmented (a document read again, e.g. with its tables),
    taken as they are: the words of a text depend on the text alone."""
    titles: dict[str, str] = {}
    columns = []
    for number, row in enumerate(rows, start=1):
        label = f"{title}\n{row.heading}" if row.heading else title
        if label not in titles:
            words = segmenter.for_index(label)
            titles[label] = f"{label}\n{words}" if words else label
        # An ASCII chunk holds no Chinese: most of an English document skips the scan for it.
        if row.text.isascii():
            words = ""
        elif known is not None and row.text in known:
            words = known[row.text]
        else:
            words = segmenter.for_index(row.text)
        columns.append((words, titles[label]))
        if progress is not None and (number % SEGMENT_STEP_ROWS == 0 or number == len(rows)):
            progress(number)
    return columns


def replace_chunks(
    conn: sqlite3.Connection,
    item_id: str,
    rows: Sequence[ChunkRow],
    segmented: Sequence[tuple[str, str]],
    vectors: Sequence[bytes] | None = None,
    vector_model: str = "",
) -> list[int]:
    """Put `rows` in place of the item's chunks (inside the caller's transaction).

    Returns the rowids given to the rows: consecutive, after every rowid in use.
    """
    conn.execute("DELETE FROM chunks WHERE item_id = ?", (item_id,))
    first = conn.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM chunks").fetchone()[0]
    rowids = list(range(first, first + len(rows)))
    conn.executemany(
        "INSERT INTO chunks (rowid, id, item_id, chunk_index, page, heading, start_position,"
        " end_position, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                rowid,
                r.id,
                item_id,
                r.chunk_index,
                r.page,
                r.heading,
                r.start_position,
                r.end_position,
                r.metadata,
            )
            for rowid, r in zip(rowids, rows, strict=True)
        ),
    )
    conn.executemany(
        "INSERT INTO chunks_fts (rowid, text, text_jieba, title) VALUES (?, ?, ?, ?)",
        (
            (rowid, r.text, words, title)
            for rowid, r, (words, title) in zip(rowids, rows, segmented, strict=True)
        ),
    )
    if vectors is not None:
        conn.executemany(
            "INSERT INTO chunk_vectors (chunk_rowid, model, vector) VALUES (?, ?, ?)",
            ((rowid, vector_model, blob) for rowid, blob in zip(rowids, vectors, strict=True)),
        )
    return rowids


class Staging:
    """One document's content and chunks, gathered before the write transaction in tables of
    the connection's temporary database, then moved into place inside it by SQL alone.

    Writing the temporary database takes no lock on indexes.db, so reading and segmenting a
    long document holds nothing other processes wait on, and neither the content nor the
    chunks of a 200 MB file are ever Python objects all at once: SQLite keeps temporary
    tables in a file it deletes on close (temp_store = FILE). The table names are the
    staging's own, so two indexings on one connection cannot mix.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        name = f"staged_{uuid.uuid4().hex[:12]}"
        self.content_table = f"temp.{name}_content"
        self.chunks_table = f"temp.{name}_chunks"
        self.chunks = 0
        self.chars = 0
        self.content_bytes = 0
        # Pieces and chunk rows not yet in the temporary tables (at most STAGE_BATCH_CHARS).
        self._pieces: list[tuple[bytes]] = []
        self._rows: list[tuple[object, ...]] = []
        self._waiting_chars = 0
        conn.execute("PRAGMA temp_store = FILE")
        conn.execute(f"CREATE TABLE {self.content_table} (n INTEGER PRIMARY KEY, piece BLOB NOT NULL)")
        conn.execute(
            f"CREATE TABLE {self.chunks_table} (n INTEGER PRIMARY KEY, id TEXT, chunk_index INTEGER,"
            " page INTEGER, heading TEXT, start_position INTEGER, end_position INTEGER, metadata TEXT,"
            " text TEXT, text_jieba TEXT, title TEXT, vector BLOB)"
        )

    def add(
        self,
        text: str,
        rows: Sequence[ChunkRow],
        segmented: Sequence[tuple[str, str]],
        vectors: Sequence[bytes] | None = None,
    ) -> None:
        """Append a piece of the content (with the separator before it) and its chunks."""
        piece = text.encode("utf-8")  # as document_texts will hold it
        self._pieces.append((piece,))
        self._rows.extend(
            (
                self.chunks + number,
                r.id,
                r.chunk_index,
                r.page,
                r.heading,
                r.start_position,
                r.end_position,
                r.metadata,
                r.text,
                words,
                title,
                vectors[number] if vectors is not None else None,
            )
            for number, (r, (words, title)) in enumerate(zip(rows, segmented, strict=True))
        )
        self.chunks += len(rows)
        self.chars += len(text)
        self.content_bytes += len(piece)
        self._waiting_chars += len(text)
        if self._waiting_chars >= STAGE_BATCH_CHARS:
            self.flush()

    def flush(self) -> None:
        """Move what waits in memory into the temporary tables, in one transaction of the
        temporary database (call it before the write transaction opens: the write methods
        below flush too, but then inside it)."""
        if not self._pieces and not self._rows:
            return
        with nullcontext() if self.conn.in_transaction else self._temporary():
            self.conn.executemany(f"INSERT INTO {self.content_table} (piece) VALUES (?)", self._pieces)
            self.conn.executemany(
                f"INSERT INTO {self.chunks_table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", self._rows
            )
        self._pieces, self._rows, self._waiting_chars = [], [], 0

    def drop_vectors(self) -> None:
        """Keep no vector of this document (embedding failed part-way: keyword search only)."""
        self.flush()
        with self._temporary():
            self.conn.execute(f"UPDATE {self.chunks_table} SET vector = NULL")

    def write_content(self, conn: sqlite3.Connection, item_id: str) -> None:
        """Store the content as the item's document text (inside the caller's transaction),
        piece by piece through incremental blob I/O: it is never one value in memory."""
        self.flush()
        conn.execute("DELETE FROM document_texts WHERE item_id = ?", (item_id,))
        conn.execute(
            "INSERT INTO document_texts (item_id, content) VALUES (?, zeroblob(?))",
            (item_id, self.content_bytes),
        )
        rowid = conn.execute("SELECT rowid FROM document_texts WHERE item_id = ?", (item_id,)).fetchone()[0]
        with conn.blobopen("document_texts", "content", rowid) as blob:
            for (piece,) in conn.execute(f"SELECT piece FROM {self.content_table} ORDER BY n"):
                blob.write(piece)

    def write_chunks(self, conn: sqlite3.Connection, item_id: str, vector_model: str = "") -> None:
        """Put the staged chunks in place of the item's chunks (inside the caller's
        transaction), under consecutive rowids after every rowid in use."""
        self.flush()
        conn.execute("DELETE FROM chunks WHERE item_id = ?", (item_id,))
        first = conn.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM chunks").fetchone()[0]
        conn.execute(
            "INSERT INTO chunks (rowid, id, item_id, chunk_index, page, heading, start_position,"
            " end_position, metadata) SELECT ? + n, id, ?, chunk_index, page, heading, start_position,"
            f" end_position, metadata FROM {self.chunks_table} ORDER BY n",
            (first, item_id),
        )
        conn.execute(
            "INSERT INTO chunks_fts (rowid, text, text_jieba, title)"
            f" SELECT ? + n, text, text_jieba, title FROM {self.chunks_table} ORDER BY n",
            (first,),
        )
        conn.execute(
            "INSERT INTO chunk_vectors (chunk_rowid, model, vector)"
            f" SELECT ? + n, ?, vector FROM {self.chunks_table} WHERE vector IS NOT NULL ORDER BY n",
            (first, vector_model),
        )

    def close(self) -> None:
        for table in (self.content_table, self.chunks_table):
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _temporary(self) -> Iterator[None]:
        """One transaction of the temporary database (a deferred one takes no lock on indexes.db)."""
        self.conn.execute("BEGIN")
        with ended(self.conn):
            yield


def content_pieces(conn: Any, item_id: str) -> Iterator[str] | None:
    """An item's full text in pieces of about CONTENT_READ_BYTES, read as they are asked
    for (an indexed file's through incremental blob I/O); None if there is no such item.
    `conn`: indexes.db's, or a PostgreSQL store's statements (store.py `sql`), where the
    text is one value and comes whole."""
    if not isinstance(conn, sqlite3.Connection):
        text = conn.execute("SELECT content FROM document_texts WHERE item_id = ?", (item_id,)).fetchone()
        if text is not None:
            return iter([str(text[0])])
    else:
        row = conn.execute("SELECT rowid FROM document_texts WHERE item_id = ?", (item_id,)).fetchone()
        if row is not None:
            return _blob_text(conn, row[0])
    item = conn.execute("SELECT content FROM items WHERE id = ?", (item_id,)).fetchone()
    return None if item is None else iter([str(item[0])])


def _blob_text(conn: sqlite3.Connection, rowid: int) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")()
    with conn.blobopen("document_texts", "content", rowid, readonly=True) as blob:
        while data := blob.read(CONTENT_READ_BYTES):
            yield decoder.decode(data)
    yield decoder.decode(b"", final=True)


def content_text(conn: Any, item_id: str) -> str | None:
    """An item's full text; None if there is no such item."""
    pieces = content_pieces(conn, item_id)
    return None if pieces is None else "".join(pieces)


def item_rowid_range(
    conn: sqlite3.Connection, item_id: str, chunks: int | None = None
) -> tuple[int, int] | None:
    """The first and last rowid of the item's chunks (they are consecutive).

    With the item's number of `chunks`, the rowids of its first and last chunk (two seeks on
    the (item_id, chunk_index) index) are the range when they lie `chunks` - 1 apart; only
    otherwise are all its rows scanned for MIN and MAX (~1 ms at 2,000 chunks).
    """
    if chunks:
        first, last = conn.execute(
            "SELECT (SELECT rowid FROM chunks WHERE item_id = ? ORDER BY chunk_index LIMIT 1),"
            " (SELECT rowid FROM chunks WHERE item_id = ? ORDER BY chunk_index DESC LIMIT 1)",
            (item_id, item_id),
        ).fetchone()
        if first is not None and last is not None and last - first + 1 == chunks:
            return (first, last)
    row = conn.execute("SELECT MIN(rowid), MAX(rowid) FROM chunks WHERE item_id = ?", (item_id,)).fetchone()
    return None if row[0] is None else (row[0], row[1])
