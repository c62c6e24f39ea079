"""The one SQLite file of everything searchable (DATA_DIR/indexes.db): schema and writes.

Documents and knowledge share it: an indexed file is a knowledge item of domain
`documents` whose `documents` row records the file's facts. Chunk text lives once, in the
FTS5 table, under the same rowid as the chunk's row in `chunks`; deleting an item cascades
to its chunks, and a trigger removes their FTS rows, so nothing can be left behind.

Every write is one transaction (BEGIN IMMEDIATE, so two writers queue on the busy timeout
instead of failing half-way); chunks of one item get consecutive rowids, which lets a search
inside one document restrict FTS5 to a rowid range instead of filtering after the match.
"""

from __future__ import annotations

import codecs
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple, Protocol, Self

from generalAgent.config.settings import DocumentSettings
from generalAgent.migrations import Migration, NewerSchemaError, migrate, script
from generalAgent.private_storage import private_file
from generalAgent.search.chunking import ChunkingConfig
from generalAgent.search.language import main_language
from generalAgent.search.segmentation import Segmenter
from generalAgent.search.vector_schema import VECTOR_CHANGES

BUSY_TIMEOUT_MS = 10_000
# How long a write waits for another process's write to end before it fails with "database
# is locked". Indexing the largest file allowed holds the lock for the move of its staged
# chunks (tens of seconds for 200 MB, bench/large_text.py), longer than the busy timeout.
WRITE_WAIT_SECONDS = 600
CONTENT_READ_BYTES = 1 << 20  # an indexed file's text is read back this much at a time
MMAP_BYTES = 256 << 20
DOCUMENTS_DOMAIN = "documents"

# How a chunk is scored: BM25 over (text, text_jieba, title). A word of the document's name
# or the section heading weighs 8 times a word of the passage: questions name what they are
# about ("tar ...", "ls ..."). Tuned on bench/retrieval_quality.py (docs/benchmarks.md has
# the figures). Queries ORDER BY this expression rather than by FTS5's `rank` column, which
# sorts through an inner statement and is ~40% slower on the same rows.
BM25_WEIGHTS = (1.0, 1.0, 8.0)
BM25 = f"bm25(chunks_fts, {', '.join(map(str, BM25_WEIGHTS))})"
# Plain chunk BM25: the passage's own words only, no title. Searches fuse the tuned ranking
# with this one (search/lookup.py), so what the tuning adds can reorder but never lose what
# plain BM25 finds.
PLAIN_BM25 = "bm25(chunks_fts, 1.0, 1.0, 0.0)"

