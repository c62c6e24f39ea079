"""A search of an indexed folder from the command line beside `generalagent -p hi`, in one run.

    python -m bench.folder_search_speed [--runs 5]

The folder is the `unseen` set's two folders in one (bench/document_corpus.py, `UNSEEN`:
seven PDFs, 424 pages), copied to a temporary folder and indexed first with
`generalagent index FOLDER`, as a user would before asking (the seconds that takes are
reported too). Then, alternately in fresh processes: `generalagent search FOLDER QUERY`
(a different question of the set each run, keyword search: EMBEDDING_MODEL is empty) and
`generalagent -p hi` answered by the local test server (tests/support), wall time of each.
The target (issue 39): the folder search within 1.5x `-p hi`.

In the chat (`chat`), in this process on the same index: the folder search as the
search_folder tool runs it (`search_folder`: every file's size and time checked, the lookup,
each hit's context, the budgets, the answer rendered) against the index lookup alone
(`find_chunks` over the folder's documents), each question of the set once, alternately;
target: within 2x the lookup. And the first question in a chat started in the folder:
with the background indexing (documents/background_indexing.py) the folder is indexed
while the user types (`background_index_s`, a fresh data folder), so that question's search
is one of the above; without it the search indexes first (`first_search_unindexed_s`).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.document_corpus import UNSEEN, document_path

DATA = Path(__file__).resolve().parent / "data" / "unseen_questions.jsonl"


def timed(command: list[str], **kwargs: Any) -> tuple[float, subprocess.CompletedProcess]:
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    return time.perf_counter() - began, done


def measure(runs: int) -> dict[str, Any]:
    from tests.support.openai_server import ScriptedOpenAIServer

    questions = [json.loads(line)["question"] for line in DATA.read_text(encoding="utf-8").splitlines()]
    questions = [q for q in questions if isinstance(q, str)]
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(default_text="hello") as server:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for document in UNSEEN:
            shutil.copyfile(document_path(document), folder / Path(document.file_name).name)
        env = {
            **os.environ,
            "MODEL_NAME": "bench-model",
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": server.base_url,
            "DATA_DIR": str(Path(tmp) / "data"),
            "GENERALAGENT_CONFIG_DIR": str(Path(tmp) / "user-config"),
            "EMBEDDING_MODEL": "",
        }
        agent = [sys.executable, "-m", "generalAgent"]
        index_s, done = timed([*agent, "index", str(folder)], env=env, cwd=tmp)
        if done.returncode != 0:
            raise SystemExit(f"index failed: {done.stderr[-1000:]}")
        wall: dict[str, list[float]] = {"search": [], "print_hi": []}
        for n in range(runs):
            seconds, done = timed(
                [*agent, "search", str(folder), questions[n % len(questions)]], env=env, cwd=tmp
            )
            if done.returncode not in (0, 1):  # 1: nothing found
                raise SystemExit(f"search failed: {done.stderr[-1000:]}")
            wall["search"].append(seconds)
            seconds, done = timed([*agent, "-p", "hi"], env=env, cwd=tmp)
            if done.stdout.strip() != "hello":
                raise SystemExit(f"-p did not answer: {done.stderr[-1000:]}")
            wall["print_hi"].append(seconds)
        chat = measure_chat(Path(tmp), folder, questions)
    ratios = [s / p for s, p in zip(wall["search"], wall["print_hi"], strict=True)]
    return {
        "chat": chat,
        "runs": runs,
        "files": len(UNSEEN),
        "index_folder_s": round(index_s, 2),
        "search_folder_s_median": round(statistics.median(wall["search"]), 3),
        "print_hi_s_median": round(statistics.median(wall["print_hi"]), 3),
        "ratio_median": round(statistics.median(ratios), 2),
        "ratios": [round(r, 2) for r in ratios],
        "target": "<= 1.5",
    }


def measure_chat(tmp: Path, folder: Path, questions: list[str]) -> dict[str, Any]:
    """The chat's folder search against the index lookup, and the first question's wait
    with and without the background indexing (see the module)."""
    from generalAgent.config.settings import load_settings
    from generalAgent.documents.background_indexing import FolderIndexer
    from generalAgent.documents.folder import render_folder_search, search_folder
    from generalAgent.documents.index import SearchIndex
    from generalAgent.search.lookup import find_chunks

    settings = load_settings(env_file=None, paths={"data_dir": tmp / "data"})
    db, documents = settings.paths.indexes_db, settings.documents
    with SearchIndex(db, documents) as index:
        items = [row[0] for row in index.conn.execute("SELECT item_id FROM documents")]
        search_ms: list[float] = []
        lookup_ms: list[float] = []
        for question in questions:
            began = time.perf_counter()
            render_folder_search(search_folder(db, documents, folder, question, conn=index.conn))
            search_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            find_chunks(
                index.conn,
                question,
                index.segmenter,
                documents.search_max_results_default * 2,
                item_filter=f"i.id IN ({','.join('?' * len(items))})",
                filter_params=items,
            )
            lookup_ms.append((time.perf_counter() - began) * 1000)
    fresh = load_settings(env_file=None, paths={"data_dir": tmp / "fresh"})
    indexer = FolderIndexer(fresh.paths.indexes_db, fresh.documents, folder).start()
    indexer.wait()
    unindexed = load_settings(env_file=None, paths={"data_dir": tmp / "unindexed"})
    began = time.perf_counter()
    search_folder(unindexed.paths.indexes_db, unindexed.documents, folder, questions[0])
    first_search_s = time.perf_counter() - began
    ratios = [s / max(lookup, 1e-6) for s, lookup in zip(search_ms, lookup_ms, strict=True)]
    return {
        "questions": len(questions),
        "search_folder_ms_median": round(statistics.median(search_ms), 2),
        "lookup_ms_median": round(statistics.median(lookup_ms), 2),
        "ratio_median": round(statistics.median(ratios), 2),
        "target": "<= 2",
        "background_index_s": indexer.progress().seconds,
        "first_search_unindexed_s": round(first_search_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(measure(args.runs), indent=2))


if __name__ == "__main__":
    main()
