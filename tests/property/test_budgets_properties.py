"""Content budgets for any result shape: bounded, complete when small, order-blind."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.config.settings import DocumentSettings
from generalAgent.search.budgets import ContentBudget, apply_budget, content_size

BUDGET = ContentBudget.from_settings(DocumentSettings())


def chunks(sizes: list[int], first: int, fill: str) -> list[dict]:
    return [{"chunk_index": first + i, "content": fill * k} for i, k in enumerate(sizes)]


@st.composite
def results(draw: st.DrawFn) -> list[dict]:
    """Search results for items of 100..500,000 chars with any number and size of chunks."""
    made = []
    for n in range(draw(st.integers(min_value=0, max_value=12))):
        size = draw(st.integers(min_value=100, max_value=500_000))
        chunk_sizes = st.integers(min_value=1, max_value=min(size, 12_000))
        made.append(
            {
                "item": {"id": f"item{n}", "title": f"T{n}", "content": "c" * size},
                "score": draw(st.floats(min_value=0, max_value=100)),
                "matched_chunks": chunks(draw(st.lists(chunk_sizes, min_size=1, max_size=15)), 0, "m"),
                "context_chunks": chunks(draw(st.lists(chunk_sizes, max_size=30)), 100, "x"),
            }
        )
    return made


@st.composite
def budgets(draw: st.DrawFn) -> ContentBudget:
    return ContentBudget(
        chunk_chars=draw(st.integers(min_value=10, max_value=3_000)),
        matched_chunks=draw(st.integers(min_value=1, max_value=8)),
        context_chunks=draw(st.integers(min_value=0, max_value=6)),
        result_chars=draw(st.integers(min_value=1_000, max_value=60_000)),
        call_chars=draw(st.integers(min_value=1_000, max_value=200_000)),
        preview_chars=draw(st.integers(min_value=100, max_value=5_000)),
        whole_item_chars=draw(st.integers(min_value=0, max_value=10_000)),
    )


@settings(max_examples=150, deadline=None)
@given(raw=results(), budget=st.one_of(st.just(BUDGET), budgets()))
def test_every_result_and_the_call_stay_within_budget(raw: list[dict], budget: ContentBudget):
    shaped = apply_budget(raw, budget)
    sizes = [content_size(r) for r in shaped]
    assert all(size <= budget.result_chars for size in sizes)
    assert sum(sizes) <= budget.call_chars
    for result in shaped:
        assert len(result["matched_chunks"]) <= budget.matched_chunks
        assert len(result["context_chunks"]) <= budget.context_chunks
        every = result["matched_chunks"] + result["context_chunks"]
        assert all(len(c["content"]) <= budget.chunk_chars for c in every)


@settings(max_examples=150, deadline=None)
@given(raw=results(), budget=st.one_of(st.just(BUDGET), budgets()))
def test_budgets_never_change_which_results_or_their_order(raw: list[dict], budget: ContentBudget):
    shaped = apply_budget(raw, budget)
    assert [r["item"]["id"] for r in shaped] == [r["item"]["id"] for r in raw]
    assert [r["score"] for r in shaped] == [r["score"] for r in raw]
    for before, after in zip(raw, shaped, strict=True):
        kept = [c["chunk_index"] for c in after["matched_chunks"]]
        assert kept == [c["chunk_index"] for c in before["matched_chunks"]][: len(kept)]


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(min_value=1, max_value=4_999),
    matched=st.lists(st.integers(min_value=1, max_value=1_500), min_size=1, max_size=5),
    context=st.lists(st.integers(min_value=1, max_value=1_500), max_size=3),
)
def test_items_under_5000_chars_come_back_unchanged(size: int, matched: list, context: list):
    raw = [
        {
            "item": {"id": "small", "content": "s" * size},
            "score": 1.0,
            "matched_chunks": chunks(matched, 0, "m"),
            "context_chunks": chunks(context, 9, "x"),
        }
    ]
    assert apply_budget(raw, BUDGET) == raw


def test_a_huge_item_with_huge_chunks_is_cut_and_says_how_to_read_on():
    raw = [
        {
            "item": {"id": "book", "content": "b" * 2_000_000},
            "score": 3.0,
            "matched_chunks": chunks([10_000] * 15, 0, "m"),
            "context_chunks": chunks([10_000] * 30, 100, "x"),
        }
    ]
    [result] = apply_budget(raw, BUDGET)
    assert content_size(result) <= BUDGET.result_chars
    assert len(result["matched_chunks"]) == 5 and len(result["context_chunks"]) <= 3
    assert "5 of 15 matched chunks shown" in result["cut"]
    assert "get_knowledge_item(item_id='book', chunk_start=0" in result["cut"]
    assert len(raw[0]["matched_chunks"]) == 15  # the caller's results are left alone


def test_a_chunk_left_out_for_size_takes_the_smaller_ones_after_it_along():
    """Found by the property above: a 1-character chunk fitted where a longer one before it
    did not, so the chunks shown were not the best ones."""
    raw = [
        {
            "item": {"id": "a", "title": "A", "content": ""},
            "score": 1.0,
            "matched_chunks": chunks([10, 5, 1], 0, "m"),
            "context_chunks": [],
        }
    ]
    budget = replace(BUDGET, result_chars=12, whole_item_chars=0, context_chunks=0)
    shaped = apply_budget(raw, budget)[0]
    assert [c["chunk_index"] for c in shaped["matched_chunks"]] == [0]
    assert "2 matched chunk(s) left out" in shaped["cut"]
