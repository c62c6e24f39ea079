"""Finding chunks in indexes.db: ranked FTS5 lookups, windows of chunks, regex search.

The lookup: FTS5 ranks the chunks holding any of the query's terms by BM25 (on a large
index only the chunks holding one of the rarer terms are ranked, with the same scores, see
`_scored`); the best RERANK_POOL of them are re-ranked (ranking.py): by what their
documents add, one hit per page or section with the place's other chunks folded into it,
tables of contents and indexes after body text. That tuned order is then fused, place by
place, with the order of plain chunk BM25 (no title weight, no re-ranking, the query as a
bag of the index's own words: query.plain_query) by reciprocal rank fusion, plain BM25's
first places seated in the top five (ranking.seat_plain): on unseen documents the tuning
alone found the passage in the top 5 less often than plain BM25 (issue 24), and a fused
list keeps the places both rankings put first.
When no chunk holds any term, a plain substring scan for the Chinese runs of the query is
the last resort (see query.py for why); a regular expression is matched on the content
instead (regex_scan.py). Documents (one file) and knowledge (many items)
both search this way. A query may be several phrasings of one question (a list): each is
ranked so, and the rankings are fused by rank the same way. A lone Chinese query over
documents that are not Chinese is also searched in its English gloss from a dictionary
(query_translation.py), one more phrasing weighing less than the user's own words
(`glossed_query` says when); a lone English query over Chinese documents likewise in
Chinese words (english_gloss.py, `chinese_glossed_query` says when).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from generalAgent.display import Message, carrying
from generalAgent.search.connection import DatabaseError
from generalAgent.search.english_gloss import (
    PROBE_CAP,
    chinese_glossed_query,
    may_gloss_in_chinese,
    own_words_weighed,
)
from generalAgent.search.query import SCAN_SHARE, MatchQuery, build_match_query
from generalAgent.search.query_translation import (
    CHINESE_PROBE,
    DOCLIST_CAP,
    choose_gloss,
    gloss_candidates,
    gloss_match,
    term_expression,
)
from generalAgent.search.ranking import (
    BM25,
    GLOSS_WEIGHT,
    PLAIN_BM25,
    PLAIN_WEIGHT,
    SEATED_COVERAGE,
    SEMANTIC_WEIGHT,
    Candidate,
    Ranked,
    by_place,
    fuse,
    is_listing,
    keyword_seats,
    rerank,
    seat_plain,
)
from generalAgent.search.results import Passage
from generalAgent.search.segmentation import CJK_RUN, Segmenter

# Chunks FTS5 hands to the re-ranking: enough for ten places when several chunks share a
# page. On the tuning half of the documents set 20 and 30 leave a place short in the top
# 5 now and then; 40 to 200 give the same figures, and each ten more cost ~0.1 ms.
RERANK_POOL = 40
# Chunks an OR query may have FTS5 rank, at most, when some terms are rarer than that (see
# `_scored`): ranking costs ~1 µs per chunk, so this bounds the query's cost whatever the
# size of the index. On bench/retrieval_quality.py recall@5 is the unpruned one's from
# 1,000 up (500: -0.013, 250: -0.06).
CANDIDATE_BUDGET = 1_000
# When every term is in more chunks than the budget, they are counted again with caps this
# many times higher (8k, then 64k chunks) to find the rarest: ~1 ms a term at 1M chunks.
COUNT_GROWTH = 8
MAX_COUNT_CAP = 64 * (CANDIDATE_BUDGET + 1)


class QueryError(Exception):
    """A query that cannot run (e.g. an invalid regular expression); the message says why."""


def query_error(template: str, **fields: str) -> QueryError:
    """A QueryError in English whose sentence is kept as data (`said`) for the UI language."""
    return carrying(QueryError, Message(template, fields))


# What reading or writing indexes.db can raise, each with a message fit for the user.
INDEX_ERRORS: tuple[type[Exception], ...] = (DatabaseError, QueryError, sqlite3.Error)


@dataclass(frozen=True)
class ChunkHit:
    rowid: int
    item_id: str
    chunk_id: str
    chunk_index: int
    page: int | None
    heading: str
    text: str
    start: int
    end: int
    score: float
    folded: tuple[int, ...] = ()  # chunk_index of the place's other matching chunks
    label: str = ""  # the place the extractor named ("page 12", "slide 3", "sheet S, rows 2–21")
    ocr: bool = False  # the text was read from an image by OCR and may hold misreadings
    figure: bool = False  # the page is mostly a picture: view_page shows what the text cannot

    @property
    def place(self) -> str:
        return place_of(self.label, self.page, self.heading)

    def passage(self) -> Passage:
        """The hit as a search shows it (search/results.py): the one conversion of a hit."""
        return Passage(
            chunk_id=self.chunk_id,
            chunk_index=self.chunk_index,
            text=self.text,
            start=self.start,
            end=self.end,
            page=self.page,
            heading=self.heading,
            place=self.place,
            ocr=self.ocr,
            figure=self.figure,
            score=self.score,
        )


def place_of(label: str, page: int | None, heading: str) -> str:
    """Where a chunk is, as a reader finds it to cite it: "page 12", "slide 3",
    "sheet Sales, rows 2–21", "§ Installing" (DOCX, Markdown), or "" (plain text)."""
    if label:
        return label
    if page is not None:
        return f"page {page}"
    return f"§ {heading}" if heading else ""


# Named as ChunkHit's fields, so a row becomes a hit by name.
_HIT_COLUMNS = (
    "c.rowid AS rowid, c.item_id AS item_id, c.id AS chunk_id, c.chunk_index AS chunk_index,"
    " c.page AS page, c.heading AS heading, f.text AS text, c.start_position AS start,"
    " c.end_position AS end, c.metadata AS metadata"
)


def find_chunks(
    conn: sqlite3.Connection,
    query: str | MatchQuery | Sequence[str],
    segmenter: Segmenter,
    limit: int,
    *,
    rowid_range: tuple[int, int] | None = None,
    item_filter: str = "",
    filter_params: Sequence[Any] = (),
    semantic: Sequence[Sequence[tuple[int, float]]] = (),
    notes: LookupNotes | None = None,
) -> list[ChunkHit]:
    """The `limit` best chunks for `query`, best first: one string, or several phrasings of
    one question (e.g. the user's words and their English rendering), fused by rank.
    `notes`, when given, is told what the lookup added to the query (its dictionary gloss).

    `rowid_range` confines the search to one item's chunks (they are consecutive);
    `item_filter` is a SQL condition on `items i` (e.g. "i.domain = ?") with its params.
    `semantic`: rankings of chunks by their vectors' nearness to the query (rowid, cosine),
    best first, one per phrasing, fused with the rest like another ranking (semantic.py);
    the keyword search's own top five keeps its seats among them when the query's words
    are in the searched chunks, its first place alone when they are mostly absent
    (ranking.keyword_seats), and a lone phrasing then weighs by
    the share of its words found there, as phrasings of a list do.
    """
    if limit <= 0:
        return []
    matches = [
        q if isinstance(q, MatchQuery) else build_match_query(q, segmenter)
        for q in ([query] if isinstance(query, str | MatchQuery) else query)
    ]
    matches = [m for m in matches if not m.empty]
    pool = max(limit, RERANK_POOL)
    glossing = may_gloss(query)
    to_chinese = may_gloss_in_chinese(query)  # the other direction (english_gloss.py)
    runs: list[tuple[list[tuple[int, float]], list[tuple[int, float]], float]] = []
    for match in matches:
        expressions = _expressions(conn, match, rowid_range)
        tuned = _scored(conn, expressions, BM25, pool, rowid_range, item_filter, filter_params)
        if tuned:
            if match.plain is not match:
                expressions = _expressions(conn, match.plain, rowid_range)
            plain = _scored(conn, expressions, PLAIN_BM25, pool, rowid_range, item_filter, filter_params)
            weight = (
                _coverage(conn, match, rowid_range, item_filter, filter_params)
                if len(matches) > 1 or any(semantic) or glossing or to_chinese
                else 1.0
            )
            runs.append((tuned, plain, weight))
    substrings = list(dict.fromkeys(s for m in matches for s in m.substrings))
    scanned: list[tuple[int, float]] = []
    if not runs and substrings:
        floor = min(m.scan_floor for m in matches if m.substrings)
        wanted = pool if any(semantic) else limit
        scanned = _scan(conn, substrings, floor, wanted, rowid_range, item_filter, filter_params)
        if not any(semantic) and (scanned or not glossing):
            return load_hits(conn, scanned)
        if scanned:
            runs.append(scanned_run(scanned))
    glossed = (
        glossed_query(
            query,
            runs,
            scanned,
            segmenter,
            lambda probe: _coverage(conn, probe, rowid_range, item_filter, filter_params),
            lambda terms: _holding(conn, terms, DOCLIST_CAP, rowid_range, item_filter, filter_params),
        )
        if glossing
        else None
    )
    gloss_weight = GLOSS_WEIGHT
    if glossed is None and to_chinese:
        chinese = chinese_glossed_query(
            query,
            segmenter,
            lambda terms: _present_each(conn, terms, rowid_range, item_filter, filter_params),
            lambda probe: _capped_count(conn, probe, rowid_range, item_filter, filter_params),
        )
        if chinese is not None:
            own_words_weighed(runs, chinese.english_prose)
            gloss_weight = chinese.weight
            if chinese.match is not None:
                share = _coverage(conn, chinese.match, rowid_range, item_filter, filter_params)
                glossed = Glossed(tuple(chinese.keywords.split()), chinese.match, share)
    if glossed is not None:
        expressions = _expressions(conn, glossed.match, rowid_range)
        tuned = _scored(conn, expressions, BM25, pool, rowid_range, item_filter, filter_params)
        if tuned:
            plain = _scored(conn, expressions, PLAIN_BM25, pool, rowid_range, item_filter, filter_params)
            runs.append((tuned, plain, gloss_weight * glossed.share))
            if notes is not None:
                notes.glossed, notes.glossed_terms = glossed.english, glossed.terms
    if runs or any(semantic):
        return _ranked_hits(conn, runs, limit, semantic)
    return []


@dataclass(slots=True)
class LookupNotes:
    """What a lookup tells its caller beside the hits, filled in by `find_chunks` (either
    backend) when the caller passes one: the one search's own record, so every other caller
    keeps its plain list of hits."""

    # The English keywords of the dictionary gloss searched beside a lone Chinese question
    # (query_translation.py), when they matched something; "" when none was searched.
    glossed: str = ""
    # The same, one word or phrase each ("command line" is one): () when none was searched.
    glossed_terms: tuple[str, ...] = ()


def lone_query(query: object) -> str | None:
    """The question when `query` is one phrasing of it: a string, or a list of one string
    (the search tools and the command line send their phrasings as a list); None for a
    list of several, which already holds the model's own phrasings."""
    if isinstance(query, str):
        return query
    if isinstance(query, Sequence) and len(query) == 1 and isinstance(query[0], str):
        return query[0]
    return None


def may_gloss(query: object) -> bool:
    """True for a lone query with Chinese in it: the one kind a dictionary phrasing may be
    added to (query_translation.py)."""
    lone = lone_query(query)
    return lone is not None and CJK_RUN.search(lone) is not None


@dataclass(frozen=True)
class Glossed:
    """The dictionary phrasing a lookup searches beside a lone Chinese question."""

    terms: tuple[str, ...]  # its words and phrases
    match: MatchQuery  # as searched: each word or phrase one term
    share: float  # of the question's glossed words, those with a translation in the scope

    @property
    def english(self) -> str:
        """Its words, as the user is told them."""
        return " ".join(self.terms)


def glossed_query(
    query: str | MatchQuery | Sequence[str],
    runs: Sequence[tuple[Any, Any, float]],
    scanned: Sequence[tuple[int, float]],
    segmenter: Segmenter,
    coverage: Callable[[MatchQuery], float],
    holding: Callable[[Sequence[str]], Sequence[frozenset[int]]],
) -> Glossed | None:
    """The English phrasing to search beside a lone Chinese `query` over documents that are
    not Chinese, or None. Not when its words are mostly in the searched chunks (its run's
    share at least SEATED_COVERAGE); not when the scan of the last resort found its
    characters; not when any searched chunk holds Chinese's commonest word (`coverage` of
    it, the backend's share of a phrasing's terms found in the scope): Chinese documents
    that write the question's words otherwise ("排成多栏" of a page on "分栏") are found by
    their own words, and an English gloss there only pulled stray English passages up
    (unseen zh dev: 0.909 -> 0.864); not when no candidate of the dictionary is in the
    scope. The candidates (query_translation.gloss_candidates) are asked of the scope in
    one statement, `holding` (each term expression -> the searched chunks holding it, up to
    DOCLIST_CAP), and chosen by it (query_translation.choose_gloss). Both backends search
    the phrasing as one more, weighted GLOSS_WEIGHT times the share of the question's words
    it translates. The dictionary's words are cut as the index is: by jieba, or without it
    when the segmenter does not use it (USE_JIEBA=false)."""
    lone = lone_query(query)
    if lone is None or scanned:
        return None
    if runs and runs[0][2] >= SEATED_COVERAGE:
        return None
    if coverage(build_match_query(CHINESE_PROBE, segmenter)) > 0:
        return None
    candidates = gloss_candidates(lone, use_jieba=segmenter.name == "jieba")
    asked = list(dict.fromkeys(c for group in candidates for c in group))
    if not asked:
        return None
    held = holding([term_expression(c) for c in asked])
    chosen, share = choose_gloss(candidates, dict(zip(asked, held, strict=True)))
    if not chosen:
        return None
    return Glossed(tuple(chosen), gloss_match(chosen), share)


def _holding(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    cap: int,
    rowid_range: tuple[int, int] | None,
    item_filter: str = "",
    params: Sequence[Any] = (),
) -> list[frozenset[int]]:
    """The searched chunks holding each term, up to `cap` of them: one statement, one
    doclist read per term (the gloss's candidates, query_translation.choose_gloss)."""
    if not terms:
        return []
    joins, where, values = _scope(rowid_range, item_filter, params)
    union = " UNION ALL ".join(
        f"SELECT {n}, rowid FROM (SELECT chunks_fts.rowid AS rowid FROM chunks_fts{joins}"
        f" WHERE chunks_fts MATCH ?{where} LIMIT ?)"
        for n in range(len(terms))
    )
    found: list[set[int]] = [set() for _ in terms]
    for n, rowid in conn.execute(union, [v for term in terms for v in (term, *values, cap)]):
        found[n].add(rowid)
    return [frozenset(rows) for rows in found]


def scanned_run(
    scanned: Sequence[tuple[int, float]],
) -> tuple[list[tuple[int, float]], list[tuple[int, float]], float]:
    """The scan of the last resort's chunks as the keyword side of a search with vectors
    (both its rankings, weighted SCAN_SHARE), so the vectors fuse with it as with FTS5's.
    Without this the vectors alone answered a question no FTS5 term matched, and the chunk
    the scan finds was lost ("怎么把行距设成两倍" of a page on "双倍 … 行间距": 3rd with
    keywords alone, not in the top 10 with vectors; unseen zh dev recall@5 0.909 -> 0.864).
    The scan only finds chunks holding SCAN_SHARE of the query's characters, the same
    language's words, so its places keep their seats (ranking.keyword_seats)."""
    return (list(scanned), list(scanned), SCAN_SHARE)


def _coverage(
    conn: sqlite3.Connection,
    match: MatchQuery,
    rowid_range: tuple[int, int] | None,
    item_filter: str = "",
    params: Sequence[Any] = (),
) -> float:
    """The share of a phrasing's terms that occur in the searched chunks (`rowid_range`, and
    the items `item_filter` keeps): the weight of its rankings among several. A Chinese
    phrasing asked of an English manual matches only the odd command name in it, and at full
    weight that stray ranking pulled the English phrasing's passages down (tuning half of the
    bilingual set: MRR@10 0.688 for the list against 0.732 for the English phrasing alone).
    Counted in the scope, not the whole index: an English folder searched in an index that
    also holds Chinese documents would otherwise find every Chinese word "present"."""
    if not match.terms:
        return 1.0
    present = _present_each(conn, match.terms, rowid_range, item_filter, params)
    return sum(present) / len(match.terms)


def _present_each(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    rowid_range: tuple[int, int] | None,
    item_filter: str = "",
    params: Sequence[Any] = (),
) -> list[bool]:
    """Whether any searched chunk holds each term, in one query (`_coverage` is their share)."""
    if not item_filter:
        return [count > 0 for count in _counts(conn, terms, 1, rowid_range)]
    joins, where, values = _scope(rowid_range, item_filter, params)
    exists = ", ".join(
        f"EXISTS (SELECT 1 FROM chunks_fts{joins} WHERE chunks_fts MATCH ?{where})" for _ in terms
    )
    return [
        bool(v) for v in conn.execute(f"SELECT {exists}", [v for t in terms for v in (t, *values)]).fetchone()
    ]


def _capped_count(
    conn: sqlite3.Connection,
    match: MatchQuery,
    rowid_range: tuple[int, int] | None,
    item_filter: str = "",
    params: Sequence[Any] = (),
) -> int:
    """The searched chunks holding a one-word phrasing, counted up to PROBE_CAP (english_gloss.py's
    probes of the scope's language)."""
    joins, where, values = _scope(rowid_range, item_filter, params)
    sql = (
        f"SELECT COUNT(*) FROM (SELECT 1 FROM chunks_fts{joins}"
        f" WHERE chunks_fts MATCH ?{where} LIMIT {PROBE_CAP})"
    )
    return int(conn.execute(sql, [match.all_terms, *values]).fetchone()[0]) if match.all_terms else 0


def _expressions(
    conn: sqlite3.Connection, match: MatchQuery, rowid_range: tuple[int, int] | None
) -> tuple[str, ...]:
    """The MATCH expressions whose best chunks, merged, are the query's best chunks holding
    any term (`_scored` merges them); () when no term is in the index.

    FTS5 computes bm25 for every chunk holding any term of an OR: a word in thousands of
    chunks ("file", "option", "文件") makes that thousands of computations, although such a
    word adds next to nothing to a chunk's score (its inverse document frequency is near
    zero). So on a large index the candidates are the chunks holding one of the rarest terms
    (see `_rare_and_common`), and their best are found with the plain OR's scores in two
    queries: "(rare) AND (common)" scores the chunks holding both kinds by every term;
    "(rare)" scores the others, which hold no common term, by all they hold. A chunk holding
    both appears in the second too, scored too low, so each keeps its higher score; and a
    chunk the second ranks above one without common terms truly is above it, so none of the
    best is missed. (Writing it as one query, "(rare) AND (rare OR common)", would count the
    rare terms twice: FTS5 scores every phrase of the expression.)
    """
    if not match.any_terms:
        return (match.all_terms,)
    rare, common = _rare_and_common(conn, match.terms, rowid_range)
    if not rare:
        return ()
    if not common:
        return (" OR ".join(rare),)
    return (f"({' OR '.join(rare)}) AND ({' OR '.join(common)})", " OR ".join(rare))


def _scored(
    conn: sqlite3.Connection,
    expressions: Sequence[str],
    score: str,
    limit: int,
    rowid_range: tuple[int, int] | None,
    item_filter: str,
    params: Sequence[Any],
) -> list[tuple[int, float]]:
    """(rowid, `score`) of the `limit` best chunks of the `expressions`, best first."""
    if len(expressions) == 1:
        return _match(conn, expressions[0], score, limit, rowid_range, item_filter, params)
    best: dict[int, float] = {}
    for expression in expressions:
        for rowid, value in _match(conn, expression, score, limit, rowid_range, item_filter, params):
            best[rowid] = max(value, best.get(rowid, value))
    return sorted(best.items(), key=lambda pair: -pair[1])[:limit]


def _rare_and_common(
    conn: sqlite3.Connection, terms: Sequence[str], rowid_range: tuple[int, int] | None = None
) -> tuple[list[str], list[str]]:
    """The terms found in the index, split into the rarest (rarest first, while the chunks
    holding them fit CANDIDATE_BUDGET; at least one) and the rest, each in query order.

    Counting stops at the budget, so telling rare from common costs little; an index (or,
    with `rowid_range`, a document) with no more chunks than the budget is not counted at
    all (every term counts as rare): so a search in one document of a few hundred pages
    ranks every chunk holding a term, and one in a 200 MB log does not. When
    every term is past the budget, the counts alone no longer say which is rarest, and the
    first one in the query would be taken, however common ("run" in 140,000 chunks before
    "limit" in 50,000: 200 ms at 1M chunks); so those are counted again with a cap
    COUNT_GROWTH times higher, up to MAX_COUNT_CAP.
    """
    if rowid_range is not None:
        chunks = rowid_range[1] - rowid_range[0] + 1
    else:
        chunks = conn.execute("SELECT MAX(rowid) FROM chunks").fetchone()[0] or 0
    return split_rare(terms, chunks, lambda wanted, cap: _counts(conn, wanted, cap, rowid_range))


def split_rare(
    terms: Sequence[str], chunks: int, count: Callable[[Sequence[str], int], list[int]]
) -> tuple[list[str], list[str]]:
    """`_rare_and_common` for any backend: `chunks` the size of the scope, `count(terms,
    cap)` the chunks holding each term, counted up to `cap`."""
    if chunks <= CANDIDATE_BUDGET:
        return list(terms), []  # too few chunks to be worth counting
    cap = CANDIDATE_BUDGET + 1
    counts = count(terms, cap)
    kept = [n for n, found in enumerate(counts) if found > 0]
    while kept and cap < MAX_COUNT_CAP and all(counts[n] >= cap for n in kept):
        cap *= COUNT_GROWTH
        for n, found in zip(kept, count([terms[n] for n in kept], cap), strict=True):
            counts[n] = found
    rare: set[int] = set()
    total = 0
    for n in sorted(kept, key=lambda n: counts[n]):
        if rare and total + counts[n] > CANDIDATE_BUDGET:
            break
        rare.add(n)
        total += counts[n]
    return [terms[n] for n in kept if n in rare], [terms[n] for n in kept if n not in rare]


def _counts(
    conn: sqlite3.Connection, terms: Sequence[str], cap: int, rowid_range: tuple[int, int] | None = None
) -> list[int]:
    """Chunks holding each term (within `rowid_range`), counted up to `cap` (the count stops there)."""
    within = " AND rowid BETWEEN ? AND ?" if rowid_range is not None else ""
    counted = ", ".join(
        f"(SELECT COUNT(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ?{within} LIMIT ?))"
        for _ in terms
    )
    values = [v for term in terms for v in (term, *(rowid_range or ()), cap)]
    return list(conn.execute(f"SELECT {counted}", values).fetchone())


def _ranked_hits(
    conn: sqlite3.Connection,
    runs: Sequence[tuple[Sequence[tuple[int, float]], Sequence[tuple[int, float]], float]],
    limit: int,
    semantic: Sequence[Sequence[tuple[int, float]]] = (),
) -> list[ChunkHit]:
    """The `limit` best places among the scored chunks, as hits: per phrasing (with its
    weight), the tuned ranking (ranking.py's re-ranking of the weighted bm25) and plain
    BM25's, all fused by rank (`ranking.fuse`); a hit's score is its fused score.

    The candidates are read with only what ranking needs; the hits returned are then
    loaded whole (a few rows instead of the pool).
    """
    wanted = list(
        dict.fromkeys(
            [rowid for run in runs for scored in run[:2] for rowid, _ in scored]
            + [rowid for ranking in semantic for rowid, _ in ranking]
        )
    )
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(
        "SELECT c.rowid, c.item_id, c.page, c.heading, c.chunk_index, f.text FROM chunks c"
        f" JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.rowid IN ({marks})",
        wanted,
    ).fetchall()
    ranked = fused_places(runs, rows, limit, semantic)
    hits = {hit.rowid: hit for hit in load_hits(conn, [(entry.rowid, entry.score) for entry, _ in ranked])}
    return [
        replace(hits[entry.rowid], folded=folded)
        for entry, folded in ranked
        if entry.rowid in hits  # a row deleted by another writer in between is left out
    ]


def fused_places(
    runs: Sequence[tuple[Sequence[tuple[int, float]], Sequence[tuple[int, float]], float]],
    rows: Sequence[Sequence[Any]],
    limit: int,
    semantic: Sequence[Sequence[tuple[int, float]]] = (),
) -> list[tuple[Ranked, tuple[int, ...]]]:
    """`_ranked_hits`' order for any backend: the `limit` best places, each with the
    chunk_index of its folded chunks; `rows` are the candidates' (rowid, item_id, page,
    heading, chunk_index, text)."""
    found = {row[0]: row for row in rows}
    place_of = {rowid: _place(*row[:4]) for rowid, row in found.items()}
    listings = {rowid for rowid, row in found.items() if is_listing(row[5])}
    rankings: list[list[Ranked]] = []
    weights: list[float] = []
    seated: list[Ranked] = []  # plain BM25 of the phrasing that covers the index best
    best_weight = -1.0
    for tuned, plain, weight in runs:
        candidates = [
            Candidate(rowid, found[rowid][1], score, place_of[rowid], rowid in listings)
            for rowid, score in tuned
            if rowid in found
        ]
        plain_places = by_place(plain, place_of, listings)
        rankings += [rerank(candidates), plain_places]
        weights += [weight, weight * PLAIN_WEIGHT]
        if weight > best_weight:
            seated, best_weight = plain_places, weight
    keyword = seat_plain(fuse(rankings, place_of, weights), seated, place_of)
    if not any(semantic):
        ranked = keyword[:limit]
    else:
        for ranking in semantic:
            rankings.append(by_place(ranking, place_of, listings))
            weights.append(SEMANTIC_WEIGHT)
        both = fuse(rankings, place_of, weights)
        ranked = seat_plain(both, keyword, place_of, keyword_seats(best_weight))[:limit]
    return [(entry, tuple(sorted(found[rowid][4] for rowid in entry.folded))) for entry in ranked]


def _place(rowid: int, item_id: str, page: int | None, heading: str) -> tuple[str, object]:
    """The page (PDF page, slide, sheet), else the section, else the chunk itself."""
    if page is not None:
        return (item_id, page)
    if heading:
        return (item_id, heading)
    return (item_id, -rowid)


def _scope(
    rowid_range: tuple[int, int] | None, item_filter: str, params: Sequence[Any]
) -> tuple[str, str, list[Any]]:
    joins, where, values = "", list[str](), list[Any]()
    if rowid_range is not None:
        where.append("chunks_fts.rowid BETWEEN ? AND ?")
        values.extend(rowid_range)
    if item_filter:
        joins = " JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN items i ON i.id = c.item_id"
        where.append(f"({item_filter})")
        values.extend(params)
    return joins, "".join(f" AND {w}" for w in where), values


def _match(
    conn: sqlite3.Connection,
    expression: str,
    score: str,
    limit: int,
    rowid_range: tuple[int, int] | None,
    item_filter: str,
    params: Sequence[Any],
) -> list[tuple[int, float]]:
    joins, where, values = _scope(rowid_range, item_filter, params)
    sql = (
        f"SELECT chunks_fts.rowid, -{score} AS score FROM chunks_fts{joins}"
        f" WHERE chunks_fts MATCH ?{where} ORDER BY score DESC LIMIT ?"
    )
    try:
        return conn.execute(sql, [expression, *values, limit]).fetchall()
    except sqlite3.OperationalError as exc:
        # The query builder quotes every word, so this is a bug (or a locked or damaged
        # database), not bad input: callers turn it into a message instead of a traceback.
        raise QueryError(f"the search could not run ({exc})") from None


def _scan(
    conn: sqlite3.Connection,
    substrings: Sequence[str],
    floor: int,
    limit: int,
    rowid_range: tuple[int, int] | None,
    item_filter: str,
    params: Sequence[Any],
) -> list[tuple[int, float]]:
    """The chunks holding the most of `substrings` (each counting its length), at least
    `floor`, best first (query.py's `scan_substrings` says why)."""
    joins, where, values = _scope(rowid_range, item_filter, params)
    present = " + ".join("(instr(chunks_fts.text, ?) > 0) * ?" for _ in substrings)
    sql = (
        f"SELECT chunks_fts.rowid, {present} AS found FROM chunks_fts{joins}"
        f" WHERE found >= ?{where} ORDER BY found DESC, chunks_fts.rowid LIMIT ?"
    )
    weighted = [value for s in substrings for value in (s, len(s))]
    return conn.execute(sql, [*weighted, max(1, floor), *values, limit]).fetchall()


def load_hits(conn: sqlite3.Connection, scored: Sequence[tuple[int, float]]) -> list[ChunkHit]:
    if not scored:
        return []
    marks = ",".join("?" * len(scored))
    rows = conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
        f" WHERE c.rowid IN ({marks})",
        [rowid for rowid, _ in scored],
    ).fetchall()
    by_rowid = {row["rowid"]: row for row in rows}
    return [hit_of_row(by_rowid[rowid], float(score)) for rowid, score in scored if rowid in by_rowid]


