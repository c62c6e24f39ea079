"""The search store: items, their chunks and vectors, and the search over them, as one
interface with two backends.

`SearchStore` is what a team's deployment and the terminal share: `SqliteSearchStore` over
indexes.db (the terminal's, unchanged: FTS5), `PostgresSearchStore` over one PostgreSQL
database every replica reaches (postgres_store.py: app-side FTS5 tokens in a GIN-indexed
tsvector, BM25 from its term counts). Both hand their scored chunks to the same ranking
(lookup.py's `fused_places`, ranking.py), so a query finds the same places in either, and
tests/unit/search/test_store.py runs every case on both.

Spaces: every item has an owner and a space. The space '' is its owner's private one;
any other name is a team space, and '*' the built-in knowledge everyone reads. A `Viewer` (a user and the teams the server's
authentication gives them) searches, reads and deletes only what is theirs or their
teams': a user never sees another user's private space. The terminal is the viewer ''
with no team, and every item it ever wrote is its own ('' / '').
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Self

from generalAgent.config.settings import DocumentSettings, PathSettings
from generalAgent.search.connection import connect, transaction
from generalAgent.search.lookup import ChunkHit, LookupNotes, chunk_window, chunks_at, find_chunks, load_hits
from generalAgent.search.query import MatchQuery
from generalAgent.search.schema import ITEM_CONTENT, now_iso
from generalAgent.search.segmentation import Segmenter
from generalAgent.search.storage import ChunkRow, Staging, item_rowid_range, replace_chunks, segment_rows
from generalAgent.search.viewer import PRIVATE, PUBLIC, TERMINAL, Viewer, viewer_from_settings

__all__ = [
    "PRIVATE",
    "PUBLIC",
    "TERMINAL",
    "Viewer",
    "viewer_from_settings",
]  # re-exported: the store's callers

logger = logging.getLogger(__name__)

# Vectors in one scope past which the exact scan warns (about 100 ms of numpy at 256 dimensions).
EXACT_SCAN_WARN = 50_000


class SpaceError(Exception):
    """A write into a space the viewer is not a member of; the message says which."""


@dataclass(frozen=True)
class StoredItem:
    id: str
    domain: str
    title: str
    content: str
    category: str = ""
    source: str = "user"
    source_path: str | None = None
    priority: int = 1
    owner: str = ""
    space: str = PRIVATE
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)


ITEM_FIELDS = (
    "id",
    "domain",
    "title",
    "content",
    "category",
    "source",
    "source_path",
    "priority",
    "owner",
    "space",
    "created_at",
    "updated_at",
)


class DocumentStaging(Protocol):
    """One document's text and chunks gathered while it is read and segmented, before the
    write transaction, then put in place inside it (storage.Staging for indexes.db)."""

    chunks: int
    chars: int

    def add(
        self,
        text: str,
        rows: Sequence[ChunkRow],
        segmented: Sequence[tuple[str, str]],
        vectors: Sequence[bytes] | None = None,
    ) -> None: ...

    def flush(self) -> None: ...

    def drop_vectors(self) -> None: ...

    def write_content(self, conn: Any, item_id: str) -> None: ...

    def write_chunks(self, conn: Any, item_id: str, vector_model: str = "") -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


class SearchStore(Protocol):
    """Items, chunks and vectors, and the ranked search over them, for one viewer at a call."""

    backend: str  # "sqlite" or "postgresql"
    segmenter: Segmenter

    def put_item(
        self,
        item: StoredItem,
        rows: Sequence[ChunkRow],
        viewer: Viewer,
        vectors: Sequence[bytes] | None = None,
        vector_model: str = "",
    ) -> list[int]:
        """Write the item (replacing one of the same id the viewer may write) with its
        chunks and their vectors in one transaction; the rowids given to the chunks."""
        ...

    def delete_item(self, item_id: str, viewer: Viewer) -> bool: ...

    def get_item(self, item_id: str, viewer: Viewer) -> StoredItem | None: ...

    def list_items(self, viewer: Viewer, domain: str | None = None) -> list[StoredItem]: ...

    def item_rowid_range(self, item_id: str, chunks: int | None = None) -> tuple[int, int] | None:
        """The first and last rowid of the item's chunks (consecutive); `chunks`, their
        number when the caller knows it, may spare a scan."""
        ...

    def search(
        self,
        query: str | Sequence[str],
        limit: int,
        viewer: Viewer,
        *,
        item_id: str | None = None,
        domain: str | None = None,
        semantic: Sequence[Sequence[tuple[int, float]]] = (),
    ) -> list[ChunkHit]:
        """The `limit` best places for the query among what the viewer sees (in one item,
        or one domain, when given), best first; `semantic` as lookup.find_chunks takes it."""
        ...

    def window(self, item_id: str, first: int, last: int) -> list[ChunkHit]: ...

    def nearest(
        self, vector: bytes, model: str, limit: int, viewer: Viewer, *, item_id: str | None = None
    ) -> list[tuple[int, float]]:
        """The `limit` chunks the viewer sees whose vectors of `model` are nearest, (rowid, cosine)."""
        ...

    def close(self) -> None: ...

    def reopen(self) -> AbstractContextManager[SearchStore]:
        """Another store on the same database, for another thread (a store serves one call
        at a time), closed at the end of the block."""
        ...

    # What the indexer (documents/index.py) stages a document in before writing it.
    def staging(self) -> DocumentStaging: ...

    def nearest_chunks(
        self,
        embedder: Any,
        queries: Sequence[str],
        *,
        rowid_range: tuple[int, int] | None = None,
        item_ids: Sequence[str] = (),
    ) -> list[list[tuple[int, float]]]:
        """semantic.nearest_chunks on this store: per query, the scope's nearest chunks."""
        ...

    def unembedded_chunks(
        self, model: str, *, rowid_range: tuple[int, int] | None = None, item_ids: Sequence[str] = ()
    ) -> int:
        """semantic.unembedded_chunks on this store: the scope's chunks without a vector of `model`."""
        ...

    # What the knowledge base (knowledge/store.py, search.py) runs on either backend: its
    # statements, written once in SQLite's words with `?` marks (the PostgreSQL schema has
    # the same tables), the chunk writing and the lexical search each backend does its way.
    @property
    def sql(self) -> Any:
        """Something with sqlite3.Connection's execute and executemany, rows by name or number."""
        ...

    def transaction(self) -> AbstractContextManager[Any]:
        """One write transaction (committed at the end, rolled back on error), yielding `sql`."""
        ...

    def replace_chunks(
        self,
        item_id: str,
        rows: Sequence[ChunkRow],
        segmented: Sequence[tuple[str, str]],
        vectors: Sequence[bytes] | None = None,
        vector_model: str = "",
    ) -> list[int]:
        """Put `rows` in place of the item's chunks inside `transaction()`; their rowids."""
        ...

    def find_chunks(
        self,
        query: str | MatchQuery | Sequence[str],
        limit: int,
        *,
        rowid_range: tuple[int, int] | None = None,
        item_filter: str = "",
        filter_params: Sequence[Any] = (),
        semantic: Sequence[Sequence[tuple[int, float]]] = (),
        notes: LookupNotes | None = None,
    ) -> list[ChunkHit]:
        """lookup.find_chunks: `item_filter` a condition on `items i` with `?` marks; `notes`
        told what the lookup added to the query (lookup.LookupNotes)."""
        ...

    def load_hits(self, scored: Sequence[tuple[int, float]]) -> list[ChunkHit]: ...

    def chunks_at(self, item_id: str, indexes: Sequence[int]) -> list[ChunkHit]: ...

    def chunkless_items(self) -> list[str]:
        """Ids of items that have no chunks (normally none)."""
        ...

    def whole_store_nearest(self, embedder: Any, query: str, limit: int) -> list[tuple[int, float]] | None:
        """The chunks nearest `query` in the whole store by a vector index, or None when
        there is none (the caller scans)."""
        ...

    def settle_vectors(self, model: str) -> None:
        """After an embedding pass: the vector index of `model` brought up to date."""
        ...


