"""Two-phase knowledge search: grouping, context, filters, sorting, budgets, lazy recovery."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from generalAgent.config.settings import DocumentSettings, Settings
from generalAgent.documents.index import SearchIndex
from generalAgent.knowledge import KnowledgeStore, search_knowledge
from generalAgent.knowledge.render import render_search
from generalAgent.knowledge.search import passages_around
from generalAgent.search.budgets import ContentBudget, content_size

BUDGET = ContentBudget.from_settings(DocumentSettings())
# Files are indexed into indexes.db only (the PostgreSQL store holds the knowledge base's
# notes; docs/deployment.md): the cases that index a file run on SQLite.
INDEXES_DB_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


def book(topic: str, chapters: int = 40) -> str:
    """A long Markdown text: one chapter mentions `topic`, the rest are filler."""
    parts = []
    for n in range(chapters):
        body = f"Chapter {n} discusses general matters. " * 12
        if n == chapters // 2:
            body += f"The key point about {topic} is explained here in detail. "
        parts.append(f"## Chapter {n}\n\n{body}")
    return "\n\n".join(parts)


def test_chunks_are_grouped_per_item_with_neighbours_as_context(store: KnowledgeStore):
    item = store.add_knowledge("Handbook", book("walrus"))
    result = search_knowledge(store, "walrus", budget=BUDGET)
    [entry] = result.results
    assert entry.item.id == item.id
    matched = entry.found.matched[0]
    assert "walrus" in matched.text and matched.heading == "Chapter 20"
    indexes = {c.chunk_index for c in entry.found.context}
    assert indexes == {matched.chunk_index - 1, matched.chunk_index + 1}
    assert entry.total_chunks == store.count_chunks(item.id)


def test_long_items_come_back_as_preview_plus_passages(store: KnowledgeStore):
    store.add_knowledge("Handbook", book("walrus", chapters=60))
    [entry] = search_knowledge(store, "walrus", budget=BUDGET).results
    assert len(entry.found.content) <= BUDGET.preview_chars
    assert "content:" in entry.found.cut and "get_knowledge_item(item_id=" in entry.found.cut


def test_short_items_come_back_whole(store: KnowledgeStore):
    text = "Short note about the walrus.\n\nSecond paragraph."
    store.add_knowledge("Note", text)
    [entry] = search_knowledge(store, "walrus", budget=BUDGET).results
    assert entry.found.content == text and not entry.found.cut


def test_filters_domain_category_tags(store: KnowledgeStore):
    store.add_knowledge("A", "walrus facts", domain="zoo", category="animals", tags=["sea"])
    store.add_knowledge("B", "walrus songs", domain="music", tags=["song", "sea"])
    store.add_knowledge("C", "walrus art", domain="zoo", category="art", tags=["land"])

    def titles(**filters):
        results = search_knowledge(store, "walrus", **filters).results
        return sorted(r.item.title for r in results)

    assert titles() == ["A", "B", "C"]
    assert titles(domain="zoo") == ["A", "C"]
    assert titles(domain="zoo", category="art") == ["C"]
    assert titles(tags=["sea"]) == ["A", "B"]
    assert titles(tags=["land", "song"]) == ["B", "C"]
    assert titles(domain="nowhere") == []


def test_relevance_date_and_title_orders(store: KnowledgeStore):
    store.add_knowledge("Zeta", "walrus walrus walrus walrus")
    store.add_knowledge("Alpha", "walrus and a great many other words " * 10)
    by_score = search_knowledge(store, "walrus").results
    scores = [r.found.score for r in by_score]
    assert scores == sorted(scores, reverse=True) and by_score[0].item.title == "Zeta"
    by_title = search_knowledge(store, "walrus", sort="title").results
    assert [r.item.title for r in by_title] == ["Alpha", "Zeta"]
    dated = search_knowledge(store, "walrus", sort="date").results
    stamps = [r.item.updated_at for r in dated]
    assert stamps == sorted(stamps, reverse=True)
    with pytest.raises(ValueError):
        search_knowledge(store, "walrus", sort="random")


def test_min_score_filters_results(store: KnowledgeStore):
    store.add_knowledge("Zeta", "walrus walrus walrus walrus")
    best = search_knowledge(store, "walrus").results[0].found.score
    assert search_knowledge(store, "walrus", min_score=best + 1).results == ()


def test_items_without_chunks_are_recovered_on_search(store: KnowledgeStore):
    item = store.add_knowledge("Lost chunks", book("narwhal"))
    store.db.execute("DELETE FROM chunks WHERE item_id = ?", (item.id,))
    assert store.count_chunks(item.id) == 0
    [entry] = search_knowledge(store, "narwhal", budget=BUDGET).results
    assert entry.item.id == item.id
    assert entry.found.matched and "narwhal" in entry.found.matched[0].text
    assert store.count_chunks(item.id) > 0  # saved for next time


def test_passages_cut_around_the_words_when_chunks_cannot_be_made():
    content = "x" * 5_000 + " the narwhal lives here " + "y" * 5_000
    [passage] = passages_around("id", content, ["narwhal"], 400)
    assert "narwhal" in passage.text and len(passage.text) == 400
    assert passages_around("id", content, ["absent"], 400) == []


@INDEXES_DB_ONLY
def test_documents_are_searched_with_their_pages(store: KnowledgeStore, settings: Settings, tmp_path: Path):
    from tests.support.documents import make_pdf

    pdf = make_pdf(tmp_path / "q3.pdf", [["Intro page."], ["第三季度营收增长百分之二十。"]])
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        index.index_file(pdf)
    [entry] = search_knowledge(store, "营收增长", domain="documents", budget=BUDGET).results
    assert entry.item.title == "q3.pdf"
    assert entry.found.matched[0].page == 2


def test_call_stays_within_the_total_budget(store: KnowledgeStore):
    for n in range(8):
        store.add_knowledge(f"Book {n}", book("walrus", chapters=30))
    budget = replace(BUDGET, call_chars=10_000, result_chars=3_000)
    result = search_knowledge(store, "walrus chapter", max_results=8, budget=budget)
    sizes = [content_size(r.found) for r in result.results]
    assert len(result.results) == 8
    assert all(size <= 3_000 for size in sizes) and sum(sizes) <= 10_000


@pytest.mark.parametrize("sort", ["relevance", "date", "title"])
def test_budgets_do_not_change_the_results_or_their_order(store: KnowledgeStore, sort: str):
    for n in range(6):
        store.add_knowledge(
            f"Book {n}", book("walrus", chapters=10 + 10 * n), domain=f"d{n % 2}", tags=[f"t{n % 3}"]
        )
    tight = replace(BUDGET, call_chars=5_000, result_chars=1_500, chunk_chars=200)
    for filters in ({}, {"domain": "d1"}, {"tags": ["t0", "t2"]}):
        plain = search_knowledge(store, "walrus chapter", sort=sort, max_results=6, **filters)
        fitted = search_knowledge(store, "walrus chapter", sort=sort, max_results=6, budget=tight, **filters)
        assert [(r.item.id, r.found.score) for r in fitted.results] == [
            (r.item.id, r.found.score) for r in plain.results
        ]


@INDEXES_DB_ONLY
def test_knowledge_hits_of_documents_name_their_place(
    store: KnowledgeStore, settings: Settings, tmp_path: Path
):
    from generalAgent.knowledge.render import render_search
    from tests.support.documents import make_pptx

    deck = make_pptx(
        tmp_path / "deck.pptx", [("Plan", "Ship in May", ""), ("Budget", "Costs fall by a third", "")]
    )
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        index.index_file(deck)
    result = search_knowledge(store, "costs fall", budget=BUDGET)
    [chunk] = result.results[0].found.matched
    assert (chunk.place, chunk.heading) == ("slide 2", "Budget")
    assert "matched: chunk 1 | slide 2 | § Budget" in render_search(result)


@INDEXES_DB_ONLY
def test_a_list_of_phrasings_finds_each_ones_items_and_names_a_files_language(
    store: KnowledgeStore, settings: Settings, tmp_path: Path
):
    (tmp_path / "ops.md").write_text("# Rollback\n\nRun the rollback procedure from the release runbook.\n")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        index.index_file(tmp_path / "ops.md")
    store.add_knowledge("值班", "值班电话 555-0199，回滚之前先通知值班。")
    found = search_knowledge(store, ["回滚 值班", "rollback procedure"], budget=BUDGET)
    titles = [entry.item.title for entry in found.results]
    assert set(titles) == {"ops.md", "值班"}
    assert found.query == "回滚 值班 | rollback procedure"
    by_title = {entry.item.title: entry for entry in found.results}
    assert by_title["ops.md"].language == "en" and not by_title["值班"].language
    assert search_knowledge(store, ["", "  "]).results == ()


@INDEXES_DB_ONLY
def test_a_lone_query_is_rendered_into_the_searched_files_language_and_searched_beside_it(
    store: KnowledgeStore, settings: Settings, tmp_path: Path
):
    (tmp_path / "ops.md").write_text("# Rollback\n\nRun the rollback procedure from the release runbook.\n")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        index.index_file(tmp_path / "ops.md")
    store.add_knowledge("值班", "值班电话 555-0199，回滚之前先通知值班。", domain="oncall")
    asked: list[tuple[str, str]] = []

    def render(query: str, language: str) -> str:
        asked.append((query, language))
        return "rollback procedure"

    found = search_knowledge(store, "回滚流程", budget=BUDGET, render=render)
    assert asked == [("回滚流程", "en")]
    assert (found.rendered, found.rendered_language) == ("rollback procedure", "en")
    assert found.results[0].item.title == "ops.md"
    assert 'also searched in English as "rollback procedure"' in render_search(found)
    assert found.query == "回滚流程"  # the user's words, as asked; the rendering has its own line
    # No rendering when the model sent its own phrasings, or no file in scope has another script.
    search_knowledge(store, ["回滚流程", "rollback"], render=render)
    search_knowledge(store, "回滚", domain="oncall", render=render)
    search_knowledge(store, "rollback", render=render)
    assert len(asked) == 1
