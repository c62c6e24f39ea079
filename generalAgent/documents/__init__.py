"""Document search: extraction, chunking and the SQLite FTS5 + jieba index.

The functions below are a convenience API for scripts: each opens the index database of
`settings` (read from the environment when not given), does one thing and closes it;
long-running callers (the CLI, benchmarks, knowledge search) hold a
`SearchIndex` instead. When semantic search is on (an embedding source, e.g. the
`multilingual` extra's packaged model, search/embeddings.py), `create_index` embeds the
chunks it wrote and `search_in_index` fuses their vectors with the keywords, as the tools
and the CLI do; without vectors (none yet, or the source fails) keywords answer alone.

    from generalAgent.documents import create_index, search_in_index
    create_index(Path("uploads/report.pdf"))
    for hit in search_in_index(Path("uploads/report.pdf"), "营收增长"):
        print(hit.place, hit.score, hit.text[:80])
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generalAgent.config.settings import Settings, load_settings
from generalAgent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from generalAgent.documents.index import (
        ChunkHit,
        IndexedDocument,
        QueryError,
        SearchIndex,
        compute_file_hash,
    )
    from generalAgent.documents.reading import DocumentError
    from generalAgent.search.results import Passage

# Loaded on first use (lazy_exports.py): importing one light module of the package (documents.images
# for the tools' image limits) must not load the extractors, the index and jieba's neighbours,
# which `generalagent -p` and the chat's first request may never need (tests/e2e/test_print_imports.py).
__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "DocumentError": "generalAgent.documents.reading",
        "ChunkHit": "generalAgent.documents.index",
        "IndexedDocument": "generalAgent.documents.index",
        "QueryError": "generalAgent.documents.index",
        "SearchIndex": "generalAgent.documents.index",
        "compute_file_hash": "generalAgent.documents.index",
        "Passage": "generalAgent.search.results",
    },
)


__all__ = [
    "ChunkHit",
    "DocumentError",
    "IndexedDocument",
    "Passage",
    "QueryError",
    "SearchIndex",
    "cleanup_old_indexes",
    "cleanup_old_indexes_for_file",
    "compute_file_hash",
    "create_index",
    "get_index_stats",
    "index_exists",
    "open_index",
    "search_in_index",
]


def open_index(settings: Settings | None = None) -> SearchIndex:
    """The index of `settings` (default: from the environment and .env): indexes.db, or
    the team's PostgreSQL store when SEARCH_DATABASE_URL is set (as SEARCH_USER)."""
    from generalAgent.documents.index import SearchIndex
    from generalAgent.search.store import open_search_store, viewer_from_settings

    settings = settings or load_settings()
    store = open_search_store(settings.paths, settings.documents)
    return SearchIndex(
        settings.paths.indexes_db,
        settings.documents,
        store=store,
        viewer=viewer_from_settings(settings.paths),
        owns_store=store is not None,
    )


def create_index(path: Path, settings: Settings | None = None, *, embed: bool = True) -> IndexedDocument:
    """Index the file (once per content: the same bytes at another path reuse the index;
    a new version of a file at the same path replaces the old one). With `embed` and an
    embedding source, the chunks without a vector are embedded before it returns (a
    failing source leaves them to the next call: keywords still find them)."""
    from generalAgent.search.background_embedding import embed_pending
    from generalAgent.search.embeddings import EmbeddingError, embeddings_from_settings

    settings = settings or load_settings()
    with open_index(settings) as index:
        document = index.index_file(Path(path))
        vectors = embeddings_from_settings(settings) if embed else None
        if vectors is not None:
            # Resumable: what was embedded stays, the rest waits for the next pass.
            with suppress(EmbeddingError):
                embed_pending(index.store, vectors, settings.documents.embedding_batch_size)
        return document


def index_exists(path: Path, settings: Settings | None = None) -> bool:
    """The file's current bytes are indexed, within INDEX_STALE_THRESHOLD_HOURS."""
    with open_index(settings) as index:
        return index.is_fresh(Path(path))


def search_in_index(
    path: Path, query: str | list[str], max_results: int | None = None, settings: Settings | None = None
) -> list[Passage]:
    """Best passages of an indexed file, each with its place, text and score.

    `query` is one string or a list of phrasings of one question (e.g. the user's Chinese
    and its English rendering for an English document), fused by rank. [] when the file is
    not indexed (call `create_index` first) or nothing matches.
    """
    from generalAgent.search.embeddings import EmbeddingError, embeddings_from_settings
    from generalAgent.search.query import phrasings

    settings = settings or load_settings()
    with open_index(settings) as index:
        try:
            record = index.document(index.file_hash(Path(path)))
        except OSError:
            return []
        if record is None:
            return []
        item_id = record["item_id"]
        semantic: list[list[tuple[int, float]]] = []
        vectors = embeddings_from_settings(settings)
        asked = [query] if isinstance(query, str) else phrasings(query)
        if vectors is not None and asked:
            try:
                semantic = index.store.nearest_chunks(
                    vectors, asked, rowid_range=index.store.item_rowid_range(item_id)
                )
            except EmbeddingError:
                semantic = []  # keywords answer alone
        hits = index.search_item(item_id, query, max_results, semantic=semantic)
        return [hit.passage() for hit in hits]


def get_index_stats(settings: Settings | None = None) -> dict[str, Any]:
    with open_index(settings) as index:
        return index.stats()


def cleanup_old_indexes(days: int = 30, settings: Settings | None = None) -> int:
    """Delete documents indexed more than `days` days ago; returns how many."""
    with open_index(settings) as index:
        return index.cleanup_old(days)


def cleanup_old_indexes_for_file(path: Path, keep_hash: str, settings: Settings | None = None) -> int:
    """Delete the index of an older version of the file at `path` (any hash but `keep_hash`)."""
    with open_index(settings) as index:
        return index.cleanup_for_file(Path(path), keep_hash)
