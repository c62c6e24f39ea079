"""What an embedding endpoint nothing listens at costs indexing and search, printed as JSON.

A user whose EMBEDDING_MODEL names a model at an endpoint that is not running (a local
server not started, a closed port) still indexes and searches with keywords; the embedding
attempts should cost next to nothing. In one fresh process, `--files` small text files
(English and Chinese) are indexed (`create_index`) and searched (`search_in_index`) once
with EMBEDDING_BASE_URL at a closed loopback port (`refused_s`) and once with semantic
search off (`off_s`, EMBEDDING_MODEL empty: the floor), each in its own empty DATA_DIR,
imports and a first pass of each (jieba's dictionary, the client's modules) done first; `ratio` is refused / off.

`--baseline DIR` runs the same in another checkout (e.g. `git archive <commit> | tar -x -C
DIR`) in a subprocess, alternately with this one for `--runs` rounds, and prints its
figures and this / baseline.

    .venv/bin/python -m bench.unreachable_embeddings [--files 5] [--runs 3] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TEXTS = (
    "The pump must be primed before the first start. Check the seal every 500 hours.",
    "水泵首次启动前必须灌泵。每运行500小时检查一次密封。",
)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def measure(files: int) -> dict[str, Any]:
    """Seconds to index and search `files` files with the endpoint refused and with it off,
    and which checkout's code ran (`code`)."""
    import openai  # noqa: F401  (imported by the first embedding call: not what is measured)

    import generalAgent
    from generalAgent.config.settings import load_settings
    from generalAgent.documents import create_index, search_in_index

    figures: dict[str, Any] = {"code": str(Path(generalAgent.__file__).parent.parent)}
    # Each first once, not measured: a process's first indexing loads jieba's dictionary, its
    # first embedding call the client's modules.
    for name, model in (
        ("warm_off", ""),
        ("warm_refused", "test-embed"),
        ("off", ""),
        ("refused", "test-embed"),
    ):
        with tempfile.TemporaryDirectory() as home:
            root = Path(home)
            os.environ.update(
                DATA_DIR=str(root / "data"),
                GENERALAGENT_CONFIG_DIR=str(root / "config"),
                EMBEDDING_MODEL=model,
                EMBEDDING_BASE_URL=f"http://127.0.0.1:{closed_port()}/v1",
                EMBEDDING_LOCAL_MODEL="",
            )
            settings = load_settings(env_file=None)
            paths = []
            for number in range(files):
                path = root / f"manual-{number}.txt"
                path.write_text(f"{TEXTS[number % 2]} ({number})\n" * 20, encoding="utf-8")
                paths.append(path)
            start = time.perf_counter()
            for path in paths:
                create_index(path, settings)
                search_in_index(path, "seal", settings=settings)
            figures[f"{name}_s"] = time.perf_counter() - start
    del figures["warm_off_s"], figures["warm_refused_s"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.files)))
        return
    sides: dict[str, dict[str, list[float]]] = {"this": {}, "baseline": {}}
    code: dict[str, str] = {}
    # Imported here, in the parent: a child runs with the baseline's `bench` first on its path.
    from bench.side_by_side import child_runs

    runs = child_runs(Path(__file__).resolve(), ["--files", str(args.files)], args.runs, args.baseline)
    for side, measured in runs:
        code[side] = measured.pop("code")
        for key, value in measured.items():
            sides[side].setdefault(key, []).append(value)
    report: dict[str, Any] = {"code": code, "files": args.files, "runs": args.runs}
    for side, figures in sides.items():
        if not figures:
            continue
        medians = {key: statistics.median(values) for key, values in figures.items()}
        report[side] = {key: round(value, 3) for key, value in medians.items()}
        report[side]["ratio"] = round(medians["refused_s"] / medians["off_s"], 2)
    if sides["baseline"]:
        report["refused_this_over_baseline"] = round(
            report["this"]["refused_s"] / report["baseline"]["refused_s"], 3
        )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
