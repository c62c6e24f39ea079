"""Ranking invariants (hypothesis): re-ranking only reorders and folds (one hit per place,
body text before listings), and ranking the rarer terms' candidates gives them the plain
OR query's scores and order."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generalAgent.search.lookup as lookup_module
from generalAgent.search.query import MatchQuery
from generalAgent.search.ranking import (
    BM25,
    PLAIN_SEATS,
    SEATED_COVERAGE,
    SEATED_TOP,
    Candidate,
    by_place,
    fuse,
    rerank,
)

ITEMS = st.sampled_from(["a", "b", "c", "d"])
PLACES = st.sampled_from([1, 2, 3, "Usage", ""])
CANDIDATES = st.lists(
    st.tuples(ITEMS, PLACES, st.floats(min_value=0.0, max_value=100.0, allow_nan=False), st.booleans()),
    max_size=60,
).map(
    lambda rows: [
        Candidate(rowid, item, score, (item, place), listing)
        for rowid, (item, place, score, listing) in enumerate(rows)
    ]
)


@given(candidates=CANDIDATES)
def test_every_candidate_is_a_hit_or_folded_into_one_and_nothing_else(candidates: list[Candidate]):
    ranked = rerank(candidates)
    seen = [entry.rowid for entry in ranked] + [rowid for entry in ranked for rowid in entry.folded]
    assert sorted(seen) == [c.rowid for c in candidates]


@given(candidates=CANDIDATES)
def test_one_hit_per_place_and_its_folded_chunks_are_of_that_place(candidates: list[Candidate]):
    by_rowid = {c.rowid: c for c in candidates}
    ranked = rerank(candidates)
    places = [by_rowid[entry.rowid].place for entry in ranked]
    assert len(places) == len(set(places))
    for entry in ranked:
        assert all(by_rowid[rowid].place == by_rowid[entry.rowid].place for rowid in entry.folded)


@given(candidates=CANDIDATES)
def test_body_text_is_never_below_a_listing_and_scores_fall_within_each(candidates: list[Candidate]):
    by_rowid = {c.rowid: c for c in candidates}
    ranked = rerank(candidates)
    listing = [by_rowid[entry.rowid].listing for entry in ranked]
    assert listing == sorted(listing)  # all False first
    for kind in (False, True):
        scores = [entry.score for entry, flag in zip(ranked, listing, strict=True) if flag is kind]
        assert scores == sorted(scores, reverse=True)


@given(candidates=CANDIDATES)
def test_within_a_document_the_order_of_bm25_stays(candidates: list[Candidate]):
    """Among the hits of one document that are alike (body or listing), higher bm25 first."""
    by_rowid = {c.rowid: c for c in candidates}
    ranked = [by_rowid[entry.rowid] for entry in rerank(candidates)]
    for item in {c.item_id for c in candidates}:
        for kind in (False, True):
            mine = [c.score for c in ranked if c.item_id == item and c.listing is kind]
            assert mine == sorted(mine, reverse=True)


VOCABULARY = ["alpha", "beta", "gamma", "delta", "common", "filler", "zeta"]


@pytest.fixture(scope="module")
def random_fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, text_jieba, title,"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute("CREATE TABLE chunks (rowid INTEGER PRIMARY KEY)")
    return conn


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12).map(" ".join),
            st.sampled_from(["", "alpha", "manual of beta"]),
        ),
        min_size=1,
        max_size=80,
    ),
    query=st.lists(st.sampled_from(VOCABULARY), min_size=2, max_size=5, unique=True),
    budget=st.integers(min_value=1, max_value=40),
    limit=st.integers(min_value=1, max_value=12),
)
def test_ranking_the_rarer_terms_candidates_gives_the_plain_or_best(
    random_fts: sqlite3.Connection,
    rows: list[tuple[str, str]],
    query: list[str],
    budget: int,
    limit: int,
):
    conn = random_fts
    conn.execute("DELETE FROM chunks_fts")
    conn.execute("DELETE FROM chunks")
    conn.executemany("INSERT INTO chunks_fts (text, text_jieba, title) VALUES (?, '', ?)", rows)
    conn.execute("INSERT INTO chunks (rowid) SELECT rowid FROM chunks_fts")
    terms = [f'{{text title}} : "{word}"' for word in query]
    plain = dict(
        conn.execute(
            f"SELECT rowid, -{BM25} FROM chunks_fts WHERE chunks_fts MATCH ?", (" OR ".join(terms),)
        ).fetchall()
    )
    match = MatchQuery(" AND ".join(terms), " OR ".join(terms), (), tuple(terms))
    original = lookup_module.CANDIDATE_BUDGET
    lookup_module.CANDIDATE_BUDGET = budget
    try:
        expressions = lookup_module._expressions(conn, match, None)
        pruned = lookup_module._scored(conn, expressions, BM25, limit, None, "", ())
        rare, _ = lookup_module._rare_and_common(conn, terms)
    finally:
        lookup_module.CANDIDATE_BUDGET = original
    # The candidates are the chunks holding a rare term: their best, with the plain scores.
    query_rare = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"
    holding = {rowid for (rowid,) in conn.execute(query_rare, (" OR ".join(rare),))} if rare else set()
    for rowid, score in pruned:
        assert rowid in holding
        assert score == pytest.approx(plain[rowid], rel=1e-9, abs=1e-9)
    best = sorted((plain[rowid] for rowid in holding), reverse=True)[:limit]
    assert [score for _, score in pruned] == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_when_every_term_is_past_the_budget_the_rarest_is_still_found(
    random_fts: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
):
    conn = random_fts
    conn.execute("DELETE FROM chunks_fts")
    conn.execute("DELETE FROM chunks")
    rows = [("common alpha",)] * 40 + [("common beta",)] * 12 + [("filler",)] * 10
    conn.executemany("INSERT INTO chunks_fts (text, text_jieba, title) VALUES (?, '', '')", rows)
    conn.execute("INSERT INTO chunks (rowid) SELECT rowid FROM chunks_fts")
    monkeypatch.setattr(lookup_module, "CANDIDATE_BUDGET", 3)
    monkeypatch.setattr(lookup_module, "MAX_COUNT_CAP", 64 * 4)
    terms = [f'{{text title}} : "{word}"' for word in ("common", "alpha", "beta")]
    rare, common = lookup_module._rare_and_common(conn, terms)
    assert rare == [terms[2]] and common == terms[:2]  # beta (12 chunks), not the first word


@given(
    tuned=CANDIDATES,
    plain_order=st.permutations(list(range(60))),
    cut=st.integers(min_value=0, max_value=60),
    weight=st.floats(min_value=0.1, max_value=1.0),
)
def test_fusion_keeps_every_chunk_once_one_hit_per_place_and_a_place_either_ranking_puts_first(
    tuned: list[Candidate], plain_order: list[int], cut: int, weight: float
):
    place_of = {c.rowid: c.place for c in tuned}
    plain = [(rowid, 1.0) for rowid in plain_order[:cut] if rowid in place_of]
    rankings = [rerank(tuned), by_place(plain, place_of)]
    fused = fuse(rankings, place_of, [1.0, weight])
    seen = [entry.rowid for entry in fused] + [rowid for entry in fused for rowid in entry.folded]
    assert sorted(seen) == sorted(place_of)  # nothing lost, nothing added, nothing twice
    places = [place_of[entry.rowid] for entry in fused]
    assert len(places) == len(set(places))
    assert all(place_of[rowid] == place_of[entry.rowid] for entry in fused for rowid in entry.folded)
    assert [entry.score for entry in fused] == sorted((entry.score for entry in fused), reverse=True)
    # The tuned ranking's first place can only be passed by places that both rankings hold.
    if rankings[0]:
        first = place_of[rankings[0][0].rowid]
        plain_places = {place_of[entry.rowid] for entry in rankings[1]}
        for entry in fused:
            if place_of[entry.rowid] == first:
                break
            assert place_of[entry.rowid] in plain_places


@settings(max_examples=150)
@given(
    rows=st.lists(st.tuples(ITEMS, PLACES), min_size=1, max_size=40),
    tuned_order=st.permutations(list(range(40))),
    plain_order=st.permutations(list(range(40))),
    vector_orders=st.lists(st.permutations(list(range(40))), min_size=1, max_size=3),
    cut=st.integers(min_value=1, max_value=40),
    weight=st.floats(min_value=0.5, max_value=1.0),
    scanned=st.booleans(),
)
def test_with_vectors_the_keyword_top_five_stays_in_the_top_five(
    rows: list[tuple[str, object]],
    tuned_order: list[int],
    plain_order: list[int],
    vector_orders: list[list[int]],
    cut: int,
    weight: float,
    scanned: bool,
):
    """Recall@5 with vectors is at least the keyword search's, by construction: whenever the
    keyword side covers the question (at least half of its words, or the scan's chunks),
    every place of its top five is in the top five with any vector rankings beside it."""
    candidates = [
        (rowid, item, place, place, rowid, f"text {rowid}") for rowid, (item, place) in enumerate(rows)
    ]

    def ranking(order: list[int]) -> list[tuple[int, float]]:
        kept = [rowid for rowid in order[:cut] if rowid < len(rows)]
        return [(rowid, float(len(kept) - n)) for n, rowid in enumerate(kept)]

    if scanned:
        runs = [lookup_module.scanned_run(ranking(tuned_order))]
    else:
        runs = [(ranking(tuned_order), ranking(plain_order), weight)]
    semantic = [ranking(order) for order in vector_orders]
    place_of = {row[0]: lookup_module._place(*row[:4]) for row in candidates}
    keyword = [place_of[entry.rowid] for entry, _ in lookup_module.fused_places(runs, candidates, 10)]
    both = [place_of[entry.rowid] for entry, _ in lookup_module.fused_places(runs, candidates, 10, semantic)]
    assert set(keyword[:5]) <= set(both[:5])


@settings(max_examples=150)
@given(
    rows=st.lists(st.tuples(ITEMS, PLACES), min_size=1, max_size=40),
    tuned_order=st.permutations(list(range(40))),
    plain_order=st.permutations(list(range(40))),
    vector_orders=st.lists(st.permutations(list(range(40))), min_size=1, max_size=3),
    cut=st.integers(min_value=1, max_value=40),
    weight=st.floats(min_value=0.01, max_value=1.0),
    glossed=st.floats(min_value=0.0, max_value=0.25),
)
def test_with_vectors_the_keyword_first_place_is_always_in_the_top_five(
    rows: list[tuple[str, object]],
    tuned_order: list[int],
    plain_order: list[int],
    vector_orders: list[list[int]],
    cut: int,
    weight: float,
    glossed: float,
):
    """Recall@1 of the keyword search never exceeds recall@5 with vectors, whatever share of
    the question's words the documents hold: a lone Chinese question over English pages (a
    phrasing mostly absent, weighed by its small share, with its dictionary gloss weighing
    less still) keeps the keyword side's first place among the first SEATED_TOP places
    however the vectors rank it."""
    candidates = [
        (rowid, item, place, place, rowid, f"text {rowid}") for rowid, (item, place) in enumerate(rows)
    ]

    def ranking(order: list[int]) -> list[tuple[int, float]]:
        kept = [rowid for rowid in order[:cut] if rowid < len(rows)]
        return [(rowid, float(len(kept) - n)) for n, rowid in enumerate(kept)]

    runs = [(ranking(tuned_order), ranking(plain_order), weight)]
    if glossed:
        runs.append((ranking(plain_order), ranking(tuned_order), glossed))
    # Reversed, so that the simplest orders hypothesis tries first disagree with the keywords.
    semantic = [ranking(order[::-1]) for order in vector_orders]
    place_of = {row[0]: lookup_module._place(*row[:4]) for row in candidates}
    keyword = [place_of[entry.rowid] for entry, _ in lookup_module.fused_places(runs, candidates, 10)]
    both = [place_of[entry.rowid] for entry, _ in lookup_module.fused_places(runs, candidates, 10, semantic)]
    assert set(keyword[:1]) <= set(both[:SEATED_TOP])


def _reference_plain_places(
    plain: list[tuple[int, float]], place_of: dict[int, tuple[str, object]], listings: set[int]
) -> list[tuple[str, object]]:
    """Plain BM25's places, written out independently of ranking.by_place: each place at
    the rank of its best chunk (the ranking's order), places headed by a listing after the
    others."""
    firsts: list[tuple[int, tuple[str, object]]] = []
    seen: set[tuple[str, object]] = set()
    for rowid, _ in plain:
        if place_of[rowid] not in seen:
            seen.add(place_of[rowid])
            firsts.append((rowid, place_of[rowid]))
    return [place for rowid, place in firsts if rowid not in listings] + [
        place for rowid, place in firsts if rowid in listings
    ]


@settings(max_examples=200)
@given(
    rows=st.lists(st.tuples(ITEMS, PLACES, st.booleans()), min_size=1, max_size=40),
    orders=st.lists(
        st.tuples(st.permutations(list(range(40))), st.permutations(list(range(40)))), min_size=1, max_size=3
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=40), min_size=3, max_size=3),
    weights=st.lists(st.floats(min_value=0.05, max_value=1.0), min_size=3, max_size=3),
    vector_orders=st.lists(st.permutations(list(range(40))), max_size=3),
)
def test_plain_bm25s_first_places_are_always_in_the_fused_top_five(
    rows: list[tuple[str, object, bool]],
    orders: list[tuple[list[int], list[int]]],
    cuts: list[int],
    weights: list[float],
    vector_orders: list[list[int]],
):
    """The floor under the fusion, by construction: whatever the tuned rankings, the other
    phrasings and (when the keywords cover the question) the vectors say, the first
    PLAIN_SEATS places of body text of plain BM25's ranking (of the phrasing that covers the
    scope best) are among the first SEATED_TOP places of the result."""
    toc = "Intro . . . . . 1\nUsage . . . . . 2"  # a listing (ranking.is_listing)
    candidates = [
        (rowid, item, place, place, rowid, toc if listing else f"text {rowid}")
        for rowid, (item, place, listing) in enumerate(rows)
    ]
    listings = {rowid for rowid, (_, _, listing) in enumerate(rows) if listing}
    place_of = {row[0]: lookup_module._place(*row[:4]) for row in candidates}

    def ranking(order: list[int], cut: int) -> list[tuple[int, float]]:
        kept = [rowid for rowid in order[:cut] if rowid < len(rows)]
        return [(rowid, float(len(kept) - n)) for n, rowid in enumerate(kept)]

    runs = [
        (ranking(tuned, cuts[n]), ranking(plain, 40 - cuts[n] // 2), weights[n])
        for n, (tuned, plain) in enumerate(orders)
    ]
    best = max(range(len(runs)), key=lambda n: (runs[n][2], -n))  # the first of the best-covered
    wanted = _reference_plain_places(runs[best][1], place_of, listings)[:PLAIN_SEATS]
    semantic = [ranking(order, 40) for order in vector_orders]
    found = [place_of[entry.rowid] for entry, _ in lookup_module.fused_places(runs, candidates, 10, semantic)]
    if not semantic or runs[best][2] >= SEATED_COVERAGE:
        assert set(wanted) <= set(found[:SEATED_TOP])
