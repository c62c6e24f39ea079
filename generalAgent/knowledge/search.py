"""Two-phase knowledge search: find chunks, then answer per item within the content budget.

Phase 1 finds chunks through the document search's one lookup (search/lookup.py
`find_chunks`, either backend): BM25 over any term, the best chunks re-ranked by their
documents, and, when semantic search is on, the chunks whose vectors are nearest each
phrasing's, passed in as its `semantic` rankings so that documents, folders and the knowledge
base share one fusion (`fused_places`: reciprocal rank fusion, plain BM25's seats, the
keyword top five's seats when the query's words are in the searched items, its first place's
alone when they are mostly absent, ranking.keyword_seats). Items stored without chunks
(written before chunking existed, or when it failed) are chunked on the spot; if even that
fails, passages around the query's words are cut from their content.

Phase 2 groups the chunks per item (item score = its best chunk), keeps the best matched
chunks and their neighbours (one before, one after) as context, applies the minimum score,
sorts (relevance, the lookup's order breaking ties of score, since a seated place takes the
score of the one after it; date or title, ties broken by title then id so the order is
deterministic), and only then fits the content budget, which never changes what was chosen.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from generalAgent.display import N_, Message
from generalAgent.knowledge.fields import item_filter
from generalAgent.knowledge.items import KnowledgeItem
from generalAgent.knowledge.store import KnowledgeStore
from generalAgent.search.budgets import ContentBudget, apply_budget
from generalAgent.search.embeddings import EmbeddingError
from generalAgent.search.lookup import ChunkHit, LookupNotes
from generalAgent.search.query import build_match_query, normalise_query, phrasings
from generalAgent.search.query_rendering import RenderQuery, with_rendering
from generalAgent.search.results import SearchResult
from generalAgent.search.segmentation import CJK_RUN
from generalAgent.search.store import TERMINAL, Viewer

SORTS = ("relevance", "date", "title")
# Chunks fetched in phase 1 per result asked for: enough for several matched chunks per item
# and for items that the grouping merges.
CANDIDATES_PER_RESULT = 20
VECTOR_CANDIDATES = 50
MAX_RESULTS = 20
# Files counted per language when choosing the one to render a query into: the commonest
# wins either way, and the list stays short for a store of many thousand files.
MAX_LANGUAGE_WEIGHT = 10_000


@dataclass(frozen=True)
class Filters:
    domain: str | None = None
    category: str | None = None
    tags: tuple[str, ...] = ()
    session_files: str | None = None  # attachments of sessions, left out (store.item_filter)
    viewer: Viewer = TERMINAL  # whose search it is (search/store.py)
    space: str | None = None  # only this space of the viewer's

    def sql(self) -> tuple[str, list[Any]]:
        return item_filter(
            self.domain,
            self.category,
            self.tags,
            session_files=self.session_files,
            viewer=self.viewer,
            space=self.space,
        )


@dataclass(frozen=True, slots=True)
class KnowledgeResult:
    """One item found: its fields (its text, as the budget left it, is `found.content`),
    how many chunks it has, its language (indexed files) and its passages."""

    item: KnowledgeItem
    total_chunks: int
    found: SearchResult
    language: str = ""


@dataclass(frozen=True, slots=True)
class KnowledgeSearch:
    query: str  # the phrasings as searched, joined by " | "
    results: tuple[KnowledgeResult, ...] = ()
    warning: Message | None = None  # said once a session: semantic search is off, and why
    rendered: str = ""  # the query's rendering in the indexed files' language the search added
    rendered_language: str = ""  # that language
    # The English keywords a lone Chinese question was also searched as (the dictionary
    # gloss, search/query_translation.py), as the document searches say it: "" when none was.
    glossed: str = ""


def search_knowledge(
    store: KnowledgeStore,
    query: str | list[str],
    *,
    domain: str | None = None,
    category: str | None = None,
    tags: Iterable[str] | None = None,
    max_results: int | None = None,
    min_score: float = 0.0,
    sort: str = "relevance",
    budget: ContentBudget | None = None,
    space: str | None = None,
    render: RenderQuery | None = None,
) -> KnowledgeSearch:
    """The items that answer `query`, best first (or by `sort`), within `budget`.

    `query` is one string or several phrasings of one question (e.g. the user's words and
    their English rendering), each ranked and all fused by rank. `budget=None` returns the
    results unshortened (tests compare the two). `space`: only that space of the store's
    viewer ('' = the viewer's private one; one they are not in: KnowledgeError); unset =
    every space the viewer sees.
    `render` (the chat's model, through the run context) renders a lone query whose script
    differs from the searched files' into their commonest language, searched beside it
    (search/query_rendering.py), as the document and folder searches do; notes have no
    stored language and do not count.
    """
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    # A space the viewer is not in would find nothing, said as "no match": say why instead.
    refusal = store.space_refusal(space.strip()) if space is not None else None
    if refusal is not None:
        raise refusal
    filters = Filters(
        domain or None, category or None, tuple(tags or ()), store.session_files, store.viewer, space
    )
    wanted = store.settings.search_max_results_default if max_results is None else max_results
    limit = max(1, min(int(wanted), MAX_RESULTS))
    matched_cap = budget.matched_chunks if budget is not None else 5
    warning = None
    asked = phrasings(query)
    shown_query = " | ".join(normalise_query(q) for q in asked)
    if not asked:
        return KnowledgeSearch(shown_query)
    rendered = rendered_language = ""
    if render is not None and len(asked) == 1:
        asked, rendered, rendered_language = with_rendering(asked, _scope_languages(store, filters), render)

    semantic: list[list[tuple[int, float]]] = []
    if store.embedder is not None and store.embedding_problem is None:
        try:
            semantic = [_semantic(store, q, filters) for q in asked]
        except EmbeddingError as exc:
            store.embedding_problem = exc.said
    lookup = LookupNotes()
    hits = _lexical(store, asked, filters, limit * CANDIDATES_PER_RESULT, lookup, semantic)
    if store.embedding_problem is not None and not store.embedding_problem_told:
        warning = Message(
            N_("Semantic search is off for this session ({problem}); keyword search still works."),
            {"problem": store.embedding_problem},
        )
        store.embedding_problem_told = True
    hits += _recovered(store, " ".join(asked), filters, {h.item_id for h in hits})

    grouped: dict[str, list[ChunkHit]] = {}
    for hit in hits:
        grouped.setdefault(hit.item_id, []).append(hit)
    items = store.get_items(list(grouped))
    # Each item with the place of its first hit in the lookup's order (grouped keeps it).
    ranked = [
        (items[item_id], max(h.score for h in chunk_hits), chunk_hits, position)
        for position, (item_id, chunk_hits) in enumerate(grouped.items())
        if item_id in items
    ]
    ranked = [entry for entry in ranked if entry[1] >= min_score]
    ranked.sort(key=_sort_key(sort))
    chosen = ranked[:limit]
    found = [_result(store, item, score, chunk_hits, matched_cap) for item, score, chunk_hits, _ in chosen]
    if budget is not None:
        found = apply_budget(found, budget)
    languages = _languages(store, [item.id for item, _, _, _ in chosen])
    results = tuple(
        KnowledgeResult(
            item=replace(item, content=""),
            total_chunks=store.count_chunks(item.id),
            found=result,
            language=languages.get(item.id, ""),
        )
        for (item, _, _, _), result in zip(chosen, found, strict=True)
    )
    # The gloss is named only when a result is left to show for it (min_score may drop all).
    glossed = lookup.glossed if results else ""
    return KnowledgeSearch(shown_query, results, warning, rendered, rendered_language, glossed)


def _scope_languages(store: KnowledgeStore, filters: Filters) -> list[str]:
    """The main language of every indexed file the search covers (one entry per file)."""
    where, params = filters.sql()
    rows = store.db.execute(
        "SELECT d.language, COUNT(*) FROM documents d JOIN items i ON i.id = d.item_id"
        f" WHERE d.language != ''{' AND ' + where if where else ''} GROUP BY d.language",
        params,
    ).fetchall()
    return [language for language, count in rows for _ in range(min(int(count), MAX_LANGUAGE_WEIGHT))]


def _languages(store: KnowledgeStore, item_ids: list[str]) -> dict[str, str]:
    """The stored main language of the indexed files among `item_ids` (notes have none)."""
    if not item_ids:
        return {}
    marks = ",".join("?" * len(item_ids))
    rows = store.db.execute(
        f"SELECT item_id, language FROM documents WHERE item_id IN ({marks}) AND language != ''", item_ids
    ).fetchall()
    return {row[0]: row[1] for row in rows}


# -- phase 1 ----------------------------------------------------------------------------------
def _lexical(
    store: KnowledgeStore,
    asked: list[str],
    filters: Filters,
    limit: int,
    notes: LookupNotes,
    semantic: list[list[tuple[int, float]]],
) -> list[ChunkHit]:
    """The lookup's chunks for the phrasings, its keyword rankings fused with `semantic` (one
    vector ranking per phrasing, or none) as the document searches fuse theirs; `notes` is
    told the dictionary gloss searched beside a lone Chinese question (lookup.find_chunks)."""
    where, params = filters.sql()
    query = asked[0] if len(asked) == 1 else asked
    return store.store.find_chunks(
        query, limit, item_filter=where, filter_params=params, semantic=semantic, notes=notes
    )


def _semantic(store: KnowledgeStore, query: str, filters: Filters) -> list[tuple[int, float]]:
    """(rowid, cosine) of the chunks the filters let through whose vectors are nearest the
    query's, best first (vectors are unit length)."""
    import numpy as np

    assert store.embedder is not None
    where, params = filters.sql()
    if not where:  # the whole store: sqlite-vec's KNN index when there is one (search/semantic.py)
        nearest = store.store.whole_store_nearest(store.embedder, query, VECTOR_CANDIDATES)
        if nearest is not None:
            return nearest
    rows = store.db.execute(
        "SELECT v.chunk_rowid, v.vector FROM chunk_vectors v"
        " JOIN chunks c ON c.rowid = v.chunk_rowid JOIN items i ON i.id = c.item_id"
        f" WHERE v.model = ?{' AND ' + where if where else ''}",
        [store.embedder.model, *params],
    ).fetchall()
    if not rows:
        return []
    query_vector = np.frombuffer(store.embedder.query_vector(query), dtype="<f4")
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
    if matrix.shape[1] != query_vector.shape[0]:
        raise EmbeddingError(N_("stored vectors come from a model of another size; re-index"))
    similarity = matrix @ query_vector
    best = np.argsort(-similarity)[:VECTOR_CANDIDATES]
    return [(int(rows[i][0]), float(similarity[i])) for i in best]


def _recovered(store: KnowledgeStore, query: str, filters: Filters, found: set[str]) -> list[ChunkHit]:
    """Hits in items that have no chunks yet: chunk them now, or cut passages around the
    query's words when that fails."""
    words = _words(query)
    if not words:
        return []
    chunkless = store.chunkless_items()
    if not chunkless:
        return []
    where, params = filters.sql()
    present = " OR ".join("instr(lower(i.title || ' ' || i.content), ?) > 0" for _ in words)
    marks = ",".join("?" * len(chunkless))
    rows = store.db.execute(
        f"SELECT i.id, i.content FROM items i WHERE i.id IN ({marks})"
        f" AND ({present}){' AND ' + where if where else ''} LIMIT 20",
        [*chunkless, *words, *params],
    ).fetchall()
    hits: list[ChunkHit] = []
    for item_id, content in rows:
        if item_id in found:
            continue
        try:
            store.ensure_chunks(item_id)
            item_hits = store.store.find_chunks(
                build_match_query(query, store.segmenter),
                5,
                item_filter="i.id = ?",
                filter_params=[item_id],
            )
        except (sqlite3.Error, ValueError):
            item_hits = []
        hits.extend(item_hits or passages_around(item_id, content, words, store.chunking.max_size))
    return hits


def _words(query: str) -> list[str]:
    text = normalise_query(query).lower()
    words = [w for w in re.split(r"[^\w]+", CJK_RUN.sub(" ", text)) if len(w) > 1]
    return list(dict.fromkeys(words + CJK_RUN.findall(text)))[:10]


def passages_around(item_id: str, content: str, words: list[str], size: int) -> list[ChunkHit]:
    """Windows of `size` characters centred on the first occurrences of the words: the
    answer of last resort for an item whose chunks cannot be made."""
    lower = content.lower()
    hits: list[ChunkHit] = []
    taken: list[tuple[int, int]] = []
    for word in words:
        at = lower.find(word)
        if at < 0:
            continue
        start = max(0, at - size // 2)
        end = min(len(content), start + size)
        if any(s < end and start < e for s, e in taken):
            continue
        taken.append((start, end))
        hits.append(
            ChunkHit(
                rowid=-1,
                item_id=item_id,
                chunk_id="",
                chunk_index=-1,
                page=None,
                heading="",
                text=content[start:end],
                start=start,
                end=end,
                score=0.0,
            )
        )
    return hits[:5]


# -- phase 2 ----------------------------------------------------------------------------------
def _sort_key(sort: str) -> Any:
    if sort == "date":
        return lambda e: (_descending(e[0].updated_at), e[0].title.lower(), e[0].id)
    if sort == "title":
        return lambda e: (e[0].title.lower(), e[0].id)
    # Equal scores keep the lookup's order: a place seated into the top five takes the score
    # of the place after it (ranking.seat_plain), and sorting that tie by title could put it
    # back out.
    return lambda e: (-e[1], e[3], e[0].title.lower(), e[0].id)


def _descending(text: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in text)


def _result(
    store: KnowledgeStore,
    item: KnowledgeItem,
    score: float,
    chunk_hits: list[ChunkHit],
    matched_cap: int,
) -> SearchResult:
    matched = sorted(chunk_hits, key=lambda h: (-h.score, h.chunk_index))
    matched_indexes = {h.chunk_index for h in matched}
    wanted: list[int] = []  # neighbours of the best matched chunks, nearest the best first
    if matched[0].rowid >= 0:  # passages cut from content (rowid -1) have no neighbours
        for hit in matched[:matched_cap]:
            for index in (hit.chunk_index - 1, hit.chunk_index + 1):
                if index >= 0 and index not in matched_indexes and index not in wanted:
                    wanted.append(index)
    found = {h.chunk_index: h for h in store.store.chunks_at(item.id, wanted)}
    result = SearchResult.of(
        item.id,
        score,
        tuple(h.passage() for h in matched),
        tuple(found[i].passage() for i in wanted if i in found),
    )
    return replace(result, content=item.content)
