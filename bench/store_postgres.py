"""The PostgreSQL search store beside SQLite's: indexing throughput and search latency at 10k
and 100k chunks, in one run.

    python -m bench.store_postgres [--database-url URL] [--max-chunks 100000] [--rounds 2]

Corpus: the man pages of bench/search_index.py (Chinese and English interleaved, copies
past the end), read and chunked once into an indexes.db. Its items and chunks are then
written, in the same order, through the one store interface (search/store.py) into a fresh
SQLite store and into a throw-away schema of the PostgreSQL database (default
GENERALAGENT_TEST_DATABASE_URL): `put_item` each, which segments (jieba) and writes in one
transaction, FTS5 on one side, FTS5's tokens into a GIN-indexed tsvector on the other.
Throughput is chunks and characters per second of those writes (extraction and chunking,
shared, are left out).

At 10k and 100k chunks the 150 questions of the retrieval-quality set (both languages) are
run against the whole store through `search`, SQLite and PostgreSQL in lockstep (each
question by each in turn, so load on a shared machine falls on both alike): p50/p95 in
ms, and `ratio_p50`/`ratio_p95` = PostgreSQL / SQLite. `in_document` times the search
inside one large document the same way: the gnuplot manual (bench/document_corpus.py,
311 pages, ~3,300 chunks), written first into both stores, searched with its 70
questions of the documents set (`search(..., item_id=)`, as `search_file` does); its
common words ("plot", "set") are in a third of its chunks. The PostgreSQL server is whatever
the URL names (a local one in the figures of docs/benchmarks.md: no network in between).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.document_corpus import BY_KEY, document_path
from bench.retrieval_quality import load_document_questions, load_questions
from bench.search_index import copies, interleaved, lockstep
from generalAgent.config.settings import load_settings
from generalAgent.documents.index import SearchIndex
from generalAgent.search.postgres_store import PostgresSearchStore
from generalAgent.search.schema import ITEM_CONTENT
from generalAgent.search.segmentation import load_jieba
from generalAgent.search.storage import ChunkRow
from generalAgent.search.store import ITEM_FIELDS, TERMINAL, SearchStore, SqliteSearchStore, StoredItem

CHECKPOINTS = (10_000, 100_000)


class PreviousDocumentSearch(PostgresSearchStore):
    """The store as it searched inside one document before item_terms and the GIN path
    (round 4): every word counted by testing the document's chunks, the range walked by its
    rowids. The same schema, read through a connection of its own, for the before/after
    figures of `in_document` in one run."""

    gin_first = 0

    def _item_of_range(self, rowid_range: tuple[int, int]) -> str | None:
        return None


def variant(gin_first: int) -> type[PostgresSearchStore]:
    """The store with item_terms and another GIN_FIRST (0: never through GIN)."""
    return type(f"GinFirst{gin_first}", (PostgresSearchStore,), {"gin_first": gin_first})


LARGE_DOCUMENT = "gnuplot"


def source_items(index: SearchIndex) -> Iterator[tuple[StoredItem, list[ChunkRow]]]:
    """The indexed items with their chunks, in the order they were indexed."""
    conn = index.conn
    columns = ", ".join(ITEM_CONTENT + " AS content" if n == "content" else n for n in ITEM_FIELDS)
    for row in conn.execute(f"SELECT {columns} FROM items ORDER BY rowid").fetchall():
        item = StoredItem(**dict(row))
        chunks = conn.execute(
            "SELECT c.id, c.chunk_index, f.text, c.start_position, c.end_position, c.page, c.heading,"
            " c.metadata FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.item_id = ?"
            " ORDER BY c.chunk_index",
            (item.id,),
        ).fetchall()
        yield item, [ChunkRow(*r) for r in chunks]


def build_source(folder: Path, max_chunks: int) -> SearchIndex:
    settings = load_settings(env_file=None, paths={"data_dir": folder / "source"})
    index = SearchIndex(settings.paths.indexes_db, settings.documents)
    for _, path in copies(interleaved(max_docs=20_000), folder / "copies"):
        index.index_file(path)
        # Counted in the index: a page whose text another page already has is indexed once.
        if (index.conn.execute("SELECT MAX(rowid) FROM chunks").fetchone()[0] or 0) >= max_chunks:
            break
    return index


def large_document(folder: Path) -> tuple[StoredItem, list[ChunkRow]]:
    """The large document searched inside, read and chunked once."""
    settings = load_settings(env_file=None, paths={"data_dir": folder / "large"})
    index = SearchIndex(settings.paths.indexes_db, settings.documents)
    try:
        document = index.index_file(document_path(BY_KEY[LARGE_DOCUMENT]))
        return next((item, rows) for item, rows in source_items(index) if item.id == document.item_id)
    finally:
        index.close()


def ratios(figures: dict[str, Any]) -> dict[str, Any]:
    return {
        **figures,
        "ratio_p50": round(figures["postgresql"]["p50_ms"] / figures["sqlite"]["p50_ms"], 2),
        "ratio_p95": round(figures["postgresql"]["p95_ms"] / figures["sqlite"]["p95_ms"], 2),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=os.environ.get("GENERALAGENT_TEST_DATABASE_URL", ""))
    parser.add_argument("--max-chunks", type=int, default=CHECKPOINTS[-1])
    parser.add_argument("--rounds", type=int, default=2, help="timed passes over the questions")
    parser.add_argument(
        "--gin-first", default="", help="also time these GIN_FIRST values inside the document (e.g. 0,1)"
    )
    args = parser.parse_args(argv)
    if not args.database_url:
        sys.exit("set --database-url or GENERALAGENT_TEST_DATABASE_URL to a PostgreSQL server")
    load_jieba()
    queries = [q["question"] for q in load_questions()]
    in_document = [q["question"] for q in load_document_questions() if q["doc"] == LARGE_DOCUMENT]
    checkpoints = [c for c in CHECKPOINTS if c <= args.max_chunks] or [args.max_chunks]
    report: dict[str, Any] = {"checkpoints": {}}
    schema = f"bench_store_{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        source = build_source(Path(tmp), checkpoints[-1])
        settings = load_settings(env_file=None, paths={"data_dir": Path(tmp) / "target"})
        lite = SqliteSearchStore(settings.paths.indexes_db, settings.documents)
        pg = PostgresSearchStore(args.database_url, settings.documents, schema=schema)
        stores: dict[str, SearchStore] = {"sqlite": lite, "postgresql": pg}
        before = PreviousDocumentSearch(args.database_url, settings.documents, schema=schema)
        variants = {
            f"postgresql_gin{n}": variant(n)(args.database_url, settings.documents, schema=schema)
            for n in (int(v) for v in args.gin_first.split(",") if v)
        }
        written = {name: {"chunks": 0, "chars": 0, "seconds": 0.0} for name in stores}
        try:
            large, large_rows = large_document(Path(tmp))
            for store in stores.values():
                store.put_item(large, large_rows, TERMINAL)
            chunks = len(large_rows)
            report["in_document_chunks"] = chunks
            for item, rows in source_items(source):
                if not checkpoints:
                    break
                for name, store in stores.items():
                    began = time.perf_counter()
                    store.put_item(item, rows, TERMINAL)
                    written[name]["seconds"] += time.perf_counter() - began
                    written[name]["chunks"] += len(rows)
                    written[name]["chars"] += sum(len(r.text) for r in rows)
                chunks += len(rows)
                if chunks >= checkpoints[0]:
                    pg.conn.execute("ANALYZE")
                    timings = lockstep(
                        {
                            name: (lambda q, s=store: s.search(q, 10, TERMINAL))
                            for name, store in stores.items()
                        },
                        queries,
                        args.rounds,
                    )
                    figures: dict[str, Any] = ratios({"chunks": chunks, **timings})
                    searched = {**stores, "postgresql_before": before, **variants}
                    inside = lockstep(
                        {
                            name: (lambda q, s=store: s.search(q, 10, TERMINAL, item_id=large.id))
                            for name, store in searched.items()
                        },
                        in_document,
                        args.rounds,
                    )
                    figures["in_document"] = ratios(inside)
                    figures["in_document"]["ratio_p50_before"] = round(
                        inside["postgresql_before"]["p50_ms"] / inside["sqlite"]["p50_ms"], 2
                    )
                    figures["in_document"]["ratio_p95_before"] = round(
                        inside["postgresql_before"]["p95_ms"] / inside["sqlite"]["p95_ms"], 2
                    )
                    for name in variants:
                        figures["in_document"][f"ratio_p50_{name}"] = round(
                            inside[name]["p50_ms"] / inside["sqlite"]["p50_ms"], 2
                        )
                        figures["in_document"][f"ratio_p95_{name}"] = round(
                            inside[name]["p95_ms"] / inside["sqlite"]["p95_ms"], 2
                        )
                    figures["in_document"]["same_top10"] = sum(
                        [h.rowid for h in pg.search(q, 10, TERMINAL, item_id=large.id)]
                        == [h.rowid for h in before.search(q, 10, TERMINAL, item_id=large.id)]
                        == [h.rowid for h in lite.search(q, 10, TERMINAL, item_id=large.id)]
                        for q in in_document
                    )
                    report["checkpoints"][str(checkpoints.pop(0))] = figures
                    print(json.dumps({"progress": chunks}), file=sys.stderr)
        finally:
            before.close()
            for other in variants.values():
                other.close()
            pg.conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
            pg.close()
            lite.close()
            source.close()
    report["indexing"] = {
        name: {
            **{k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()},
            "chunks_per_s": round(figures["chunks"] / figures["seconds"]) if figures["seconds"] else 0,
            "chars_per_s": round(figures["chars"] / figures["seconds"]) if figures["seconds"] else 0,
        }
        for name, figures in written.items()
    }
    sqlite_rate = report["indexing"]["sqlite"]["chunks_per_s"]
    report["indexing"]["ratio_chunks_per_s"] = (
        round(report["indexing"]["postgresql"]["chunks_per_s"] / sqlite_rate, 2) if sqlite_rate else None
    )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