class StoreCommon(ABC):
    """What both backends do alike, written once in SQLite's words: items, the viewer's
    scope and vectors read and written through `sql` and `transaction()` (the PostgreSQL
    store runs `?` statements too), the ranked lookup through each backend's `find_chunks`."""

    _warned_scan = False

    @property
    @abstractmethod
    def sql(self) -> Any: ...

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]: ...

    @abstractmethod
    def item_rowid_range(self, item_id: str, chunks: int | None = None) -> tuple[int, int] | None: ...

    @abstractmethod
    def find_chunks(
        self,
        query: str | MatchQuery | Sequence[str],
        limit: int,
        *,
        rowid_range: tuple[int, int] | None = None,
        item_filter: str = "",
        filter_params: Sequence[Any] = (),
        semantic: Sequence[Sequence[tuple[int, float]]] = (),
        notes: LookupNotes | None = None,
    ) -> list[ChunkHit]: ...

    def _replace_item(self, conn: Any, item: StoredItem, viewer: Viewer) -> None:
        """Put `item` in place of one of the same id the viewer may write (inside the
        caller's transaction on `conn`, before its chunks are written)."""
        _check_write(viewer, item)
        existing = conn.execute("SELECT owner, space FROM items WHERE id = ?", (item.id,)).fetchone()
        if existing is not None and not viewer.may_write(existing[0], existing[1]):
            raise SpaceError(f"item {item.id} is not yours to replace")
        conn.execute("DELETE FROM items WHERE id = ?", (item.id,))
        conn.execute(
            f"INSERT INTO items ({', '.join(ITEM_FIELDS)}) VALUES ({', '.join('?' * len(ITEM_FIELDS))})",
            [getattr(item, name) for name in ITEM_FIELDS],
        )

    def delete_item(self, item_id: str, viewer: Viewer) -> bool:
        where, params = viewer.where("items", "?")
        with self.transaction() as conn:
            return (
                int(conn.execute(f"DELETE FROM items WHERE id = ? AND {where}", [item_id, *params]).rowcount)
                > 0
            )

    def get_item(self, item_id: str, viewer: Viewer) -> StoredItem | None:
        items = self._items(viewer, "items.id = ?", [item_id])
        return items[0] if items else None

    def list_items(self, viewer: Viewer, domain: str | None = None) -> list[StoredItem]:
        return self._items(viewer, "items.domain = ?" if domain else "", [domain] if domain else [])

    def _items(self, viewer: Viewer, condition: str, params: list[Any]) -> list[StoredItem]:
        where, values = viewer.where("items", "?")
        columns = ", ".join(
            ITEM_CONTENT + " AS content" if name == "content" else name for name in ITEM_FIELDS
        )
        rows = self.sql.execute(
            f"SELECT {columns} FROM items WHERE {where}{' AND ' + condition if condition else ''}"
            " ORDER BY created_at, id",
            [*values, *params],
        ).fetchall()
        return [StoredItem(*row) for row in rows]

    def search(
        self,
        query: str | Sequence[str],
        limit: int,
        viewer: Viewer,
        *,
        item_id: str | None = None,
        domain: str | None = None,
        semantic: Sequence[Sequence[tuple[int, float]]] = (),
    ) -> list[ChunkHit]:
        where, params = viewer.where("i", "?")
        if domain:
            where += " AND i.domain = ?"
            params.append(domain)
        rowid_range = None
        if item_id is not None:
            # One item: whether the viewer sees it is asked once, and its chunks are a rowid
            # range with nothing to join (PostgreSQL joined the range to every item the
            # viewer sees, a scan of the range per item).
            seen = self.sql.execute(f"SELECT 1 FROM items i WHERE i.id = ? AND {where}", [item_id, *params])
            rowid_range = self.item_rowid_range(item_id) if seen.fetchone() is not None else None
            if rowid_range is None:
                return []
            where, params = "", []
        return self.find_chunks(
            query, limit, rowid_range=rowid_range, item_filter=where, filter_params=params, semantic=semantic
        )

    def unembedded_chunks(
        self, model: str, *, rowid_range: tuple[int, int] | None = None, item_ids: Sequence[str] = ()
    ) -> int:
        from generalAgent.search.semantic import unembedded_chunks

        return unembedded_chunks(self.sql, model, rowid_range=rowid_range, item_ids=item_ids)

    def nearest(
        self, vector: bytes, model: str, limit: int, viewer: Viewer, *, item_id: str | None = None
    ) -> list[tuple[int, float]]:
        where, params = viewer.where("i", "?")
        if item_id is not None:
            where += " AND i.id = ?"
            params.append(item_id)
        rows = self.sql.execute(
            "SELECT v.chunk_rowid, v.vector FROM chunk_vectors v JOIN chunks c ON c.rowid = v.chunk_rowid"
            f" JOIN items i ON i.id = c.item_id WHERE v.model = ? AND {where}",
            [model, *params],
        ).fetchall()
        if len(rows) > EXACT_SCAN_WARN and not self._warned_scan:
            self._warned_scan = True
            logger.warning(
                "semantic search scans %d vectors exactly; keep scopes smaller or search by keywords"
                " for large stores",
                len(rows),
            )
        return nearest_by_scan(rows, vector, limit)