# The schema of release 0.1.0 (which created it without a migration table).
INITIAL_SCHEMA = """
-- One row per searchable thing: a note, a built-in knowledge page, or an indexed file
-- (domain 'documents'). `content` is the full text: regex search and lazy re-chunking read it.
-- (An indexed file's text moved to document_texts in migration 0003; see ITEM_CONTENT.)
CREATE TABLE IF NOT EXISTS items (
    id          TEXT PRIMARY KEY,
    domain      TEXT NOT NULL,
    category    TEXT NOT NULL DEFAULT '',
    title       TEXT NOT NULL,
    content     TEXT NOT NULL,
    source      TEXT NOT NULL DEFAULT 'user',
    source_path TEXT,
    priority    INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS items_by_domain ON items(domain, category);

-- Tags, one row each, so "any of these tags" and the list of tags are index lookups.
CREATE TABLE IF NOT EXISTS item_tags (
    item_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    tag     TEXT NOT NULL,
    PRIMARY KEY (item_id, tag)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS item_tags_by_tag ON item_tags(tag);

-- File facts of items in domain 'documents'. The MD5 of the bytes is the identity, so the
-- same file under two names is indexed once.
CREATE TABLE IF NOT EXISTS documents (
    file_hash    TEXT PRIMARY KEY,
    item_id      TEXT NOT NULL UNIQUE REFERENCES items(id) ON DELETE CASCADE,
    file_name    TEXT NOT NULL,
    file_type    TEXT NOT NULL,
    file_size    INTEGER NOT NULL,
    indexed_at   TEXT NOT NULL,
    total_chunks INTEGER NOT NULL,
    segmenter    TEXT NOT NULL
);

-- Where each document was last seen: a new version at the same path replaces the old one.
CREATE TABLE IF NOT EXISTS document_paths (
    path      TEXT PRIMARY KEY,
    file_hash TEXT NOT NULL REFERENCES documents(file_hash) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS document_paths_by_hash ON document_paths(file_hash);

-- Chunks of an item, in order, with their place in the item's content. Their text is in
-- chunks_fts under the same rowid.
CREATE TABLE IF NOT EXISTS chunks (
    rowid          INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    item_id        TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    chunk_index    INTEGER NOT NULL,
    page           INTEGER,
    heading        TEXT NOT NULL DEFAULT '',
    start_position INTEGER NOT NULL,
    end_position   INTEGER NOT NULL,
    metadata       TEXT NOT NULL DEFAULT '{}',
    UNIQUE (item_id, chunk_index)
);

-- Full-text index of chunk text (rowid = chunks.rowid). No UNINDEXED columns: what is not
-- searched (item, page, offsets) lives in `chunks`, joined by rowid, not stored twice.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text,        -- the chunk as written; Latin words are matched here, Porter-stemmed
    text_jieba,  -- the chunk's Chinese words, space-separated by the segmenter
    title,       -- the item's title and the chunk's heading (as written + segmented), so a
                 -- passage is also found by the name of the document or section it is in
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_drop_text AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
END;

-- Embeddings of chunks (float32 little-endian), only when semantic search is on.
CREATE TABLE IF NOT EXISTS chunk_vectors (
    chunk_rowid INTEGER PRIMARY KEY REFERENCES chunks(rowid) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    vector      BLOB NOT NULL
);

-- Built-in knowledge files already imported, by content hash: start-up imports only changes.
CREATE TABLE IF NOT EXISTS builtin_sources (
    path         TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    item_id      TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    imported_at  TEXT NOT NULL
);
"""

# The size and modification time of the file a path showed when it was hashed: while both
# are unchanged, the hash is taken from here instead of reading the file again.
DOCUMENT_PATH_STAT = """
ALTER TABLE document_paths ADD COLUMN file_size INTEGER;
ALTER TABLE document_paths ADD COLUMN mtime_ns INTEGER;
"""

# The text of an indexed file, apart from its item: SQLite's incremental blob I/O writes it
# piece by piece only when it is the last value of its row (otherwise SQLite builds the
# whole value in memory first), so a 200 MB text file is indexed in bounded memory. UTF-8
# bytes; items.content stays '' for these items (older indexes kept the text there).
DOCUMENT_TEXTS = """
CREATE TABLE document_texts (
    item_id TEXT PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    content BLOB NOT NULL
);
"""

# Chunks read to tell an already indexed document's language (search/language.py): a few
# hundred are far more than the language needs.
LANGUAGE_SAMPLE_CHUNKS = 200


def add_document_language(conn: sqlite3.Connection) -> None:
    """The main language of each document ("en", "zh", ...; search/language.py), told at
    indexing so search can tell the model which language to ask in; documents indexed
    before are told here from their first chunks."""
    conn.execute("ALTER TABLE documents ADD COLUMN language TEXT NOT NULL DEFAULT ''")
    for file_hash, item_id in conn.execute("SELECT file_hash, item_id FROM documents").fetchall():
        texts = conn.execute(
            "SELECT f.text FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
            " WHERE c.item_id = ? ORDER BY c.chunk_index LIMIT ?",
            (item_id, LANGUAGE_SAMPLE_CHUNKS),
        ).fetchall()
        language = main_language("\n".join(t[0] for t in texts))
        conn.execute("UPDATE documents SET language = ? WHERE file_hash = ?", (language, file_hash))


