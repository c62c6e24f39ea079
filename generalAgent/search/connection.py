"""Opening indexes.db and writing to it safely: WAL, busy timeouts, one write transaction at
a time, and the connection a tool or an index keeps.

Every write is one transaction (BEGIN IMMEDIATE, so two writers queue on the busy timeout
instead of failing half-way). Opening a connection applies the index's migrations
(search/schema.py), and those of the tracks its caller owns (the knowledge store's:
knowledge/schema.py), so every process sees the tables it uses whichever opens the file
first; a file that a newer release migrated further on one of those tracks is refused.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from generalAgent.config.settings import DocumentSettings
from generalAgent.migrations import NewerSchemaError, Track, execute_when_unlocked, migrate, use_wal
from generalAgent.private_storage import private_file
from generalAgent.search.chunking import ChunkingConfig
from generalAgent.search.schema import TRACK as INDEX_TRACK
from generalAgent.search.segmentation import Segmenter

BUSY_TIMEOUT_MS = 10_000
# How long a write waits for another process's write to end before it fails with "database
# is locked". Indexing the largest file allowed holds the lock for the move of its staged
# chunks (tens of seconds for 200 MB, bench/large_text.py), longer than the busy timeout.
WRITE_WAIT_SECONDS = 600
MMAP_BYTES = 256 << 20


class DatabaseError(Exception):
    """The index database cannot be used; the message says why and what to do."""


def connect(path: Path, tracks: Sequence[Track] = ()) -> sqlite3.Connection:
    """Open (creating if needed) the index database with WAL, a busy timeout and FKs on,
    its schema brought up to date on the index's track and then on `tracks`."""
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
        # WAL + NORMAL: durable at checkpoints, fast. Set before the switch to WAL, which
        # then syncs less: a new database is made ~10 ms sooner (a user's first index).
        conn.execute("PRAGMA synchronous = NORMAL")
        use_wal(conn, BUSY_TIMEOUT_MS / 1000)
        conn.execute("PRAGMA foreign_keys = ON")
        # Read the file through a memory map instead of copying each page into SQLite's
        # 2 MB cache: a search touches pages all over a 100 MB index. ~5% off each query
        # at 100k chunks (docs/benchmarks.md); the mapped pages are the OS's file cache.
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        migrate(conn, (INDEX_TRACK, *tracks))
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


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: committed when the block ends, rolled back if it raises.

    It starts once no other process writes, waiting up to WRITE_WAIT_SECONDS (each attempt
    waits the busy timeout in SQLite's own busy handler, which sleeps between tries)."""
    execute_when_unlocked(conn, "BEGIN IMMEDIATE", WRITE_WAIT_SECONDS)
    with ended(conn):
        yield conn


@contextmanager
def ended(conn: sqlite3.Connection) -> Iterator[None]:
    """The transaction just begun on `conn`: committed when the block ends, rolled back if it raises."""
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        # An interrupted statement (`Connection.interrupt`: a cancelled background pass) may
        # have rolled the transaction back already; ROLLBACK then would hide why it ended.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


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
    each, opened on first use; use them as context managers, or call `close()`. A subclass
    from a package above search names its own schema tracks in `TRACKS`.
    """

    TRACKS: tuple[Track, ...] = ()

    def __init__(
        self, db_path: Path, settings: DocumentSettings, *, conn: sqlite3.Connection | None = None
    ) -> None:
        """`conn`: an open connection to `db_path` to borrow (a tool keeps one per process:
        opening, checking the schema and closing cost more than the lookup itself); it is
        left open by `close()`, and must have been opened with this class's `TRACKS`."""
        self.db_path = Path(db_path)
        self.settings = settings
        self.segmenter = Segmenter.from_setting(settings.use_jieba)
        self._conn: sqlite3.Connection | None = conn
        self._borrowed = conn is not None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect(self.db_path, self.TRACKS)
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