class SqliteSearchStore(StoreCommon):
    """The search store in indexes.db (the terminal's): FTS5 and lookup.py as they are."""

    backend = "sqlite"

    def __init__(
        self, db_path: Path, settings: DocumentSettings, *, conn: sqlite3.Connection | None = None
    ) -> None:
        """`conn`: an open connection to `db_path` to use (the knowledge store's, opened
        with its schema tracks)."""
        self.segmenter = Segmenter.from_setting(settings.use_jieba)
        self.db_path, self.settings = Path(db_path), settings
        self._borrowed = conn is not None
        self.conn = conn if conn is not None else connect(Path(db_path))
        # (database version, (rowid, id) of the newest item scanned, chunkless item ids)
        self._chunkless: tuple[tuple[int, int], tuple[int, str], list[str]] | None = None

    def put_item(
        self,
        item: StoredItem,
        rows: Sequence[ChunkRow],
        viewer: Viewer,
        vectors: Sequence[bytes] | None = None,
        vector_model: str = "",
    ) -> list[int]:
        _check_write(viewer, item)
        segmented = segment_rows(rows, self.segmenter, item.title)
        with transaction(self.conn):
            self._replace_item(self.conn, item, viewer)
            return replace_chunks(self.conn, item.id, rows, segmented, vectors, vector_model)

    def item_rowid_range(self, item_id: str, chunks: int | None = None) -> tuple[int, int] | None:
        return item_rowid_range(self.conn, item_id, chunks)

    def window(self, item_id: str, first: int, last: int) -> list[ChunkHit]:
        return chunk_window(self.conn, item_id, first, last)

    def close(self) -> None:
        if not self._borrowed:
            self.conn.close()

    @contextmanager
    def reopen(self) -> Iterator[SqliteSearchStore]:
        store = SqliteSearchStore(self.db_path, self.settings)
        try:
            yield store
        finally:
            store.close()

    def staging(self) -> Staging:
        return Staging(self.conn)

    def nearest_chunks(
        self,
        embedder: Any,
        queries: Sequence[str],
        *,
        rowid_range: tuple[int, int] | None = None,
        item_ids: Sequence[str] = (),
    ) -> list[list[tuple[int, float]]]:
        from generalAgent.search.semantic import nearest_chunks

        return nearest_chunks(self.conn, embedder, queries, rowid_range=rowid_range, item_ids=item_ids)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the knowledge base's ------------------------------------------------------------
    @property
    def sql(self) -> sqlite3.Connection:
        return self.conn

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return transaction(self.conn)

    def replace_chunks(
        self,
        item_id: str,
        rows: Sequence[ChunkRow],
        segmented: Sequence[tuple[str, str]],
        vectors: Sequence[bytes] | None = None,
        vector_model: str = "",
    ) -> list[int]:
        return replace_chunks(self.conn, item_id, rows, segmented, vectors, vector_model)

    def find_chunks(
        self,
        query: str | MatchQuery | Sequence[str],
        limit: int,
        *,
        rowid_range: tuple[int, int] | None = None,
        item_filter: str = "",
        filter_params: Sequence[Any] = (),
        semantic: Sequence[Sequence[tuple[int, float]]] = (),
        notes: LookupNotes | None = None,
    ) -> list[ChunkHit]:
        return find_chunks(
            self.conn,
            query,
            self.segmenter,
            limit,
            rowid_range=rowid_range,
            item_filter=item_filter,
            filter_params=filter_params,
            semantic=semantic,
            notes=notes,
        )

    def load_hits(self, scored: Sequence[tuple[int, float]]) -> list[ChunkHit]:
        return load_hits(self.conn, scored)

    def chunks_at(self, item_id: str, indexes: Sequence[int]) -> list[ChunkHit]:
        return chunks_at(self.conn, item_id, indexes)

    def settle_vectors(self, model: str) -> None:
        from generalAgent.search.background_embedding import settle_knn_indexes

        settle_knn_indexes(self.conn, model)

    def whole_store_nearest(self, embedder: Any, query: str, limit: int) -> list[tuple[int, float]] | None:
        from generalAgent.search.semantic import nearest_chunks

        rankings = nearest_chunks(self.conn, embedder, [query], limit=limit)
        return rankings[0] if rankings else []

    def chunkless_items(self) -> list[str]:
        """Ids of items that have no chunks (normally none).

        Every writer here stores an item and its chunks in one transaction, so an item can
        only lack chunks from the moment it is written: after the first full scan, only the
        items added since (rowids above the highest seen) and the ones found chunkless before
        are looked at again, when `data_version` says another connection committed or
        `total_changes` that this one wrote. A search right after another process indexed a
        file then costs a probe of its new items, not a pass over every item (~70 ms at 1M
        chunks).
        """
        version = (
            self.conn.execute("PRAGMA data_version").fetchone()[0],
            self.conn.total_changes,
        )
        if self._chunkless is not None and self._chunkless[0] == version:
            return list(self._chunkless[2])
        seen, last_id = self._chunkless[1] if self._chunkless is not None else (0, "")
        suspects = self._chunkless[2] if self._chunkless is not None else []
        still = self.conn.execute("SELECT id FROM items WHERE rowid = ?", (seen,)).fetchone()
        if seen and (still is None or still[0] != last_id):
            # The newest item seen is gone: its rowid may be reused by a new item, so the
            # rowids above it no longer tell the new items. Look at all of them once.
            seen, suspects = 0, []
        newest = self.conn.execute("SELECT rowid, id FROM items ORDER BY rowid DESC LIMIT 1").fetchone() or (
            0,
            "",
        )
        marks = ",".join("?" * len(suspects))
        rows = self.conn.execute(
            "SELECT i.id FROM items i WHERE (i.rowid > ?"
            + (f" OR i.id IN ({marks}))" if suspects else ")")
            + " AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.item_id = i.id)",
            [seen, *suspects],
        ).fetchall()
        ids = [row[0] for row in rows]
        self._chunkless = (version, (newest[0], newest[1]), ids)
        return list(ids)


