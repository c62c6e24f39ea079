"""Retrieval quality of the FTS5 + jieba search: recall@5 and MRR@10 on labelled questions.

    python -m bench.retrieval_quality [--distractors 2000] [--json-only]

The questions (bench/data/retrieval_questions.jsonl, 80 English + 70 Chinese) ask how to do
something with a command; each names the man page that answers it and a string the answering
passage must contain (usually the option). A hit is relevant when it is a chunk of that page
containing that string. The corpus is every Chinese man page (manpages-zh) plus the English
pages the questions need and `--distractors` more English pages, all searched at once, so a
question about `ls` competes with every other page that talks about files.

Prints one JSON object: recall@5 and MRR@10 overall and per language, and the questions that
missed (so a change in ranking can be judged question by question).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.manpage_corpus import corpus
from generalAgent.config.settings import load_settings
from generalAgent.documents.index import SearchIndex
from generalAgent.search.lookup import find_chunks

QUESTIONS = Path(__file__).resolve().parent / "data" / "retrieval_questions.jsonl"


def load_questions() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line]


def build_corpus(questions: list[dict], distractors: int) -> dict[str, list[Path]]:
    wanted = {lang: {q["page"] for q in questions if q["lang"] == lang} for lang in ("en", "zh")}
    english = corpus("en", names=wanted["en"])
    english += [p for p in corpus("en", limit=distractors + len(english)) if p not in english][:distractors]
    return {"en": english, "zh": corpus("zh")}


def evaluate(index: SearchIndex, questions: list[dict], titles: dict[str, str]) -> dict:
    per_lang: dict[str, list[tuple[bool, float]]] = {"en": [], "zh": []}
    misses = []
    latencies = []
    for question in questions:
        began = time.perf_counter()
        hits = find_chunks(index.conn, question["question"], index.segmenter, 10)
        latencies.append((time.perf_counter() - began) * 1000)
        target = f"{question['lang']}/{question['page']}"
        rank = next(
            (
                n
                for n, hit in enumerate(hits, start=1)
                if titles.get(hit.item_id) == target and question["answer"].lower() in hit.text.lower()
            ),
            None,
        )
        per_lang[question["lang"]].append((rank is not None and rank <= 5, 1 / rank if rank else 0))
        if rank is None or rank > 5:
            misses.append(
                {
                    "id": question["id"],
                    "question": question["question"],
                    "rank": rank,
                    "top": [titles.get(h.item_id) for h in hits[:3]],
                }
            )
    scores = {}
    everything = [r for rows in per_lang.values() for r in rows]
    for name, rows in (("all", everything), *per_lang.items()):
        scores[name] = {
            "questions": len(rows),
            "recall_at_5": round(sum(hit for hit, _ in rows) / len(rows), 3),
            "mrr_at_10": round(sum(rr for _, rr in rows) / len(rows), 3),
        }
    scores["query_ms_p50"] = round(statistics.median(latencies), 2)
    return {"scores": scores, "misses": misses}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--distractors", type=int, default=2000, help="extra English pages")
    args = parser.parse_args(argv)
    questions = load_questions()
    pages = build_corpus(questions, args.distractors)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(env_file=None, paths={"data_dir": Path(tmp)})
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            titles: dict[str, str] = {}
            chunks = 0
            began = time.perf_counter()
            for lang, paths in pages.items():
                for path in paths:
                    document = index.index_file(path)
                    titles[document.item_id] = f"{lang}/{path.name.removesuffix('.md')}"
                    chunks += document.total_chunks
            index_seconds = time.perf_counter() - began
            result = evaluate(index, questions, titles)
    result["corpus"] = {
        "pages_en": len(pages["en"]),
        "pages_zh": len(pages["zh"]),
        "chunks": chunks,
        "index_seconds": round(index_seconds, 1),
    }
    print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
