"""Index throughput and query latency of the FTS5 + jieba index, against bm25s and rank_bm25.

    python -m bench.search_index [--max-chunks 100000|1000000] [--rounds 3]

Corpus: Debian's Chinese man pages (manpages-zh, installed if missing) interleaved with the
machine's English man pages, indexed one document at a time through `SearchIndex.index_file`
(read, chunk, jieba, one SQLite transaction each) until `--max-chunks` chunks. Throughput
counts everything from the file to the committed rows.

At 1k, 10k and 100k chunks the same queries (the 150 questions of the retrieval-quality set,
both languages) are run against the whole index:
- fts5: `find_chunks` (query building, jieba on the query, the BM25-ranked OR pruned to
  the rarer terms' chunks, the re-ranking by document, loading the rows);
- bm25s and rank_bm25 on the very same chunk texts, tokenized the same way (lower-case words,
  jieba search-mode words for Chinese), one query at a time, tokenization included.
Each prints p50/p95 in ms; `ratio_*` is fts5's p50 divided by the peer's (below 1: faster).
rank_bm25 is left out past 100k chunks (it scores every chunk in Python: seconds a query).
Past the man pages (~100k chunks), the pages are indexed again as copies with a line naming
the copy (other bytes, so not deduplicated), until --max-chunks.

At each checkpoint the convenience API and knowledge search are timed too, on the same
index: `search_in_index` on the gnuplot manual (311 pages, bench/document_corpus.py; each
call opens the index, checks the file by size and modification time, searches, closes)
and `search_document` as the search_file tool runs it (on the connection it keeps: the
file checked, the lookup, context, budget, and the answer rendered as the model reads
it) beside `SearchIndex.search_item` on the same open index (the index's own query
time; `ratio_search_file_vs_search_item`) and `find_chunks` over the whole index
(`ratio_search_file_vs_find_chunks`), in lockstep, with the 70
gnuplot questions of the documents set; and `search_knowledge` over everything with
the 150 questions, normally and right after a `search_file` from another connection.
The peers are pip-installed on first run. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.document_corpus import BY_KEY, document_path
from bench.manpage_corpus import corpus
from bench.retrieval_quality import load_document_questions, load_questions
from generalAgent.config.settings import Settings, load_settings
from generalAgent.documents import search_in_index
from generalAgent.documents.index import SearchIndex
from generalAgent.documents.search import render_search, search_document
from generalAgent.knowledge import KnowledgeStore, search_knowledge
from generalAgent.search.connection import SharedConnection
from generalAgent.search.lookup import find_chunks
from generalAgent.search.segmentation import CJK_RUN, load_jieba

CHECKPOINTS = (1_000, 10_000, 100_000, 1_000_000)
PEER_LIMIT_RANK_BM25 = 100_000
LATIN_WORD = re.compile(r"[^\W_]+")


def ensure_peers() -> None:
    try:
        import bm25s  # noqa: F401
        import rank_bm25  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "bm25s", "rank-bm25"], check=True)


def tokenize(text: str) -> list[str]:
    """Words for the peers: Latin words lower-cased, Chinese as jieba search-mode words."""
    jieba = load_jieba()
    words = LATIN_WORD.findall(CJK_RUN.sub(" ", text).lower())
    for run in CJK_RUN.findall(text):
        words.extend(w for w in jieba.cut_for_search(run, HMM=False) if w.strip())
    return words


def copies(pages: list[tuple[str, Path]], folder: Path) -> Iterator[tuple[str, Path]]:
    """The pages, then copies of them (round 2, 3, ...) whose first line names the copy."""
    yield from pages
    for number in itertools.count(2):
        for lang, path in pages:
            copy = folder / f"copy{number}" / path.name
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(f"(copy {number})\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
            yield lang, copy
            copy.unlink()


def interleaved(max_docs: int) -> list[tuple[str, Path]]:
    """Chinese and English pages alternated by size (the language with fewer characters so
    far comes next), so every checkpoint holds both languages until the Chinese run out."""
    queues = {"zh": corpus("zh"), "en": corpus("en", limit=max_docs)}
    sizes = {"zh": 0, "en": 0}
    order = []
    while any(queues.values()):
        lang = min((lang for lang in queues if queues[lang]), key=lambda lang: sizes[lang])
        path = queues[lang].pop(0)
        sizes[lang] += path.stat().st_size
        order.append((lang, path))
    return order


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 3),
        "max_ms": round(ordered[-1], 3),
        "queries": len(ordered),
    }


def timed(run: Callable[[str], Any], queries: list[str], rounds: int) -> dict[str, float]:
    for query in queries:  # warm caches, as a long session would be
        run(query)
    samples = []
    for _ in range(rounds):
        for query in queries:
            began = time.perf_counter()
            run(query)
            samples.append((time.perf_counter() - began) * 1000)
    return percentiles(samples)


def lockstep(
    runs: dict[str, Callable[[str], Any]], queries: list[str], rounds: int
) -> dict[str, dict[str, float]]:
    """Like `timed` for several ways of answering, each query run by each in turn, so a
    burst of load on a shared machine falls on all of them alike."""
    for query in queries:
        for run in runs.values():
            run(query)
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for query in queries:
            for name, run in runs.items():
                began = time.perf_counter()
                run(query)
                samples[name].append((time.perf_counter() - began) * 1000)
    return {name: percentiles(values) for name, values in samples.items()}


def measure(index: SearchIndex, queries: list[str], rounds: int) -> dict[str, Any]:
    import bm25s
    import numpy as np
    from rank_bm25 import BM25Okapi

    conn = index.conn
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    result: dict[str, Any] = {
        "chunks": conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
        "db_bytes": index.db_path.stat().st_size,
    }
    result["fts5"] = timed(lambda q: find_chunks(conn, q, index.segmenter, 10), queries, rounds)

    texts = [row[0] for row in conn.execute("SELECT text FROM chunks_fts ORDER BY rowid")]
    began = time.perf_counter()
    tokens = [tokenize(t) for t in texts]
    tokenize_s = time.perf_counter() - began

    began = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    bm25s_index_s = time.perf_counter() - began + tokenize_s
    vocab = retriever.vocab_dict

    def bm25s_query(query: str) -> Any:
        words = [w for w in tokenize(query) if w in vocab] or [next(iter(vocab))]
        return retriever.retrieve([words], k=10, show_progress=False, n_threads=1)

    result["bm25s"] = {**timed(bm25s_query, queries, rounds), "index_s": round(bm25s_index_s, 2)}

    if len(texts) > PEER_LIMIT_RANK_BM25:
        result["ratio_p50_vs_bm25s"] = round(result["fts5"]["p50_ms"] / result["bm25s"]["p50_ms"], 3)
        return result
    began = time.perf_counter()
    okapi = BM25Okapi(tokens)
    okapi_index_s = time.perf_counter() - began + tokenize_s
    # rank_bm25 scores every document in Python: a sample of the queries keeps the run short.
    sample = queries if len(texts) < 50_000 else queries[::5]

    def okapi_query(query: str) -> Any:
        scores = okapi.get_scores(tokenize(query))
        return np.argpartition(scores, -10)[-10:]

    result["rank_bm25"] = {**timed(okapi_query, sample, 1), "index_s": round(okapi_index_s, 2)}
    for peer in ("bm25s", "rank_bm25"):
        result[f"ratio_p50_vs_{peer}"] = round(result["fts5"]["p50_ms"] / result[peer]["p50_ms"], 3)
    return result


def measure_api(index: SearchIndex, settings: Settings, manual: Path, rounds: int) -> dict[str, Any]:
    """search_in_index beside the index's own query; search_knowledge before and after a
    write... or rather a search_file, from another connection."""
    manual_questions = [q["question"] for q in load_document_questions() if q["doc"] == "gnuplot"]
    document = index.index_file(manual)
    item_id, chunks = document.item_id, document.total_chunks
    # search_file as the tool runs it: on the connection it keeps for the process.
    shared = SharedConnection(settings.paths.indexes_db)

    def search_file(query: str) -> Any:
        with shared.use() as conn:
            found = search_document(settings.paths.indexes_db, settings.documents, manual, query, conn=conn)
        return render_search(found)  # the text the model reads: the tool's whole answer

    result: dict[str, Any] = lockstep(
        {
            # The FTS5 lookup itself on the same questions: the whole index, no document scope.
            "find_chunks": lambda q: find_chunks(index.conn, q, index.segmenter, 5),
            "search_item": lambda q: index.search_item(item_id, q, 5, chunks=chunks),
            "search_in_index": lambda q: search_in_index(manual, q, 5, settings),
            "search_file": search_file,
        },
        manual_questions,
        rounds,
    )
    result["ratio_search_in_index_vs_search_item"] = round(
        result["search_in_index"]["p50_ms"] / result["search_item"]["p50_ms"], 2
    )
    # Issue 26: what search_file adds to the lookup (opening, checking the file, context,
    # budget, rendering data), as one ratio.
    result["ratio_search_file_vs_search_item"] = round(
        result["search_file"]["p50_ms"] / result["search_item"]["p50_ms"], 2
    )
    # The target's own terms: search_file against the FTS5 lookup, same questions, same run
    # (beside the whole-index figures above, which ask the man-page questions).
    result["ratio_search_file_vs_find_chunks"] = round(
        result["search_file"]["p50_ms"] / result["find_chunks"]["p50_ms"], 2
    )
    questions = [q["question"] for q in load_questions()]
    with KnowledgeStore(settings.paths.indexes_db, settings.documents) as store:
        result["search_knowledge"] = timed(lambda q: search_knowledge(store, q), questions, rounds)

        def after_search_file(query: str) -> Any:
            search_document(settings.paths.indexes_db, settings.documents, manual, "plot")  # not timed
            began = time.perf_counter()
            search_knowledge(store, query)
            return time.perf_counter() - began

        samples = [after_search_file(q) * 1000 for q in questions]
        result["search_knowledge_after_search_file"] = percentiles(samples)
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-chunks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the queries")
    args = parser.parse_args(argv)
    ensure_peers()
    queries = [q["question"] for q in load_questions()]
    checkpoints = [c for c in CHECKPOINTS if c <= args.max_chunks]
    totals = {"en": [0, 0, 0.0, 0], "zh": [0, 0, 0.0, 0]}  # chars, chunks, seconds, docs
    report: dict[str, Any] = {"checkpoints": {}}
    load_jieba()  # its dictionary loads once per process (~0.6 s), not per document
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(env_file=None, paths={"data_dir": Path(tmp)})
        manual = document_path(BY_KEY["gnuplot"])
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            chunks = index.index_file(manual).total_chunks
            for lang, path in copies(interleaved(max_docs=20_000), Path(tmp) / "copies"):
                if not checkpoints:
                    break
                document = index.index_file(path)
                chunks += document.total_chunks
                totals[lang][0] += document.total_chars
                totals[lang][1] += document.total_chunks
                totals[lang][2] += document.seconds
                totals[lang][3] += 1
                if chunks >= checkpoints[0]:
                    figures = measure(index, queries, args.rounds)
                    figures["api"] = measure_api(index, settings, manual, args.rounds)
                    report["checkpoints"][str(checkpoints.pop(0))] = figures
                    print(
                        json.dumps({checkpoints and "progress" or "last": figures["chunks"]}), file=sys.stderr
                    )
    indexing: dict[str, Any] = {}
    for name, rows in (("all", [sum(v) for v in zip(*totals.values(), strict=True)]), *totals.items()):
        chars, n_chunks, seconds, docs = rows
        indexing[name] = {
            "documents": int(docs),
            "chars": int(chars),
            "chunks": int(n_chunks),
            "seconds": round(seconds, 2),
            "chars_per_s": round(chars / seconds) if seconds else 0,
            "chunks_per_s": round(n_chunks / seconds) if seconds else 0,
        }
    report["indexing"] = indexing
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
