"""The knowledge store: items, their tags and chunks in indexes.db, beside the documents,
or in a team's PostgreSQL database (SEARCH_DATABASE_URL): one SearchStore either way
(search/store.py), whose `sql` runs the statements here and which writes and searches the
chunks its own way.

An item's text, its chunks, their FTS rows and (when semantic search is on) their vectors
are written in one transaction, so a search never sees an item half-updated. Indexed files
are items of domain `documents`: they are listed, searched and deleted here like any other,
but their content comes from the file (re-index it to change it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from generalAgent.config.settings import DocumentSettings
from generalAgent.display import N_, Message
from generalAgent.knowledge.fields import (
    KnowledgeError,
    clean_content,
    clean_name,
    clean_tags,
    clean_title,
    item_filter,
)
from generalAgent.knowledge.items import KnowledgeChunk, KnowledgeItem, new_id
from generalAgent.knowledge.schema import TRACK
from generalAgent.search.chunking import Block, chunk_blocks
from generalAgent.search.connection import IndexDatabase
from generalAgent.search.embeddings import Embedder, EmbeddingError
from generalAgent.search.lookup import INDEX_ERRORS
from generalAgent.search.schema import DOCUMENTS_DOMAIN, ITEM_CONTENT, now_iso
from generalAgent.search.storage import ChunkRow, segment_rows
from generalAgent.search.store import PRIVATE, PUBLIC, TERMINAL, SearchStore, SqliteSearchStore, Viewer

_ITEM_COLUMNS = "id, domain, category, title, content, source, source_path, priority, created_at, updated_at"
# What is read: an indexed file's text is kept apart, in document_texts (see ITEM_CONTENT).
_ITEM_FIELDS = _ITEM_COLUMNS.replace("content", f"{ITEM_CONTENT} AS content")
_CHUNK_COLUMNS = (
    "c.id AS id, c.item_id AS item_id, c.chunk_index AS chunk_index, f.text AS content, c.heading AS heading,"
    " c.start_position AS start_position, c.end_position AS end_position, c.metadata AS metadata, c.page AS page"
)


# What a knowledge store call can raise, each with a message fit for the user.
STORE_ERRORS: tuple[type[Exception], ...] = (KnowledgeError, *INDEX_ERRORS)


class KnowledgeStore(IndexDatabase):
    """Items and chunks of indexes.db. One connection; use as a context manager."""

    TRACKS = (TRACK,)  # the knowledge base's tables (knowledge/schema.py), beside the index's

    def __init__(
        self,
        db_path: Path,
        settings: DocumentSettings,
        embedder: Embedder | None = None,
        viewer: Viewer = TERMINAL,
        *,
        database_url: str | None = None,
        schema: str | None = None,
        workspaces_dir: Path | None = None,
    ) -> None:
        """`viewer`: whose store it is (search/store.py): it reads, changes and deletes
        only its own private items and its teams', and adds into those spaces only.

        `database_url`: keep the knowledge base in that PostgreSQL database (its `schema`,
        default the connection's search_path) instead of indexes.db at `db_path`: a
        team's shared store (SEARCH_DATABASE_URL). Either way every statement below goes
        through the one SearchStore (`store`)."""
        super().__init__(db_path, settings)
        self.embedder = embedder
        self.viewer = viewer
        self.database_url = database_url
        self.schema = schema
        self.workspaces_dir = workspaces_dir
        self._store: SearchStore | None = None
        # Set when embeddings failed; search reports it once, then lexical search carries on.
        self.embedding_problem: Message | None = None  # why embeddings failed, said once
        self.embedding_problem_told = False

    @property
    def store(self) -> SearchStore:
        """The search store the knowledge base lives in, opened on first use."""
        if self._store is None:
            if self.database_url:
                from generalAgent.search.postgres_store import PostgresSearchStore

                self._store = PostgresSearchStore(self.database_url, self.settings, schema=self.schema)
            else:
                self._store = SqliteSearchStore(self.db_path, self.settings, conn=self.conn)
        return self._store

    @property
    def db(self) -> Any:
        """The store's statements (sqlite3.Connection's execute and executemany)."""
        return self.store.sql

    def close(self) -> None:
        if self._store is not None:
            self._store.close()  # a SQLite store leaves the connection it borrowed to super()
            self._store = None
        super().close()

    @property
    def session_files(self) -> str:
        """The folder of the sessions' workspaces (SHARED_WORKSPACES_DIR, or DATA_DIR/workspaces/
        beside indexes.db): the files attached there are each session's own, not the
        knowledge base."""
        folder = self.workspaces_dir or self.db_path.parent / "workspaces"
        return str(folder.resolve()) + os.sep

    # -- items --------------------------------------------------------------------------
    def space_refusal(self, space: str) -> KnowledgeError | None:
        """Why the viewer may not use the team space `space` ('' is their own), or None."""
        if self.viewer.may_write(self.viewer.user, space):
            return None
        if not self.viewer.teams:  # said in words, not as an empty or English "none" list
            return KnowledgeError(
                N_(
                    "You are not a member of the space {space} (you are in no team space); "
                    "set SEARCH_TEAMS, or leave the space out for your own."
                ),
                space=repr(space),
            )
        return KnowledgeError(
            N_(
                "You are not a member of the space {space} (your team spaces: {teams}); "
                "set SEARCH_TEAMS, or leave the space out for your own."
            ),
            space=repr(space),
            teams=", ".join(self.viewer.teams),
        )

    def add_knowledge(
        self,
        title: str,
        content: str,
        domain: str = "general",
        category: str = "",
        tags: Iterable[str] = (),
        source: str = "user",
        source_path: str | None = None,
        priority: int = 1,
        blocks: Sequence[Block] | None = None,
        space: str = PRIVATE,
    ) -> KnowledgeItem:
        """Store a new item, chunked and indexed; `KnowledgeError` for unusable fields.

        `blocks` (a document's extracted pages, slides or sheets) replace `content`: the item's
        content is their text and each chunk keeps its page, so results can cite it.
        `space`: a team space of the viewer's, or its private one ('').
        """
        space = space.strip()
        refusal = self.space_refusal(space)
        if refusal is not None:
            raise refusal
        if blocks is not None:
            content = chunk_blocks(blocks, self.chunking)[0]
        item = KnowledgeItem(
            title=clean_title(title),
            content=clean_content(content),
            domain=clean_name(domain, "domain"),
            category=category.strip(),
            tags=clean_tags(tags),
            source=source,
            source_path=source_path,
            priority=int(priority),
        )
        if item.domain == DOCUMENTS_DOMAIN:
            raise KnowledgeError(
                N_(
                    "The domain 'documents' holds indexed files; index the file instead "
                    "(generalagent index FILE), or choose another domain."
                )
            )
        prepared = self._prepare_chunks(item, blocks)
        with self.store.transaction() as conn:
            conn.execute(
                f"INSERT INTO items ({_ITEM_COLUMNS}, owner, space) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*_item_row(item), self.viewer.user, space),
            )
            _write_tags(conn, item.id, item.tags)
            self._write_chunks(conn, item.id, *prepared)
        return item

    def update_knowledge(
        self,
        item_id: str,
        *,
        title: str | None = None,
        content: str | None = None,
        domain: str | None = None,
        category: str | None = None,
        tags: Iterable[str] | None = None,
        priority: int | None = None,
        source: str | None = None,
    ) -> KnowledgeItem | None:
        """Change an item; a new title or content re-chunks and re-indexes it in the same
        transaction. `source` says who wrote it now (e.g. agent-untrusted). None if there is
        no such item."""
        item = self.get_knowledge_item(item_id)
        if item is None:
            return None
        if item.domain == DOCUMENTS_DOMAIN and (content is not None or domain is not None):
            raise KnowledgeError(
                N_(
                    "{title} is an indexed file: its content comes from the file. Edit the "
                    "file and index it again; tags and category can be changed here."
                ),
                title=item.title,
            )
        if title is not None:
            item.title = clean_title(title)
        if content is not None:
            item.content = clean_content(content)
        if domain is not None:
            item.domain = clean_name(domain, "domain")
            if item.domain == DOCUMENTS_DOMAIN:
                raise KnowledgeError(N_("The domain 'documents' is reserved for indexed files."))
        if category is not None:
            item.category = category.strip()
        if tags is not None:
            item.tags = clean_tags(tags)
        if priority is not None:
            item.priority = int(priority)
        if source is not None:
            item.source = source
        item.updated_at = now_iso()
        rechunk = title is not None or content is not None
        prepared = self._prepare_chunks(item) if rechunk else None
        with self.store.transaction() as conn:
            conn.execute(
                "UPDATE items SET domain = ?, category = ?, title = ?, content = ?,"
                " priority = ?, source = ?, updated_at = ? WHERE id = ?",
                (
                    item.domain,
                    item.category,
                    item.title,
                    item.content,
                    item.priority,
                    item.source,
                    item.updated_at,
                    item.id,
                ),
            )
            _write_tags(conn, item.id, item.tags)
            if prepared is not None:
                self._write_chunks(conn, item.id, *prepared)
        return item

    def delete_knowledge(self, item_id: str) -> bool:
        """Delete the item with its tags, chunks, FTS rows and vectors; False if unknown."""
        mine, params = self._mine()
        with self.store.transaction() as conn:
            return conn.execute(f"DELETE FROM items WHERE id = ? AND {mine}", (item_id, *params)).rowcount > 0

    def get_knowledge_item(self, item_id: str) -> KnowledgeItem | None:
        mine, params = self._mine()
        row = self.db.execute(
            f"SELECT {_ITEM_FIELDS} FROM items WHERE id = ? AND {mine}", (item_id, *params)
        ).fetchone()
        return self._items([row])[0] if row else None

    def _mine(self) -> tuple[str, list[Any]]:
        """SQL condition on `items` for the items this store's viewer sees."""
        return self.viewer.where("items", "?")

    def resolve_id(self, reference: str) -> str:
        """The id of the one item whose id starts with `reference` (a shortened id from
        `kb list` works); `KnowledgeError` when none or several do."""
        prefix = reference.strip().lower()
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        mine, params = self._mine()
        rows = self.db.execute(
            f"SELECT id FROM items WHERE id LIKE ? ESCAPE '\\' AND {mine} ORDER BY id LIMIT 6",
            (escaped + "%", *params),
        ).fetchall()
        ids = [row["id"] for row in rows]
        if prefix in ids:
            return prefix
        if not prefix or not ids:
            raise KnowledgeError(
                N_("No knowledge item id starts with {id}; kb list shows them."), id=repr(reference)
            )
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
            raise KnowledgeError(
                N_("{id} matches several items ({ids}); give more of the id."), id=repr(reference), ids=shown
            )
        return ids[0]

    def get_items(self, item_ids: Sequence[str]) -> dict[str, KnowledgeItem]:
        if not item_ids:
            return {}
        marks = ",".join("?" * len(item_ids))
        mine, params = self._mine()
        rows = self.db.execute(
            f"SELECT {_ITEM_FIELDS} FROM items WHERE id IN ({marks}) AND {mine}", [*item_ids, *params]
        ).fetchall()
        return {item.id: item for item in self._items(rows)}

    def list_knowledge(
        self,
        domain: str | None = None,
        category: str | None = None,
        tags: Iterable[str] | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[KnowledgeItem]:
        """Items matching the filters, most recently updated first."""
        where, params = item_filter(
            domain, category, tags, alias="items", session_files=self.session_files, viewer=self.viewer
        )
        rows = self.db.execute(
            f"SELECT {_ITEM_FIELDS} FROM items WHERE {where or 'TRUE'}"
            " ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
            [*params, max(0, int(limit)), max(0, int(offset))],
        ).fetchall()
        return self._items(rows)

    def count_knowledge(self, domain: str | None = None) -> int:
        where, params = item_filter(
            domain, None, None, alias="items", session_files=self.session_files, viewer=self.viewer
        )
        return self.db.execute(f"SELECT COUNT(*) FROM items WHERE {where or 'TRUE'}", params).fetchone()[0]

    def get_domains(self) -> list[str]:
        mine, params = self._mine()
        return [
            r[0]
            for r in self.db.execute(f"SELECT DISTINCT domain FROM items WHERE {mine} ORDER BY 1", params)
        ]

    def get_categories(self, domain: str | None = None) -> list[str]:
        mine, params = self._mine()
        sql = f"SELECT DISTINCT category FROM items WHERE category != '' AND {mine}"
        if domain is not None:
            sql += " AND domain = ?"
            params.append(domain)
        return [r[0] for r in self.db.execute(sql + " ORDER BY 1", params)]

    def get_tags(self, domain: str | None = None) -> list[str]:
        mine, params = self.viewer.where("i", "?")
        sql = f"SELECT DISTINCT t.tag FROM item_tags t JOIN items i ON i.id = t.item_id WHERE {mine}"
        if domain is not None:
            sql += " AND i.domain = ?"
            params.append(domain)
        return [r[0] for r in self.db.execute(sql + " ORDER BY 1", params)]

    # -- chunks -------------------------------------------------------------------------
    def save_chunks(self, item_id: str, chunks: Sequence[KnowledgeChunk]) -> None:
        """Replace all chunks of the item with `chunks` (ordered by chunk_index)."""
        item = self.get_knowledge_item(item_id)
        if item is None:
            raise KnowledgeError(N_("No knowledge item {id}."), id=repr(item_id))
        ordered = sorted(chunks, key=lambda c: c.chunk_index)
        rows = [_chunk_row(c) for c in ordered]
        prepared = (rows, *self._index_columns(item.title, rows))
        with self.store.transaction() as conn:
            self._write_chunks(conn, item_id, *prepared)

    def get_chunks_for_item(
        self, item_id: str, first: int | None = None, last: int | None = None
    ) -> list[KnowledgeChunk]:
        """The item's chunks in order (optionally only chunk_index first..last)."""
        mine, params = self._mine()
        rows = self.db.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
            " WHERE c.item_id = ? AND c.chunk_index BETWEEN ? AND ?"
            f" AND EXISTS (SELECT 1 FROM items WHERE items.id = c.item_id AND {mine}) ORDER BY c.chunk_index",
            (item_id, -1 if first is None else first, 2**62 if last is None else last, *params),
        ).fetchall()
        return [_chunk(row) for row in rows]

    def count_chunks(self, item_id: str) -> int:
        return self.db.execute("SELECT COUNT(*) FROM chunks WHERE item_id = ?", (item_id,)).fetchone()[0]

    def get_chunk_by_id(self, chunk_id: str) -> KnowledgeChunk | None:
        mine, params = self._mine()
        row = self.db.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.id = ?"
            f" AND EXISTS (SELECT 1 FROM items WHERE items.id = c.item_id AND {mine})",
            (chunk_id, *params),
        ).fetchone()
        return _chunk(row) if row else None

    def get_adjacent_chunks(
        self, item_id: str, chunk_index: int
    ) -> tuple[KnowledgeChunk | None, KnowledgeChunk | None]:
        """(the chunk before, the chunk after) `chunk_index`; None past either end."""
        around = self.get_chunks_for_item(item_id, chunk_index - 1, chunk_index + 1)
        by_index = {c.chunk_index: c for c in around}
        return by_index.get(chunk_index - 1), by_index.get(chunk_index + 1)

    def chunkless_items(self) -> list[str]:
        """Ids of items that have no chunks (normally none; the backend keeps it cheap)."""
        return self.store.chunkless_items()

    def ensure_chunks(self, item_id: str) -> list[KnowledgeChunk]:
        """The item's chunks, cutting and saving them now if it has none (the lazy
        recovery: an item stored without chunks must still answer with passages)."""
        chunks = self.get_chunks_for_item(item_id)
        if chunks:
            return chunks
        item = self.get_knowledge_item(item_id)
        if item is None:
            return []
        prepared = self._prepare_chunks(item)
        with self.store.transaction() as conn:
            self._write_chunks(conn, item_id, *prepared)
        return self.get_chunks_for_item(item_id)

    # -- built-in knowledge ---------------------------------------------------------------
    def builtin_sources(self) -> dict[str, tuple[str, str]]:
        """{relative path: (content hash, item id)} of the imported built-in files."""
        rows = self.db.execute("SELECT path, content_hash, item_id FROM builtin_sources")
        return {path: (digest, item_id) for path, digest, item_id in rows}

    def save_builtin(
        self, path: str, content_hash: str, item: KnowledgeItem, item_id: str | None
    ) -> KnowledgeItem:
        """Insert (item_id None) or replace a built-in item and record its file's hash, in
        one transaction, so a crash never leaves a file imported but unrecorded.

        The file's item is the one its record names when the transaction starts: another
        process sharing the store (replicas on one PostgreSQL) that imported the same file
        since this one read the records is replaced, not joined by a second item."""
        if item.domain == DOCUMENTS_DOMAIN:
            raise KnowledgeError(N_("The domain 'documents' is reserved for indexed files."))
        if item_id is not None:
            item.id = item_id
        prepared = self._prepare_chunks(item)
        with self.store.transaction() as conn:
            recorded = conn.execute("SELECT item_id FROM builtin_sources WHERE path = ?", (path,)).fetchone()
            if recorded is not None:
                item.id = recorded[0]
            conn.execute(
                f"INSERT INTO items ({_ITEM_COLUMNS}, space) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET domain = excluded.domain,"
                " category = excluded.category, title = excluded.title,"
                " content = excluded.content, updated_at = excluded.updated_at, space = excluded.space",
                (*_item_row(item), PUBLIC),  # everyone's: no user wrote it
            )
            _write_tags(conn, item.id, item.tags)
            self._write_chunks(conn, item.id, *prepared)
            conn.execute(
                "INSERT INTO builtin_sources (path, content_hash, item_id, imported_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET"
                " content_hash = excluded.content_hash, item_id = excluded.item_id,"
                " imported_at = excluded.imported_at",
                (path, content_hash, item.id, now_iso()),
            )
        return item

    # -- internals ------------------------------------------------------------------------
    def _prepare_chunks(
        self, item: KnowledgeItem, blocks: Sequence[Block] | None = None
    ) -> tuple[list[ChunkRow], list[tuple[str, str]], list[bytes] | None]:
        """Chunk, segment and embed outside the write transaction (the slow part)."""
        _, chunks = chunk_blocks(blocks or [Block(item.content)], self.chunking)
        rows = [ChunkRow(new_id(), c.index, c.text, c.start, c.end, c.page, c.heading) for c in chunks]
        return (rows, *self._index_columns(item.title, rows))

    def _index_columns(
        self, title: str, rows: list[ChunkRow]
    ) -> tuple[list[tuple[str, str]], list[bytes] | None]:
        segmented = segment_rows(rows, self.segmenter, title)
        vectors = None
        # Once embeddings failed, the rest of this store's work (the other pages of an import,
        # the search after it) goes without them rather than waiting for the endpoint again.
        if self.embedder is not None and rows and self.embedding_problem is None:
            try:
                vectors = self.embedder.vectors([r.text for r in rows])
            except EmbeddingError as exc:
                self.embedding_problem = exc.said
        return segmented, vectors

    def _write_chunks(
        self,
        conn: Any,
        item_id: str,
        rows: list[ChunkRow],
        segmented: list[tuple[str, str]],
        vectors: list[bytes] | None,
    ) -> None:
        """The chunks in place, inside the `transaction()` of `conn`."""
        model = self.embedder.model if self.embedder is not None else ""
        self.store.replace_chunks(item_id, rows, segmented, vectors, model)

    def _items(self, rows: Sequence[Any]) -> list[KnowledgeItem]:
        ids = [row["id"] for row in rows]
        tags: dict[str, list[str]] = {item_id: [] for item_id in ids}
        if ids:
            marks = ",".join("?" * len(ids))
            rows_of_tags = self.db.execute(
                f"SELECT item_id, tag FROM item_tags WHERE item_id IN ({marks})", ids
            )
            for item_id, tag in rows_of_tags:
                tags[item_id].append(tag)
        return [KnowledgeItem(**dict(row), tags=sorted(tags[row["id"]])) for row in rows]


