"""A search of an indexed folder from the command line beside `generalagent -p hi`, in one run.

    python -m bench.folder_search_speed [--runs 5]

The folder is the `unseen` set's two folders in one (bench/document_corpus.py, `UNSEEN`:
seven PDFs, 424 pages), copied to a temporary folder and indexed first with
`generalagent index FOLDER`, as a user would before asking (the seconds that takes are
reported too). Then, alternately in fresh processes: `generalagent search FOLDER QUERY`
(a different question of the set each run, keyword search: EMBEDDING_MODEL is empty) and
`generalagent -p hi` answered by the local test server (tests/support), wall time of each.
The target (issue 39): the folder search within 1.5x `-p hi`. Prints one JSON object.
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
    ratios = [s / p for s, p in zip(wall["search"], wall["print_hi"], strict=True)]
    return {
        "runs": runs,
        "files": len(UNSEEN),
        "index_folder_s": round(index_s, 2),
        "search_folder_s_median": round(statistics.median(wall["search"]), 3),
        "print_hi_s_median": round(statistics.median(wall["print_hi"]), 3),
        "ratio_median": round(statistics.median(ratios), 2),
        "ratios": [round(r, 2) for r in ratios],
        "target": "<= 1.5",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(measure(args.runs), indent=2))


if __name__ == "__main__":
    main()