# indexes.db's schema history, oldest first: append, never edit a released one.
MIGRATIONS = [
    Migration("0001_initial_schema", script(INITIAL_SCHEMA)),
    Migration("0002_document_path_stat", script(DOCUMENT_PATH_STAT)),
    Migration("0003_document_texts", script(DOCUMENT_TEXTS)),
    Migration("0004_document_language", add_document_language),
    Migration("0005_vector_changes", script(VECTOR_CHANGES)),  # search/vector_schema.py
]

# An item's full text as SQL (in a query over `items`): an indexed file's from document_texts.
ITEM_CONTENT = (
    "COALESCE((SELECT CAST(t.content AS TEXT) FROM document_texts t WHERE t.item_id = items.id),"
    " items.content)"
)


def now_iso() -> str:
    """The timestamp format of every row: UTC, to the second, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class DatabaseError(Exception):
    """The index database cannot be used; the message says why and what to do."""


class ChunkRow(NamedTuple):
    id: str
    chunk_index: int
    text: str
    start_position: int
    end_position: int
    page: int | None = None
    heading: str = ""
    metadata: str = "{}"


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the index database with WAL, a busy timeout and FKs on."""
    try:
        private_file(path)  # 0600 in a 0700 folder (generalAgent/private_storage.py)
        conn = sqlite3.connect(
            str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
    except (OSError, sqlite3.Error) as exc:
        raise DatabaseError(f"Cannot open the index database {path}: {exc}. Check DATA_DIR.") from None
    try:
        conn.row_factory = sqlite3.Row  # rows are read by column name (and still unpack as tuples)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _use_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable at checkpoints, fast
        conn.execute("PRAGMA foreign_keys = ON")
        # Read the file through a memory map instead of copying each page into SQLite's
        # 2 MB cache: a search touches pages all over a 100 MB index. ~5% off each query
        # at 100k chunks (docs/benchmarks.md); the mapped pages are the OS's file cache.
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        migrate(conn, MIGRATIONS)
    except NewerSchemaError as exc:
        conn.close()
        raise DatabaseError(f"{path} was {exc}; upgrade generalAgent, or point DATA_DIR elsewhere.") from None
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise DatabaseError(_unusable(path, exc)) from None
    except DatabaseError:
        conn.close()
        raise
    return conn


def _unusable(path: Path, exc: sqlite3.DatabaseError) -> str:
    """What to do about an index database that cannot be used, by cause. It holds the
    knowledge base as well as the document indexes, so moving it away is advice only for a
    damaged file, never for one SQLite merely cannot write."""
    reason = str(exc)
    folder_writable = os.access(path.parent, os.W_OK)
    file_writable = not path.exists() or os.access(path, os.W_OK)
    if isinstance(exc, sqlite3.OperationalError) and (
        "readonly" in reason or "unable to open" in reason or not folder_writable or not file_writable
    ):
        where = path if not file_writable else path.parent
        return (
            f"The index database {path} cannot be written ({reason}): {where} is read-only. Make it "
            "writable, or set DATA_DIR to a folder you can write to; the file itself is fine."
        )
    if isinstance(exc, sqlite3.OperationalError) and "locked" in reason:
        return f"The index database {path} is locked by another generalagent process; try again when it ends."
    return (
        f"The index database {path} is damaged ({reason}). It also holds your knowledge base: move "
        "it aside rather than deleting it (sqlite3's .recover can often save the notes); a new, "
        "empty one is made on next use."
    )


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting for other connections as the busy timeout would.

    SQLite does not wait on the busy timeout for this pragma: when several processes open a
    new database at once, all but one may meet "database is locked" while the first one
    switches the file. Once it is in WAL mode the pragma succeeds at once.
    """
    _execute_when_unlocked(conn, "PRAGMA journal_mode = WAL", BUSY_TIMEOUT_MS / 1000)


def _execute_when_unlocked(conn: sqlite3.Connection, sql: str, seconds: float) -> None:
    """Run `sql`, trying again while another connection's lock fails it ("database is
    locked"), for up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: committed when the block ends, rolled back if it raises.

    It starts once no other process writes, waiting up to WRITE_WAIT_SECONDS (each attempt
    waits the busy timeout in SQLite's own busy handler, which sleeps between tries)."""
    _execute_when_unlocked(conn, "BEGIN IMMEDIATE", WRITE_WAIT_SECONDS)
    with _ended(conn):
        yield conn


@contextmanager
def _ended(conn: sqlite3.Connection) -> Iterator[None]:
    """The transaction just begun on `conn`: committed when the block ends, rolled back if it raises."""
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class VectorSource(Protocol):
    """Turns chunk texts into float32 vectors (see generalAgent.search.embeddings)."""

    model: str

    def vectors(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> list[bytes]: ...


def segment_rows(
    rows: Sequence[ChunkRow],
    segmenter: Segmenter,
    title: str,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[str, str]]:
    """(segmented text, title column) of each row, computed before the write transaction
    opens: segmentation is the slow part of indexing and must not hold the write lock."""
    titles: dict[str, str] = {}
    columns = []
    for number, row in enumerate(rows, start=1):
        label = f"{title}\n{row.heading}" if row.heading else title
        if label not in titles:
            words = segmenter.for_index(label)
            titles[label] = f"{label}\n{words}" if words else label
        columns.append((segmenter.for_index(row.text), titles[label]))
        if progress is not None and (number % 256 == 0 or number == len(rows)):
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
        with self._temporary():
            self.conn.execute(f"INSERT INTO {self.content_table} (piece) VALUES (?)", (piece,))
            self.conn.executemany(
                f"INSERT INTO {self.chunks_table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
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
                ),
            )
        self.chunks += len(rows)
        self.chars += len(text)
        self.content_bytes += len(piece)

    def drop_vectors(self) -> None:
        """Keep no vector of this document (embedding failed part-way: keyword search only)."""
        with self._temporary():
            self.conn.execute(f"UPDATE {self.chunks_table} SET vector = NULL")

    def write_content(self, conn: sqlite3.Connection, item_id: str) -> None:
        """Store the content as the item's document text (inside the caller's transaction),
        piece by piece through incremental blob I/O: it is never one value in memory."""
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
        with _ended(self.conn):
            yield


def content_pieces(conn: sqlite3.Connection, item_id: str) -> Iterator[str] | None:
    """An item's full text in pieces of about CONTENT_READ_BYTES, read as they are asked
    for (an indexed file's through incremental blob I/O); None if there is no such item."""
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


def content_text(conn: sqlite3.Connection, item_id: str) -> str | None:
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


class SharedConnection:
    """One connection to indexes.db kept by a tool for its process, opened on first use and
    used by one search at a time (tools may run in threads). Opening a connection, checking
    the schema and closing it cost ~4 ms, more than a search in one document."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = Path(db_path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    @contextmanager
    def use(self) -> Iterator[sqlite3.Connection]:
        """The connection, held for the block; raises DatabaseError if it cannot be opened."""
        with self._lock:
            if self._conn is None:
                self._conn = connect(self.db_path)
            yield self._conn


class IndexDatabase:
    """A lazily opened connection to indexes.db with the settings its content follows.

    The base of `SearchIndex` (documents) and `KnowledgeStore` (items): one connection
    each, opened on first use; use them as context managers, or call `close()`.
    """

    def __init__(
        self, db_path: Path, settings: DocumentSettings, *, conn: sqlite3.Connection | None = None
    ) -> None:
        """`conn`: an open connection to `db_path` to borrow (a tool keeps one per process:
        opening, checking the schema and closing cost more than the lookup itself); it is
        left open by `close()`."""
        self.db_path = Path(db_path)
        self.settings = settings
        self.segmenter = Segmenter.from_setting(settings.use_jieba)
        self._conn: sqlite3.Connection | None = conn
        self._borrowed = conn is not None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect(self.db_path)
        return self._conn

    def close(self) -> None:
        if self._conn is not None and not self._borrowed:
            self._conn.close()
        self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def chunking(self) -> ChunkingConfig:
        s = self.settings
        return ChunkingConfig(s.chunk_max_size, s.chunk_overlap, s.chunk_min_size)
