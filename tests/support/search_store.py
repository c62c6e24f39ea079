"""Putting items into a search store and reading what a search finds, on either backend:
shared by the store's tests and the tests of what searches through it (the gloss)."""

from __future__ import annotations

import pytest

from generalAgent.config.settings import Settings
from generalAgent.search.storage import ChunkRow
from generalAgent.search.store import TERMINAL, SearchStore, SqliteSearchStore, StoredItem, Viewer


def open_store(backend: str, settings: Settings, request: pytest.FixtureRequest) -> SearchStore:
    if backend == "sqlite":
        return SqliteSearchStore(settings.paths.indexes_db, settings.documents)
    from generalAgent.search.postgres_store import PostgresSearchStore

    url, schema = request.getfixturevalue("pg_schema")
    return PostgresSearchStore(url, settings.documents, schema=schema)


def rows_of(item_id: str, texts: list[str], pages: bool = False) -> list[ChunkRow]:
    rows, position = [], 0
    for n, text in enumerate(texts):
        rows.append(
            ChunkRow(f"{item_id}-{n}", n, text, position, position + len(text), page=n + 1 if pages else None)
        )
        position += len(text)
    return rows


def put(
    store: SearchStore,
    item_id: str,
    texts: list[str],
    viewer: Viewer = TERMINAL,
    *,
    title: str = "",
    space: str = "",
    domain: str = "notes",
    vectors: list[bytes] | None = None,
) -> list[int]:
    item = StoredItem(
        id=item_id,
        domain=domain,
        title=title or item_id,
        content="\n".join(texts),
        owner=viewer.user,
        space=space,
    )
    return store.put_item(
        item, rows_of(item_id, texts, pages=True), viewer, vectors, "test-model" if vectors else ""
    )


def found(store: SearchStore, query: str | list[str], viewer: Viewer = TERMINAL, **scope: str) -> list[str]:
    """The items of the hits, best first, each once."""
    hits = store.search(query, 10, viewer, **scope)  # type: ignore[arg-type]
    return list(dict.fromkeys(hit.item_id for hit in hits))