def _check_write(viewer: Viewer, item: StoredItem) -> None:
    if not viewer.may_write(item.owner, item.space):
        where = f"the team space {item.space!r}" if item.space else f"{item.owner!r}'s private space"
        raise SpaceError(f"{viewer.user or 'this user'} cannot write into {where}")


def nearest_by_scan(rows: Sequence[Sequence[Any]], vector: bytes, limit: int) -> list[tuple[int, float]]:
    """(rowid, cosine) of the `limit` rows (rowid, float32 blob) nearest `vector`, exactly."""
    import numpy as np

    if not rows:
        return []
    matrix = np.frombuffer(b"".join(bytes(row[1]) for row in rows), dtype="<f4").reshape(len(rows), -1)
    query = np.frombuffer(vector, dtype="<f4")
    if query.shape[0] != matrix.shape[1]:
        raise ValueError("stored vectors come from a model of another size; re-index")
    similarity = matrix @ query
    best = np.argsort(-similarity)[:limit]
    return [(int(rows[i][0]), float(similarity[i])) for i in best]


class SharedStore:
    """The document index kept by the tools for their process: one connection to
    indexes.db, or one PostgreSQL store when SEARCH_DATABASE_URL is set, opened on first
    use and used by one search at a time (tools may run in threads)."""

    def __init__(self, paths: PathSettings, settings: DocumentSettings) -> None:
        self.paths, self.settings = paths, settings
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._store: SearchStore | None = None

    @contextmanager
    def use(self) -> Iterator[dict[str, Any]]:
        """`conn` (indexes.db) or `store` (the team's), held for the block."""
        with self._lock:
            if self.paths.search_database_url is not None:
                if self._store is None:
                    self._store = open_search_store(self.paths, self.settings)
                yield {"store": self._store}
            else:
                if self._conn is None:
                    self._conn = connect(self.paths.indexes_db)
                yield {"conn": self._conn}

    def close(self) -> None:
        """Close what was opened; a later `use` opens it again."""
        with self._lock:
            conn, store, self._conn, self._store = self._conn, self._store, None, None
        if conn is not None:
            conn.close()
        if store is not None:
            store.close()


