"""Indexing one long text file: peak memory, time and write-lock time as the file grows.

Each size (2, 20 and 200 MB by default; 200 MB is INDEX_MAX_FILE_MB's default limit, less
a byte) is a generated Markdown log: English lines with Chinese sentences every third line
and a heading every 50, so jieba has real work. Two variants index it, each in a fresh
child process (peak RSS is per process), one after the other at every size:

    whole     the document held in memory, as indexing did before issue 11's fix: every
              block extracted, every chunk cut and segmented, then one write transaction
              with the content as one value
    streamed  `SearchIndex.index_file` as shipped: pieces of TEXT_PIECE_BYTES staged in the
              connection's temporary database, then moved into place by SQL

For each it reports:

    grew_mb     peak RSS during indexing less RSS before it (jieba's dictionary and the
                imports are loaded first, so this is what the document costs)
    index_s     wall time of the indexing
    locked_s    time the write transaction held indexes.db's write lock
    search_ms   one search of the indexed document afterwards
    regex_ms    then one regex search (a heading near the end: the whole text is scanned)
    grew_with_regex_mb  peak RSS growth counting that regex search too
    chunks      chunks made

and, per variant, the growth exponent of grew_mb and index_s over the sizes (least squares
of log value on log size: 0 flat, 1 linear).

    python -m bench.large_text [--sizes 2,20,200] [--variants whole,streamed]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

QUERY = "营收 latency"
REGEX = r"^# Section 9\d{3}$"  # near the end of the 200 MB file: the whole text is scanned
ENGLISH = [
    "the",
    "quarter",
    "revenue",
    "grew",
    "while",
    "request",
    "latency",
    "fell",
    "after",
    "the",
    "cache",
    "index",
    "was",
    "rebuilt",
    "and",
    "the",
    "error",
    "rate",
    "of",
    "the",
    "query",
    "service",
    "dropped",
    "below",
    "the",
    "target",
    "set",
    "in",
    "the",
    "last",
    "report",
]
CHINESE = ["营收", "增长", "季度", "报告", "服务器", "延迟", "错误", "超时", "缓存", "索引", "查询", "利润"]


def write_log(path: Path, megabytes: float, seed: int = 7) -> None:
    """A Markdown log of about `megabytes` MB (1 MB = 2**20 bytes), less a byte."""
    rng = random.Random(seed)
    target = int(megabytes * 1024 * 1024) - 1
    size = 0
    with path.open("w", encoding="utf-8") as out:
        line_number = 0
        while True:
            line_number += 1
            if line_number % 50 == 1:
                line = f"# Section {line_number // 50 + 1}\n\n"
            else:
                line = " ".join(rng.choice(ENGLISH) for _ in range(rng.randint(20, 60)))
                if line_number % 3 == 0:
                    line += " " + "，".join(rng.choice(CHINESE) for _ in range(rng.randint(5, 20))) + "。"
                line += "\n\n" if line_number % 4 == 0 else "\n"
            encoded = len(line.encode("utf-8"))
            if size + encoded > target:
                break
            out.write(line)
            size += encoded


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux


def _child(variant: str, path: Path, db_path: Path) -> dict[str, Any]:
    """Index `path` once with `variant` in this process and measure it."""
    from generalAgent.config.settings import load_settings
    from generalAgent.documents import index as index_module
    from generalAgent.documents.index import SearchIndex
    from generalAgent.search.segmentation import load_jieba

    settings = load_settings(env_file=None).documents
    load_jieba()
    locked = [0.0]
    transaction = index_module.transaction

    def timed(conn: Any) -> Any:  # the write transaction, timed from BEGIN to COMMIT
        class Timed:
            def __enter__(self) -> Any:
                self.inner = transaction(conn)
                value = self.inner.__enter__()
                self.began = time.perf_counter()
                return value

            def __exit__(self, *exc: Any) -> Any:
                try:
                    return self.inner.__exit__(*exc)
                finally:
                    locked[0] += time.perf_counter() - self.began

        return Timed()

    index_module.transaction = timed  # type: ignore[assignment]
    with SearchIndex(db_path, settings) as index:
        index.conn.execute("SELECT 1")  # opened (and migrated) before the measurement
        before = _rss_kb()
        started = time.perf_counter()
        if variant == "whole":
            item_id, chunks = _index_whole(index, path, timed)
        else:
            document = index.index_file(path)
            item_id, chunks = document.item_id, document.total_chunks
        index_s = time.perf_counter() - started
        grew = _rss_kb() - before
        started = time.perf_counter()
        index.search_item(item_id, QUERY)
        search_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        index.search_item(item_id, REGEX, regex=True)
        regex_ms = (time.perf_counter() - started) * 1000
        grew_with_regex = _rss_kb() - before
    return {
        "grew_mb": round(grew / 1024, 1),
        "index_s": round(index_s, 2),
        "locked_s": round(locked[0], 2),
        "search_ms": round(search_ms, 1),
        "regex_ms": round(regex_ms, 1),
        "grew_with_regex_mb": round(grew_with_regex / 1024, 1),
        "chunks": chunks,
    }


def _index_whole(index: Any, path: Path, transaction: Any) -> tuple[str, int]:
    """What `index_file` did before it streamed: the whole document in memory at once."""
    import uuid

    from generalAgent.documents.extract import extract_document
    from generalAgent.documents.index import chunk_rows
    from generalAgent.search.chunking import chunk_blocks
    from generalAgent.search.schema import now_iso
    from generalAgent.search.storage import replace_chunks, segment_rows

    extracted = extract_document(path, index.settings)
    content, chunks = chunk_blocks(extracted.blocks, index.chunking)
    rows = chunk_rows(chunks)
    segmented = segment_rows(rows, index.segmenter, extracted.name)
    item_id = uuid.uuid4().hex
    stamp = now_iso()
    with transaction(index.conn) as conn:
        conn.execute(
            "INSERT INTO items (id, domain, category, title, content, source, created_at, updated_at)"
            " VALUES (?, 'documents', ?, ?, ?, 'file', ?, ?)",
            (item_id, extracted.file_type, extracted.name, content, stamp, stamp),
        )
        replace_chunks(conn, item_id, rows, segmented)
    return item_id, len(rows)


def exponent(sizes: list[float], values: list[float]) -> float | None:
    """Least-squares slope of log value on log size."""
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values, strict=True) if v > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return round(sum((x - mean_x) * (y - mean_y) for x, y in points) / spread, 2) if spread else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,20,200", help="file sizes in MB, comma-separated")
    parser.add_argument("--variants", default="whole,streamed")
    parser.add_argument("--child", nargs=3, metavar=("VARIANT", "FILE", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        variant, file, db = args.child
        print(json.dumps(_child(variant, Path(file), Path(db))))
        return
    sizes = [float(s) for s in args.sizes.split(",")]
    variants = args.variants.split(",")
    rows: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            path = Path(folder) / f"log-{size:g}MB.md"
            write_log(path, size)
            for variant in variants:
                db = Path(folder) / f"{variant}-{size:g}.db"
                done = subprocess.run(
                    [sys.executable, "-m", "bench.large_text", "--child", variant, str(path), str(db)],
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=ROOT,
                )
                rows[variant].append({"file_mb": size, **json.loads(done.stdout)})
            path.unlink()
    result = {
        "variants": rows,
        "exponents": {
            variant: {
                "grew_mb": exponent(sizes, [r["grew_mb"] for r in measured]),
                "index_s": exponent(sizes, [r["index_s"] for r in measured]),
            }
            for variant, measured in rows.items()
        },
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
