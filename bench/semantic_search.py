"""Nearest-chunk lookups over stored vectors: sqlite-vec's KNN index against the scan.

    python -m bench.semantic_search [--sizes 10000,100000] [--dimensions 256] [--queries 50]

An indexes.db is filled with N chunks and a random unit vector each (256 dimensions, as the
default local model, potion-multilingual-128M, gives), under one model name. Then the same
queries (random unit vectors, so no embedding cost is measured) are answered two ways over
the whole store, in lockstep after one untimed pass (bench/search_index.py), as
search_knowledge and a search_folder of many documents ask:
- scan: search/semantic.py's exact ranking without an index (every vector read from
  chunk_vectors, one matrix product in numpy): what runs where sqlite-vec cannot load;
- knn: search/vector_index.py's `nearest` (sqlite-vec's vec0 table, brought up to date first).
Each prints p50/p95 (and p99, max) in ms and `ratio_p95` (knn / scan); `same_top10` is the share of queries
whose ten nearest are the same in both (sqlite-vec's vec0 is exact, so 1.0 is expected);
`build_seconds` is the time to build the index from chunk_vectors. Needs a Python whose
sqlite3 can load extensions (pyenv's builds cannot: then only the scan is measured).

`--knowledge N` (default 2000, 0 skips it) also times `search_knowledge` itself over N items
of bench/knowledge.py (man pages, ~10 chunks each), every chunk with a vector of hashed
words (256 dimensions, no model: the fusion's cost, not an embedding's), the 150 questions
of the retrieval-quality set asked without and with vectors in lockstep, with and without a
domain filter: p50/p95 each and `ratio_p50` (with vectors / keywords only). A knowledge store
always leaves other sessions' attachments out, so both scan their scope's vectors (numpy)
unless a KNN index answers the whole store. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.search_index import lockstep
from generalAgent.search import vector_index
from generalAgent.search.connection import connect, transaction
from generalAgent.search.embeddings import Embedder
from generalAgent.search.semantic import scan_nearest

MODEL = "bench-model"


class GivenVectors:
    """A VectorSource answering each query text with a vector made in advance."""

    def __init__(self, vectors: dict[str, bytes]) -> None:
        self.model = MODEL
        self.table = vectors

    def vectors(self, texts: Any, progress: Any = None) -> list[bytes]:
        return [self.table[t] for t in texts]


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype("<f4")


def fill(path: Path, size: int, dimensions: int, rng: np.random.Generator) -> Any:
    conn = connect(path)
    with transaction(conn):
        conn.execute(
            "INSERT INTO items (id, domain, title, content, created_at, updated_at)"
            " VALUES ('i', 'notes', 'bench', '', '', '')"
        )
        for start in range(0, size, 10_000):
            count = min(10_000, size - start)
            vectors = unit(rng.standard_normal((count, dimensions)))
            rowids = range(start + 1, start + count + 1)
            conn.executemany(
                "INSERT INTO chunks (rowid, id, item_id, chunk_index, start_position, end_position)"
                " VALUES (?, ?, 'i', ?, 0, 1)",
                ((r, f"c{r}", r) for r in rowids),
            )
            conn.executemany(
                "INSERT INTO chunks_fts (rowid, text, text_jieba, title) VALUES (?, '', '', '')",
                ((r,) for r in rowids),
            )
            conn.executemany(
                "INSERT INTO chunk_vectors (chunk_rowid, model, vector) VALUES (?, ?, ?)",
                ((r, MODEL, v.tobytes()) for r, v in zip(rowids, vectors, strict=True)),
            )
    return conn


def measure(size: int, dimensions: int, queries: int, rng: np.random.Generator) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        conn = fill(Path(folder) / "indexes.db", size, dimensions, rng)
        asked = {f"q{n}": v.tobytes() for n, v in enumerate(unit(rng.standard_normal((queries, dimensions))))}
        source = GivenVectors(asked)
        problem = vector_index.load_extension(conn)
        figures: dict[str, Any] = {"vectors": size}
        build_seconds = 0.0
        if problem is None:
            began = time.perf_counter()
            vector_index.build(conn, MODEL)
            build_seconds = time.perf_counter() - began
        answers: dict[str, dict[str, list[int]]] = {"scan": {}, "knn": {}}

        def scan(text: str) -> None:
            answers["scan"][text] = [r for r, _ in scan_nearest(conn, source, [text], None, (), 10)[0]]

        def knn(text: str) -> None:
            answers["knn"][text] = [r for r, _ in vector_index.nearest(conn, MODEL, asked[text], 10) or []]

        # In lockstep, one query each way in turn: the machine's noise falls on both.
        timings = lockstep({"scan": scan, "knn": knn} if problem is None else {"scan": scan}, list(asked), 1)
        figures["scan"] = timings["scan"]
        if problem is None:
            figures["knn"] = timings["knn"]
            figures["ratio_p95"] = round(figures["knn"]["p95_ms"] / figures["scan"]["p95_ms"], 3)
            same = sum(answers["knn"][text] == answers["scan"][text] for text in asked)
            figures["same_top10"] = round(same / queries, 3)
            figures["build_seconds"] = round(build_seconds, 2)
        else:
            figures["knn"] = None
            figures["knn_unavailable"] = problem
        conn.close()
    return figures


class HashedWords(Embedder):
    """Feature-hashed bags of words, unit length: texts sharing words are near, no model."""

    model = "bench-hashed-words"
    batch_size = 256

    def embed(self, texts: Any) -> list[list[float]]:
        import zlib

        from generalAgent.search.ranking import words

        rows = np.zeros((len(texts), 256), dtype="<f4")
        for n, text in enumerate(texts):
            for word in words(text):
                rows[n, zlib.crc32(word.encode()) % 256] += 1.0
        rows[:, 0] += 1e-3  # never a zero vector
        return unit(rows).tolist()


def measure_knowledge(items: int, rounds: int) -> dict[str, Any]:
    from bench.knowledge import items_from_pages
    from bench.retrieval_quality import load_questions
    from generalAgent.config.settings import load_settings
    from generalAgent.knowledge import KnowledgeStore, search_knowledge

    questions = load_questions()
    embedder = HashedWords()
    with tempfile.TemporaryDirectory() as folder:
        settings = load_settings(env_file=None, paths={"data_dir": Path(folder)})
        with KnowledgeStore(settings.paths.indexes_db, settings.documents, embedder) as store:
            for item in items_from_pages(items):
                store.add_knowledge(**item)
            chunks = store.conn.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0]
            figures: dict[str, Any] = {"items": items, "vectors": chunks}

            def asking(vectors: Embedder | None, domain: dict[str, str | None]) -> Any:
                def ask(text: str) -> None:
                    store.embedder = vectors
                    search_knowledge(store, text, domain=domain[text])

                return ask

            for filtered in (False, True):
                domain = {q["question"]: q["lang"] if filtered else None for q in questions}
                runs = {"keywords": asking(None, domain), "with_vectors": asking(embedder, domain)}
                timings: dict[str, Any] = lockstep(runs, list(domain), rounds)
                timings["ratio_p50"] = {
                    "with_vectors/keywords": round(
                        timings["with_vectors"]["p50_ms"] / timings["keywords"]["p50_ms"], 2
                    )
                }
                figures["by_domain" if filtered else "whole_store"] = timings
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--dimensions", type=int, default=256)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--knowledge", type=int, default=2000, help="items for search_knowledge (0: skip)")
    parser.add_argument("--rounds", type=int, default=2, help="timed passes of the knowledge questions")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = [int(size) for size in args.sizes.split(",") if size.strip() and int(size) > 0]
    results = [measure(size, args.dimensions, args.queries, rng) for size in sizes]
    knowledge = measure_knowledge(args.knowledge, args.rounds) if args.knowledge > 0 else None
    print(
        json.dumps(
            {
                "benchmark": "semantic_search",
                "python": sys.version.split()[0],
                "dimensions": args.dimensions,
                "queries": args.queries,
                "results": results,
                "knowledge_search": knowledge,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
