"""Ranking invariants (hypothesis): re-ranking only reorders, and ranking the rarer terms'
candidates gives them the plain OR query's scores and order."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generalAgent.search.lookup as lookup_module
from generalAgent.search.database import BM25
from generalAgent.search.query import MatchQuery
from generalAgent.search.ranking import Candidate, name_words, names_document, rerank, words

ITEMS = st.sampled_from(["a", "b", "c", "d"])
CANDIDATES = st.lists(
    st.tuples(ITEMS, st.floats(min_value=0.0, max_value=100.0, allow_nan=False)), max_size=60
).map(lambda rows: [Candidate(rowid, item, score) for rowid, (item, score) in enumerate(rows)])


@given(candidates=CANDIDATES, named=st.sets(ITEMS))
def test_rerank_reorders_the_candidates_and_nothing_else(candidates: list[Candidate], named: set[str]):
    ranked = rerank(candidates, named)
    assert sorted(rowid for rowid, _ in ranked) == [c.rowid for c in candidates]
    scores = [score for _, score in ranked]
    assert scores == sorted(scores, reverse=True)
    assert all(score >= c.score for (rowid, score), c in zip(sorted(ranked), candidates, strict=True))


@given(candidates=CANDIDATES, named=st.sets(ITEMS))
def test_within_a_document_the_order_of_bm25_stays(candidates: list[Candidate], named: set[str]):
    item_of = {c.rowid: c.item_id for c in candidates}
    bm25_of = {c.rowid: c.score for c in candidates}
    ranked = [rowid for rowid, _ in rerank(candidates, named)]
    for item in set(item_of.values()):
        mine = [bm25_of[rowid] for rowid in ranked if item_of[rowid] == item]
        assert mine == sorted(mine, reverse=True)


NAME_WORDS = st.lists(
    st.sampled_from(["tar", "find", "q3", "report", "员工手册", "ipc", "system"]), min_size=1
)
OTHER_WORDS = st.lists(st.sampled_from(["list", "files", "年假", "怎么", "the", "of"]), max_size=6)


@given(name=NAME_WORDS, before=OTHER_WORDS, after=OTHER_WORDS)
def test_a_name_written_into_a_query_is_recognised(name: list[str], before: list[str], after: list[str]):
    title = "_".join(name) + ".pdf"
    query = " ".join([*before, *name, *after])
    assert names_document(words(query), name_words(title))


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
        pruned = lookup_module._scored(conn, match, limit, None, "", ())
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
