"""Two-phase knowledge search at scale: 10,000 items / ~100,000 chunks of real text.

    python -m bench.knowledge [--items 10000] [--rounds 3]

Items are cut from the man pages of bench/manpage_corpus.py (English and Chinese) at
paragraph boundaries, ~2,800 characters each (about ten chunks), and stored through
`KnowledgeStore.add_knowledge` (chunk, jieba, one transaction each); domain = language,
category = man section. The 150 questions of the retrieval-quality set are then asked
through `search_knowledge` with the default content budget, without and with a domain
filter. Reported: insert throughput, p50/p95 per search, and the largest result and the
largest call ever returned (both must be within the budget: 30,000 and 100,000 chars).

When a local embedding model is configured (EMBEDDING_LOCAL_MODEL, see docs/knowledge.md),
recall@5 of lexical and hybrid search is also measured on the retrieval-quality set;
otherwise that part says it was skipped. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from bench.manpage_corpus import corpus
from bench.retrieval_quality import build_corpus, load_questions
from generalAgent.config.settings import load_settings
from generalAgent.knowledge import KnowledgeStore, search_knowledge
from generalAgent.search.budgets import ContentBudget, content_size
from generalAgent.search.embeddings import LocalEmbeddings
from generalAgent.search.segmentation import load_jieba

ITEM_CHARS = 2_800


def items_from_pages(limit: int) -> list[dict[str, Any]]:
    """Items of ~ITEM_CHARS cut at paragraph breaks, alternating languages by page."""
    pages = [("zh", p) for p in corpus("zh")] + [("en", p) for p in corpus("en", limit=20_000)]
    pages.sort(key=lambda lp: (zlib.crc32(lp[1].name.encode()) % 7, lp[1].name))  # mixed, stable
    items: list[dict[str, Any]] = []
    for lang, path in pages:
        text = path.read_text(encoding="utf-8")
        section = path.name.removesuffix(".md").rsplit(".", 1)[-1]
        part, buffer = 0, []
        for paragraph in re.split(r"\n\n+", text):
            buffer.append(paragraph)
            if sum(len(p) for p in buffer) >= ITEM_CHARS:
                items.append(_item(lang, path, section, part, buffer))
                part, buffer = part + 1, []
        if buffer and sum(len(p) for p in buffer) > 200:
            items.append(_item(lang, path, section, part, buffer))
        if len(items) >= limit:
            return items[:limit]
    return items


def _item(lang: str, path: Path, section: str, part: int, paragraphs: list[str]) -> dict:
    return {
        "title": f"{path.name.removesuffix('.md')} part {part + 1}",
        "content": "\n\n".join(paragraphs),
        "domain": lang,
        "category": f"section {section}",
        "tags": [f"man{section}"],
    }


def timed_searches(
    store: KnowledgeStore,
    questions: list[dict],
    budget: ContentBudget,
    rounds: int,
    by_domain: bool,
) -> dict[str, Any]:
    largest_result = largest_call = 0
    samples = []
    for round_number in range(rounds + 1):  # round 0 warms the caches and is not timed
        for question in questions:
            domain = question["lang"] if by_domain else None
            began = time.perf_counter()
            result = search_knowledge(store, question["question"], domain=domain, budget=budget)
            elapsed = (time.perf_counter() - began) * 1000
            if round_number:
                samples.append(elapsed)
            sizes = [content_size(r.found) for r in result.results]
            largest_result = max([largest_result, *sizes])
            largest_call = max(largest_call, sum(sizes))
    ordered = sorted(samples)
    return {
        "searches": len(ordered),
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "largest_result_chars": largest_result,
        "largest_call_chars": largest_call,
        "within_budget": largest_result <= budget.result_chars and largest_call <= budget.call_chars,
    }


def hybrid_recall(model: str, questions: list[dict]) -> dict[str, Any]:
    """recall@5 per item of the retrieval-quality set, lexical vs hybrid (same corpus)."""
    pages = build_corpus(questions, distractors=300)
    scores: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            env_file=None, paths={"data_dir": Path(tmp)}, documents={"embedding_local_model": model}
        )
        embedder = LocalEmbeddings(model, settings.documents.embedding_batch_size)
        with KnowledgeStore(settings.paths.indexes_db, settings.documents, embedder) as store:
            ids = {}
            began = time.perf_counter()
            for lang, paths in pages.items():
                for path in paths:
                    item = store.add_knowledge(path.name, path.read_text(encoding="utf-8"), domain=lang)
                    ids[item.id] = f"{lang}/{path.name.removesuffix('.md')}"
            scores["index_seconds"] = round(time.perf_counter() - began, 1)
            for mode in ("lexical", "hybrid"):
                store.embedder = embedder if mode == "hybrid" else None
                hits = {"en": 0, "zh": 0}
                for question in questions:
                    result = search_knowledge(store, question["question"], max_results=5)
                    target = f"{question['lang']}/{question['page']}"
                    hits[question["lang"]] += any(
                        ids.get(r.item.id) == target
                        and any(question["answer"].lower() in p.text.lower() for p in r.found.matched)
                        for r in result.results
                    )
                totals = {lang: sum(q["lang"] == lang for q in questions) for lang in hits}
                scores[f"{mode}_recall_at_5"] = {
                    "all": round(sum(hits.values()) / len(questions), 3),
                    **{lang: round(hits[lang] / totals[lang], 3) for lang in hits},
                }
            scores["model"] = model
            scores["chunks"] = store.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    return scores


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    questions = load_questions()
    items = items_from_pages(args.items)
    load_jieba()
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(env_file=None, paths={"data_dir": Path(tmp)})
        budget = ContentBudget.from_settings(settings.documents)
        with KnowledgeStore(settings.paths.indexes_db, settings.documents) as store:
            began = time.perf_counter()
            for item in items:
                store.add_knowledge(**item)
            seconds = time.perf_counter() - began
            chunks = store.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            report["corpus"] = {
                "items": len(items),
                "chunks": chunks,
                "chars": sum(len(i["content"]) for i in items),
                "insert_seconds": round(seconds, 1),
                "items_per_s": round(len(items) / seconds),
            }
            report["search"] = timed_searches(store, questions, budget, args.rounds, False)
            report["search_in_domain"] = timed_searches(store, questions, budget, args.rounds, True)
    model = os.environ.get("EMBEDDING_LOCAL_MODEL")
    report["hybrid"] = (
        hybrid_recall(model, questions)
        if model
        else {"skipped": "no local embedding model: set EMBEDDING_LOCAL_MODEL to measure it"}
    )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
