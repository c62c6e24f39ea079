"""Content budgets for any result shape: bounded, complete when small, order-blind."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.config.settings import DocumentSettings
from generalAgent.search.budgets import ContentBudget, apply_budget, content_size
from generalAgent.search.results import Passage, SearchResult

BUDGET = ContentBudget.from_settings(DocumentSettings())


def chunks(sizes: list[int], first: int, fill: str) -> tuple[Passage, ...]:
    return tuple(
        Passage(chunk_id=f"c{first + i}", chunk_index=first + i, text=fill * k, start=0, end=k)
        for i, k in enumerate(sizes)
    )


def result(item_id: str, content: str, score: float, matched: tuple, context: tuple) -> SearchResult:
    return replace(SearchResult.of(item_id, score, matched, context), content=content)


@st.composite
def results(draw: st.DrawFn) -> list[SearchResult]:
    """Search results for items of 100..500,000 chars with any number and size of chunks."""
    made = []
    for n in range(draw(st.integers(min_value=0, max_value=12))):
        size = draw(st.integers(min_value=100, max_value=500_000))
        chunk_sizes = st.integers(min_value=1, max_value=min(size, 12_000))
        made.append(
            result(
                f"item{n}",
                "c" * size,
                draw(st.floats(min_value=0, max_value=100)),
                chunks(draw(st.lists(chunk_sizes, min_size=1, max_size=15)), 0, "m"),
                chunks(draw(st.lists(chunk_sizes, max_size=30)), 100, "x"),
            )
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
def test_every_result_and_the_call_stay_within_budget(raw: list[SearchResult], budget: ContentBudget):
    shaped = apply_budget(raw, budget)
    sizes = [content_size(r) for r in shaped]
    assert all(size <= budget.result_chars for size in sizes)
    assert sum(sizes) <= budget.call_chars
    for fitted in shaped:
        assert len(fitted.matched) <= budget.matched_chunks
        assert len(fitted.context) <= budget.context_chunks
        assert all(len(p.text) <= budget.chunk_chars for p in (*fitted.matched, *fitted.context))


@settings(max_examples=150, deadline=None)
@given(raw=results(), budget=st.one_of(st.just(BUDGET), budgets()))
def test_budgets_never_change_which_results_or_their_order(raw: list[SearchResult], budget: ContentBudget):
    shaped = apply_budget(raw, budget)
    assert [r.item_id for r in shaped] == [r.item_id for r in raw]
    assert [r.score for r in shaped] == [r.score for r in raw]
    for before, after in zip(raw, shaped, strict=True):
        kept = [p.chunk_index for p in after.matched]
        assert kept == [p.chunk_index for p in before.matched][: len(kept)]
        assert (after.place, after.chunk_index) == (before.place, before.chunk_index)


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(min_value=1, max_value=4_999),
    matched=st.lists(st.integers(min_value=1, max_value=1_500), min_size=1, max_size=5),
    context=st.lists(st.integers(min_value=1, max_value=1_500), max_size=3),
)
def test_items_under_5000_chars_come_back_unchanged(size: int, matched: list, context: list):
    raw = [result("small", "s" * size, 1.0, chunks(matched, 0, "m"), chunks(context, 9, "x"))]
    assert apply_budget(raw, BUDGET) == raw


def test_a_huge_item_with_huge_chunks_is_cut_and_says_how_to_read_on():
    raw = [
        result("book", "b" * 2_000_000, 3.0, chunks([10_000] * 15, 0, "m"), chunks([10_000] * 30, 100, "x"))
    ]
    [fitted] = apply_budget(raw, BUDGET)
    assert content_size(fitted) <= BUDGET.result_chars
    assert len(fitted.matched) == 5 and len(fitted.context) <= 3
    assert "5 of 15 matched chunks shown" in fitted.cut
    assert "get_knowledge_item(item_id='book', chunk_start=0" in fitted.cut
    assert len(raw[0].matched) == 15  # the caller's results are left alone


def test_a_chunk_left_out_for_size_takes_the_smaller_ones_after_it_along():
    """Found by the property above: a 1-character chunk fitted where a longer one before it
    did not, so the chunks shown were not the best ones."""
    raw = [result("a", "", 1.0, chunks([10, 5, 1], 0, "m"), ())]
    budget = replace(BUDGET, result_chars=12, whole_item_chars=0, context_chunks=0)
    shaped = apply_budget(raw, budget)[0]
    assert [p.chunk_index for p in shaped.matched] == [0]
    assert "2 matched chunk(s) left out" in shaped.cut
