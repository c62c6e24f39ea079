"""The knowledge base: items and chunks in indexes.db (or a team's PostgreSQL database,
SEARCH_DATABASE_URL), two-phase search within budgets.

from generalAgent.knowledge import open_store, search_knowledge
with open_store(settings) as store:
    store.add_knowledge("Release checklist", text, domain="ops", tags=["release"])
    result = search_knowledge(store, "release 检查", domain="ops", budget=budget)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generalAgent.config.settings import Settings
from generalAgent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from generalAgent.knowledge.fields import KnowledgeError
    from generalAgent.knowledge.items import KnowledgeChunk, KnowledgeItem
    from generalAgent.knowledge.search import search_knowledge
    from generalAgent.knowledge.store import STORE_ERRORS, KnowledgeStore
    from generalAgent.search.embeddings import EmbeddingError
    from generalAgent.search.store import Viewer

# Loaded on first use (lazy_exports.py): the records of knowledge.items (read by the tools'
# provenance rules on every start) must not load the store, the search and the embeddings,
# which `generalagent -p` and the chat's first request may never need.
__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "KnowledgeChunk": "generalAgent.knowledge.items",
        "KnowledgeItem": "generalAgent.knowledge.items",
        "search_knowledge": "generalAgent.knowledge.search",
        "STORE_ERRORS": "generalAgent.knowledge.store",
        "KnowledgeError": "generalAgent.knowledge.fields",
        "KnowledgeStore": "generalAgent.knowledge.store",
        "EmbeddingError": "generalAgent.search.embeddings",
    },
)


__all__ = [
    "EmbeddingError",
    "KnowledgeChunk",
    "KnowledgeError",
    "KnowledgeItem",
    "KnowledgeStore",
    "STORE_ERRORS",
    "open_store",
    "search_knowledge",
]


def open_store(settings: Settings, viewer: Viewer | None = None) -> KnowledgeStore:
    """The store of `settings`, with embeddings when semantic search is configured, as
    `viewer` sees it (default: SEARCH_USER and SEARCH_TEAMS; a served run's tools pass
    the user the server authenticated)."""
    from generalAgent.knowledge.store import KnowledgeStore
    from generalAgent.search.embeddings import embeddings_from_settings
    from generalAgent.search.store import viewer_from_settings

    url = settings.paths.search_database_url
    return KnowledgeStore(
        settings.paths.indexes_db,
        settings.documents,
        embeddings_from_settings(settings),
        viewer if viewer is not None else viewer_from_settings(settings.paths),
        database_url=url.get_secret_value() if url is not None else None,
        workspaces_dir=settings.paths.workspaces_dir,
    )