def open_search_store(paths: PathSettings, settings: DocumentSettings) -> SearchStore | None:
    """The team's PostgreSQL store SEARCH_DATABASE_URL names, opened (its schema brought up
    to date); None when it is unset (indexes.db, opened by its users as before)."""
    url = paths.search_database_url
    if url is None:
        return None
    from generalAgent.search.postgres_store import PostgresSearchStore

    return PostgresSearchStore(url.get_secret_value(), settings)


def team_store_opener(paths: PathSettings, settings: DocumentSettings) -> Callable[[], SearchStore] | None:
    """How to open the team's store anew (a thread's own connection, as the background
    embedding's), or None when SEARCH_DATABASE_URL is unset."""
    url = paths.search_database_url
    if url is None:
        return None
    from generalAgent.search.postgres_store import PostgresSearchStore

    return lambda: PostgresSearchStore(url.get_secret_value(), settings)


@contextmanager
def team_store(paths: PathSettings, settings: DocumentSettings) -> Iterator[dict[str, Any]]:
    """The keyword arguments `store` and `viewer` a document search of the command line
    takes (documents/search.py, folder.py): the team's store (closed at the end of the
    block) or none, and the viewer SEARCH_USER names."""
    store = open_search_store(paths, settings)
    try:
        yield {"store": store, "viewer": viewer_from_settings(paths)}
    finally:
        if store is not None:
            store.close()


