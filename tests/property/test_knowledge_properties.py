"""Seed 001's properties of the knowledge base, on a real store (hypothesis), and exact
round-trips of the two models."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from generalAgent.config.settings import load_settings
from generalAgent.knowledge import KnowledgeChunk, KnowledgeItem, KnowledgeStore, search_knowledge
from generalAgent.knowledge.search import KnowledgeResult

# Words a person would search for: Latin words, Chinese words, and numbers.
LATIN = st.from_regex(r"[a-z]{3,10}", fullmatch=True)
CHINESE = st.sampled_from(["营收", "增长", "客户", "满意度", "发布", "流程", "数据库", "故障"])
WORD = st.one_of(LATIN, CHINESE, st.from_regex(r"[1-9][0-9]{2,4}", fullmatch=True))
TEXT = st.lists(WORD, min_size=1, max_size=40).map(" ".join)
DOMAINS = st.sampled_from(["ops", "finance", "研发", "general"])
TAGS = st.lists(st.sampled_from(["a", "b", "c", "标签"]), max_size=3)
NONCE = st.from_regex(r"q[a-z]{9}", fullmatch=True)  # a word no other item has
RUNS = settings(max_examples=30, deadline=None)


@contextmanager
def fresh_store() -> Iterator[KnowledgeStore]:
    """An empty store per example, so no example sees another's items."""
    with tempfile.TemporaryDirectory() as tmp:
        config = load_settings(env_file=None, paths={"data_dir": Path(tmp)})
        with KnowledgeStore(config.paths.indexes_db, config.documents) as store:
            yield store


def found(store: KnowledgeStore, query: str, **filters: object) -> tuple[KnowledgeResult, ...]:
    return search_knowledge(store, query, max_results=20, **filters).results


@RUNS
@given(domain=DOMAINS, nonce=NONCE, content=TEXT, other=DOMAINS)
def test_domains_are_isolated(domain: str, nonce: str, content: str, other: str):
    with fresh_store() as store:
        store.add_knowledge(f"{nonce} note", content, domain=domain)
        store.add_knowledge(f"{nonce} other", content, domain=f"{domain}-x")
        results = found(store, nonce, domain=other)
        assert all(r.item.domain == other for r in results)
        assert len(results) == (1 if domain == other else 0)


@RUNS
@given(query=TEXT, domain=DOMAINS, category=st.sampled_from(["", "x", "y"]), tags=TAGS)
def test_filters_are_respected(query: str, domain: str, category: str, tags: list[str]):
    with fresh_store() as store:
        for d, c, t in ((domain, category, tags), ("general", "y", ["c"]), ("ops", "", [])):
            store.add_knowledge("filtered " + query[:40], query, domain=d, category=c, tags=t)
        results = found(store, query, domain=domain, category=category or None, tags=tags or None)
        assert results
        for result in results:
            item = result.item
            assert item.domain == domain
            assert not category or item.category == category
            assert not tags or set(item.tags) & set(tags)


@RUNS
@given(query=TEXT, extra=st.lists(TEXT, max_size=5))
def test_scores_never_increase(query: str, extra: list[str]):
    with fresh_store() as store:
        for n, text in enumerate([query, *extra]):
            store.add_knowledge(f"scored {n}", f"{text} {query[: len(query) // (n + 1)]}")
        scores = [r.found.score for r in found(store, query)]
        assert scores and scores == sorted(scores, reverse=True)


@RUNS
@given(
    title=st.lists(WORD, min_size=1, max_size=6).map(" ".join),
    nonce=NONCE,
    content=TEXT,
    domain=DOMAINS,
)
def test_an_added_item_is_found_by_its_title(title: str, nonce: str, content: str, domain: str):
    with fresh_store() as store:
        store.add_knowledge(title, content, domain=domain)  # a near namesake
        item = store.add_knowledge(f"{title} {nonce}", content, domain=domain)
        assert item.id in {r.item.id for r in found(store, f"{title} {nonce}")}


@RUNS
@given(old=NONCE, new=NONCE, filler=TEXT)
def test_an_updated_item_is_found_by_new_content_not_by_old(old: str, new: str, filler: str):
    assume(old != new)
    with fresh_store() as store:
        item = store.add_knowledge("updated item", f"{filler} {old}")
        store.update_knowledge(item.id, content=f"{filler} {new}")
        assert item.id not in {r.item.id for r in found(store, old)}
        [entry] = [r for r in found(store, new) if r.item.id == item.id]
        assert new in entry.found.content and old not in entry.found.content


@RUNS
@given(nonce=NONCE, content=TEXT)
def test_a_deleted_item_is_never_found(nonce: str, content: str):
    with fresh_store() as store:
        item = store.add_knowledge(f"deleted {nonce}", f"{content} {nonce}")
        kept = store.add_knowledge(f"kept {nonce}", f"{content} {nonce}")
        store.delete_knowledge(item.id)
        for query in (nonce, f"deleted {nonce}", content):
            ids = {r.item.id for r in found(store, query)}
            assert item.id not in ids and kept.id in ids


TEXTS = st.text(max_size=200)


@settings(max_examples=200, deadline=None)
@given(
    title=TEXTS,
    content=TEXTS,
    domain=TEXTS,
    category=TEXTS,
    tags=st.lists(TEXTS, max_size=5),
    source=TEXTS,
    source_path=st.none() | TEXTS,
    priority=st.integers(-10, 10),
)
def test_knowledge_item_round_trips(title, content, domain, category, tags, source, source_path, priority):
    item = KnowledgeItem(title, content, domain, category, tags, source, source_path, priority)
    assert KnowledgeItem.from_dict(item.to_dict()) == item
    assert KnowledgeItem.from_dict(item.to_dict()).to_dict() == item.to_dict()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    item_id=TEXTS,
    index=st.integers(0, 10_000),
    content=TEXTS,
    heading=TEXTS,
    start=st.integers(0, 10**6),
    end=st.integers(0, 10**6),
    metadata=st.dictionaries(st.text(max_size=10), JSON, max_size=4),
)
def test_knowledge_chunk_round_trips(item_id, index, content, heading, start, end, metadata):
    chunk = KnowledgeChunk(item_id, index, content, heading, start, end, metadata)
    assert KnowledgeChunk.from_dict(chunk.to_dict()) == chunk


@RUNS
@given(metadata=st.dictionaries(st.text(max_size=10), JSON, max_size=4), content=TEXT)
def test_chunks_round_trip_through_the_store(metadata: dict, content: str):
    with fresh_store() as store:
        item = store.add_knowledge("chunk holder", "placeholder text")
        chunk = KnowledgeChunk(item.id, 0, content, "Heading", 0, len(content), metadata)
        store.save_chunks(item.id, [chunk])
        assert store.get_chunk_by_id(chunk.id) == chunk