def hit_of_row(row: sqlite3.Row | dict[str, Any], score: float) -> ChunkHit:
    """A hit from a row of the `_HIT_COLUMNS` (by name, in any backend)."""
    fields = dict(row)
    facts = _facts(fields.pop("metadata"))
    return ChunkHit(**fields, score=score, **facts)


def _facts(metadata: str | None) -> dict[str, Any]:
    """Place and OCR mark stored with the chunk ({} for chunks indexed before they were)."""
    if not metadata or metadata == "{}":
        return {}
    try:
        stored = json.loads(metadata)
    except ValueError:
        return {}
    if not isinstance(stored, dict):
        return {}
    place = stored.get("place")
    return {
        "label": place if isinstance(place, str) else "",
        "ocr": stored.get("ocr") is True,
        "figure": stored.get("figure") is True,
    }


def chunk_window(conn: sqlite3.Connection, item_id: str, first: int, last: int) -> list[ChunkHit]:
    """The item's chunks numbered first..last (clipped to those that exist), in order."""
    rows = conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
        " WHERE c.item_id = ? AND c.chunk_index BETWEEN ? AND ? ORDER BY c.chunk_index",
        (item_id, first, last),
    ).fetchall()
    return [hit_of_row(row, 0.0) for row in rows]


def chunks_at(conn: sqlite3.Connection, item_id: str, indexes: Sequence[int]) -> list[ChunkHit]:
    """The item's chunks with these chunk_index values (those that exist), in order."""
    if not indexes:
        return []
    marks = ",".join("?" * len(indexes))
    rows = conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
        f" WHERE c.item_id = ? AND c.chunk_index IN ({marks}) ORDER BY c.chunk_index",
        (item_id, *indexes),
    ).fetchall()
    return [hit_of_row(row, 0.0) for row in rows]


def passages_at(conn: sqlite3.Connection, item_id: str, indexes: Sequence[int]) -> list[Passage]:
    """The item's chunks with these chunk_index values (those that exist), in order, as a
    search shows them. Built straight from plain rows: a context chunk made into a named
    row, a ChunkHit and then its Passage cost search_file more than reading it."""
    if not indexes:
        return []
    marks = ",".join("?" * len(indexes))
    cursor = conn.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        "SELECT c.id, c.chunk_index, f.text, c.start_position, c.end_position, c.page, c.heading,"
        " c.metadata FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
        f" WHERE c.item_id = ? AND c.chunk_index IN ({marks}) ORDER BY c.chunk_index",
        (item_id, *indexes),
    ).fetchall()
    passages = []
    for chunk_id, chunk_index, text, start, end, page, heading, metadata in rows:
        facts = _facts(metadata)
        passages.append(
            Passage(
                chunk_id=chunk_id,
                chunk_index=chunk_index,
                text=text,
                start=start,
                end=end,
                page=page,
                heading=heading,
                place=place_of(facts.get("label", ""), page, heading),
                ocr=facts.get("ocr", False),
                figure=facts.get("figure", False),
            )
        )
    return passages