def copy_store(source: sqlite3.Connection, target: Any, viewer: Viewer = TERMINAL) -> int:
    """Copy every item of indexes.db (`source`) with its chunks and vectors into `target`
    (a PostgresSearchStore), keeping rowids: moving a terminal's knowledge to a team's
    database, and the benchmarks' way of searching the very same chunks in both. The
    number of items copied."""
    copied = 0
    items = source.execute(
        f"SELECT {', '.join(ITEM_CONTENT + ' AS content' if n == 'content' else n for n in ITEM_FIELDS)}"
        " FROM items ORDER BY created_at, id"
    ).fetchall()
    for row in items:
        item = StoredItem(**dict(row))
        chunks = source.execute(
            "SELECT c.rowid, c.id, c.chunk_index, f.text, c.start_position, c.end_position, c.page, c.heading,"
            " c.metadata, f.text_jieba, f.title, v.vector, v.model FROM chunks c"
            " JOIN chunks_fts f ON f.rowid = c.rowid LEFT JOIN chunk_vectors v ON v.chunk_rowid = c.rowid"
            " WHERE c.item_id = ? ORDER BY c.rowid",
            (item.id,),
        ).fetchall()
        rows = [ChunkRow(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]) for r in chunks]
        target.put_prepared(
            item,
            rows,
            [(r[9], r[10]) for r in chunks],
            viewer,
            rowids=[r[0] for r in chunks],
            vectors=[r[11] for r in chunks] if chunks and all(r[11] is not None for r in chunks) else None,
            vector_model=chunks[0][12] or "" if chunks else "",
        )
        copied += 1
    return copied
