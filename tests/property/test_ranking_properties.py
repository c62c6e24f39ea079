"""Ranking invariant (hypothesis): ranking the rarer terms' candidates gives them the plain
OR query's scores and order."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generalAgent.documents.index as index_module
from generalAgent.documents.database import BM25
from generalAgent.documents.query import MatchQuery

VOCABULARY = ["alpha", "beta", "gamma", "delta", "common", "filler", "zeta"]


@pytest.fixture(scope="module")
def random_fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, text_jieba, title,"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
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
    conn.executemany("INSERT INTO chunks_fts (text, text_jieba, title) VALUES (?, '', ?)", rows)
    terms = [f'{{text title}} : "{word}"' for word in query]
    plain = dict(
        conn.execute(
            f"SELECT rowid, -{BM25} FROM chunks_fts WHERE chunks_fts MATCH ?", (" OR ".join(terms),)
        ).fetchall()
    )
    match = MatchQuery(" AND ".join(terms), " OR ".join(terms), (), tuple(terms))
    original = index_module.CANDIDATE_BUDGET
    index_module.CANDIDATE_BUDGET = budget
    try:
        pruned = index_module._scored(conn, match, limit, None, "", ())
        rare, _ = index_module._rare_and_common(conn, terms)
    finally:
        index_module.CANDIDATE_BUDGET = original
    # The candidates are the chunks holding a rare term: their best, with the plain scores.
    query_rare = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"
    holding = {rowid for (rowid,) in conn.execute(query_rare, (" OR ".join(rare),))} if rare else set()
    for rowid, score in pruned:
        assert rowid in holding
        assert score == pytest.approx(plain[rowid], rel=1e-9, abs=1e-9)
    best = sorted((plain[rowid] for rowid in holding), reverse=True)[:limit]
    assert [score for _, score in pruned] == pytest.approx(best, rel=1e-9, abs=1e-9)
