"""The knowledge base: items and chunks in indexes.db, two-phase search within budgets.

from generalAgent.knowledge import open_store, search_knowledge
with open_store(settings) as store:
    store.add_knowledge("Release checklist", text, domain="ops", tags=["release"])
    result = search_knowledge(store, "release 检查", domain="ops", budget=budget)
"""

from __future__ import annotations

from generalAgent.config.settings import Settings
from generalAgent.knowledge.fields import KnowledgeError
from generalAgent.knowledge.items import KnowledgeChunk, KnowledgeItem
from generalAgent.knowledge.search import search_knowledge
from generalAgent.knowledge.store import STORE_ERRORS, KnowledgeStore
from generalAgent.search.embeddings import EmbeddingError, embeddings_from_settings

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


def open_store(settings: Settings) -> KnowledgeStore:
    """The store of `settings`, with embeddings when semantic search is configured."""
    return KnowledgeStore(settings.paths.indexes_db, settings.documents, embeddings_from_settings(settings))
