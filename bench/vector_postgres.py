"""Whole-store vector search in the PostgreSQL store: pgvector's HNSW index against the exact
scan, at 10k and 100k vectors, with HNSW's recall@10.

    python -m bench.vector_postgres [--database-url URL] [--sizes 10000,100000]
        [--dimensions 256] [--queries 50] [--data clustered|random] [--ef-search 40,100,200]

The server: --database-url, else GENERALAGENT_TEST_PGVECTOR_URL, else the PostgreSQL 16 +
pgvector 0.6.2 of the `pgserver` wheel (the dev extra), started for the run as the tests
start it (tests/support/pgvector.py) and stopped after.

A throw-away schema of the store is filled through `put_item` (items of 1,000 chunks with
their vectors, one model), then `settle_vectors` copies them into `knn_chunks` (in the
write transaction) and builds the model's HNSW index after it, CONCURRENTLY (m 16,
ef_construction 64, maintenance_work_mem sized to the graph), timed as `build_seconds`.
Meanwhile another connection of the store writes a one-chunk document every 0.2 s, as a
replica indexing would: `writer_max_ms` is the slowest of those writes (before round 4 the
build held the write lock, and a writer waited for all of it). The same queries are then
answered over the whole store, in lockstep (one query each way in turn, so load on a
shared machine falls on all alike):
- scan: what the store runs without pgvector (search/semantic.py's `scan_nearest` on the
  store's connection: every vector of the model read from chunk_vectors, one numpy product);
- hnsw_ef<N>: `whole_store_nearest`, the index's answer, as `nearest_chunks` asks it, with
  PGVECTOR_EF_SEARCH N (each of `--ef-search`; pgvector's default is 40, ours 100).
All ask for the 10 nearest; no embedding cost is in any (query vectors are made in
advance). p50/p95 in ms, `ratio_p50`/`ratio_p95` = hnsw / scan, and `recall_at_10`: the
share of the exact ten nearest that HNSW returns, averaged over the queries.

Data: `clustered` (the default) draws each vector around one of N/100 random centres, and
each query around a random stored vector's centre, so a query has true near neighbours as a
question's embedding has among a corpus's chunks; `random` draws uniform unit vectors (as
bench/semantic_search.py), where every vector is about equally far from a query: the
worst case for a graph index, and a recall figure that says little about real text.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from contextlib import ExitStack
from typing import Any

import numpy as np

from bench.search_index import lockstep
from bench.semantic_search import MODEL, GivenVectors, unit
from generalAgent.config.settings import load_settings
from generalAgent.search.postgres_store import PostgresSearchStore
from generalAgent.search.semantic import scan_nearest
from generalAgent.search.storage import ChunkRow
from generalAgent.search.store import TERMINAL, StoredItem

ITEM_CHUNKS = 1_000


def corpus(
    size: int, queries: int, dimensions: int, data: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(stored vectors, query vectors), unit length."""
    if data == "random":
        return unit(rng.standard_normal((size, dimensions))), unit(rng.standard_normal((queries, dimensions)))
    centres = unit(rng.standard_normal((max(1, size // 100), dimensions)))
    # Noise of about the centre's own length: neighbours in a cluster at cosine ~0.5, as
    # chunks on one topic are; another cluster's near 0.
    spread = 1.0 / np.sqrt(dimensions)
    stored = unit(
        centres[rng.integers(0, len(centres), size)] + spread * rng.standard_normal((size, dimensions))
    )
    asked = unit(
        centres[rng.integers(0, len(centres), queries)] + spread * rng.standard_normal((queries, dimensions))
    )
    return stored, asked


def fill(store: PostgresSearchStore, vectors: np.ndarray) -> None:
    for start in range(0, len(vectors), ITEM_CHUNKS):
        block = vectors[start : start + ITEM_CHUNKS]
        item_id = f"item{start // ITEM_CHUNKS:04d}"
        texts = [f"chunk {start + n}" for n in range(len(block))]
        rows = [ChunkRow(f"{item_id}-{n}", n, text, 0, len(text)) for n, text in enumerate(texts)]
        item = StoredItem(id=item_id, domain="notes", title=item_id, content="\n".join(texts))
        store.put_item(item, rows, TERMINAL, [v.tobytes() for v in block], MODEL)


def measure(
    url: str,
    size: int,
    dimensions: int,
    queries: int,
    data: str,
    rng: np.random.Generator,
    ef_values: list[int],
) -> dict[str, Any]:
    settings = load_settings(env_file=None)
    schema = f"bench_vectors_{os.getpid()}_{size}"
    store = PostgresSearchStore(url, settings.documents, schema=schema)
    try:
        if store.knn is None:
            sys.exit(f"{url}: this server has no pgvector (the `vector` extension)")
        stored, asked_vectors = corpus(size, queries, dimensions, data, rng)
        began = time.perf_counter()
        fill(store, stored)
        fill_seconds = time.perf_counter() - began
        writes: list[float] = []
        settling = threading.Event()

        def write_meanwhile() -> None:
            with PostgresSearchStore(url, settings.documents, schema=schema) as writer:
                n = 0
                while not settling.is_set():
                    began = time.perf_counter()
                    text = f"written while settling {n}"
                    item = StoredItem(id=f"meanwhile{n}", domain="notes", title="meanwhile", content=text)
                    writer.put_item(item, [ChunkRow(f"meanwhile{n}-0", 0, text, 0, len(text))], TERMINAL)
                    writes.append((time.perf_counter() - began) * 1000)
                    n += 1
                    settling.wait(0.2)

        writer = threading.Thread(target=write_meanwhile)
        writer.start()
        began = time.perf_counter()
        try:
            store.settle_vectors(MODEL)
        finally:
            build_seconds = time.perf_counter() - began
            settling.set()
            writer.join()
        store.conn.execute("ANALYZE")
        extension = store.conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        asked = {f"q{n}": v.tobytes() for n, v in enumerate(asked_vectors)}
        source = GivenVectors(asked)
        answers: dict[str, dict[str, list[int]]] = {"scan": {}, "hnsw": {}}

        def scan(text: str) -> None:
            ranked = scan_nearest(store.sql, source, [text], None, (), 10)[0]
            answers["scan"][text] = [r for r, _ in ranked]

        def hnsw(ef: int) -> Any:
            def run(text: str) -> None:
                assert store.knn is not None
                store.knn.ef_search = ef
                ranked = store.whole_store_nearest(source, text, 10)
                assert ranked is not None, "the index was not built"
                answers[f"hnsw_ef{ef}"][text] = [r for r, _ in ranked]

            return run

        answers.update({f"hnsw_ef{ef}": {} for ef in ef_values})
        timings = lockstep({"scan": scan, **{f"hnsw_ef{ef}": hnsw(ef) for ef in ef_values}}, list(asked), 1)
        by_ef = {}
        for ef in ef_values:
            name = f"hnsw_ef{ef}"
            recall = [len(set(answers[name][q]) & set(answers["scan"][q])) / 10 for q in asked]
            by_ef[name] = {
                **timings[name],
                "ratio_p50": round(timings[name]["p50_ms"] / timings["scan"]["p50_ms"], 3),
                "ratio_p95": round(timings[name]["p95_ms"] / timings["scan"]["p95_ms"], 3),
                "recall_at_10": round(float(np.mean(recall)), 3),
                "recall_at_10_min": round(float(np.min(recall)), 2),
            }
        return {
            "vectors": size,
            "pgvector": str(extension[0]) if extension else "",
            "scan": timings["scan"],
            **by_ef,
            "fill_seconds": round(fill_seconds, 1),
            "build_seconds": round(build_seconds, 1),
            "writes_while_settling": len(writes),
            "writer_max_ms": round(max(writes), 1) if writes else None,
            "writer_p50_ms": round(sorted(writes)[len(writes) // 2], 1) if writes else None,
        }
    finally:
        store.conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        store.close()


def server(stack: ExitStack, url: str) -> str:
    if url:
        return url
    from tests.support.pgvector import ServerUnavailable, pgserver_cluster

    try:
        return stack.enter_context(pgserver_cluster())
    except ServerUnavailable as exc:
        sys.exit(str(exc))


def server_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        return str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=os.environ.get("GENERALAGENT_TEST_PGVECTOR_URL", ""))
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--dimensions", type=int, default=256)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--data", choices=("clustered", "random"), default="clustered")
    parser.add_argument("--ef-search", default="40,100,200", help="PGVECTOR_EF_SEARCH values to time")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    with ExitStack() as stack:
        url = server(stack, args.database_url)
        results = [
            measure(
                url,
                int(size),
                args.dimensions,
                args.queries,
                args.data,
                rng,
                [int(ef) for ef in args.ef_search.split(",")],
            )
            for size in args.sizes.split(",")
        ]
        report = {
            "benchmark": "vector_postgres",
            "postgresql": server_version(url),
            "data": args.data,
            "dimensions": args.dimensions,
            "queries": args.queries,
            "results": results,
        }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
