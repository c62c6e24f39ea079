"""What the dictionary gloss of a Chinese query costs (search/query_translation.py).

    python -m bench.query_gloss [--rounds 5]

- `load`: a fresh process importing the gloss and loading CC-CEDICT (once per process, on
  the first Chinese query over documents that are not Chinese): wall seconds and the growth
  of the process's peak RSS, beside the same process loading jieba alone;
- `gloss_ms_p50`: the dictionary candidates of one of the bilingual set's Chinese questions,
  dictionary loaded (their choice by the searched chunks is part of the search, below);
- `find_chunks_ms_p50`: the search of one question in the English Debian Reference (the
  bilingual set's PDF, indexed as the product indexes it), the lone Chinese question (glossed)
  against the same question as a list of one (never glossed: the search as before), and the
  English question, each alternated question by question in one run. The index is the same
  either way: nothing is stored for the gloss. The glossed search includes reading each
  candidate's doclist (one statement) and choosing among them.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.document_corpus import BILINGUAL, document_path
from bench.retrieval_quality import BILINGUAL_QUESTIONS, in_two_passes, load_document_questions
from generalAgent.config.settings import load_settings
from generalAgent.documents.index import SearchIndex
from generalAgent.search.lookup import find_chunks
from generalAgent.search.query_translation import gloss_candidates, load_dictionary
from generalAgent.search.segmentation import load_jieba
from generalAgent.search.storage import item_rowid_range

_LOAD = """
import json, resource, time
from generalAgent.search.segmentation import load_jieba
load_jieba()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if {dictionary}:
    from generalAgent.search.query_translation import load_dictionary
    assert load_dictionary() is not None
print(json.dumps({{"seconds": time.perf_counter() - start,
                  "peak_rss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}}))
"""


def fresh_load(dictionary: bool) -> dict[str, float]:
    code = _LOAD.format(dictionary=dictionary)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def p50_ms(run: Callable[[], Any], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    loads = [(fresh_load(True), fresh_load(False)) for _ in range(3)]
    report: dict[str, Any] = {
        "load": {
            "dictionary_seconds": [round(with_["seconds"], 3) for with_, _ in loads],
            "dictionary_peak_rss_mb": [
                round(with_["peak_rss_mb"] - without["peak_rss_mb"], 1) for with_, without in loads
            ],
        }
    }
    load_jieba()
    assert load_dictionary() is not None
    questions = load_document_questions(BILINGUAL_QUESTIONS)
    chinese = [q["question"] for q in questions if q["lang"] == "zh-en"]
    english = [q["question"] for q in questions if q["lang"] == "en"]
    glossing = [t for q in chinese for t in p50_ms(lambda q=q: gloss_candidates(q), args.rounds)]
    report["gloss_ms_p50"] = round(statistics.median(glossing), 3)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(env_file=None, paths={"data_dir": Path(tmp)})
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            english_pdf = next(d for d in BILINGUAL if d.key == "debian-reference-en")
            document = in_two_passes(index, document_path(english_pdf))
            scope = item_rowid_range(index.conn, document.item_id)
            times: dict[str, list[float]] = {"zh glossed": [], "zh as before": [], "en": []}
            for zh, en in zip(chinese, english, strict=True):
                for name, query in (("zh glossed", zh), ("zh as before", [zh]), ("en", en)):
                    times[name] += p50_ms(
                        lambda query=query: find_chunks(
                            index.conn, query, index.segmenter, 10, rowid_range=scope
                        ),
                        args.rounds,
                    )
            report["find_chunks_ms_p50"] = {name: round(statistics.median(t), 2) for name, t in times.items()}
            report["chunks"] = document.total_chunks
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