def _item_row(item: KnowledgeItem) -> tuple[Any, ...]:
    return (
        item.id,
        item.domain,
        item.category,
        item.title,
        item.content,
        item.source,
        item.source_path,
        item.priority,
        item.created_at,
        item.updated_at,
    )


def _write_tags(conn: Any, item_id: str, tags: list[str]) -> None:
    conn.execute("DELETE FROM item_tags WHERE item_id = ?", (item_id,))
    conn.executemany("INSERT INTO item_tags (item_id, tag) VALUES (?, ?)", [(item_id, t) for t in tags])


def _chunk_row(chunk: KnowledgeChunk) -> ChunkRow:
    page = chunk.metadata.get("page")
    return ChunkRow(
        chunk.id,
        chunk.chunk_index,
        chunk.content,
        chunk.start_position,
        chunk.end_position,
        page if isinstance(page, int) else None,
        chunk.heading,
        json.dumps(chunk.metadata, ensure_ascii=False, sort_keys=True),
    )


def _chunk(row: Any) -> KnowledgeChunk:
    fields = dict(row)
    metadata = json.loads(fields.pop("metadata") or "{}")
    page = fields.pop("page")
    if page is not None and "page" not in metadata:
        metadata["page"] = page  # document chunks keep their page in a column of their own
    return KnowledgeChunk(**fields, metadata=metadata)
