"""What judging each call when it runs costs: the wall time of a turn whose model message holds N calls.

Approvals are decided by one judge at the moment each call is about to run, after its
siblings (tools/judge.py): calls whose judgement a sibling can change (writes, edits,
commands) run one at a time, the others side by side. This measures a turn of N calls
through the real compiled graph with the SQLite checkpointer and a scripted model that
answers at once, for two kinds of message: N `read_file` calls (side by side) and N
`write_file` calls under outputs/ (no question, one at a time), N = 1, 4, 16.

`--baseline PATH` runs the same measurement against another checkout (e.g. `git archive
main`) in a subprocess, interleaved round by round with this one, and prints the ratios
(this / baseline): one run, one machine, side by side (docs/benchmarks.md).

    .venv/bin/python -m bench.approval_batch [--rounds 5] [--baseline /tmp/main]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = (1, 4, 16)
KINDS = ("read", "write")
TURNS = 8  # per size and kind, per round


def measure(turns: int) -> dict[str, list[float]]:
    """Milliseconds per turn, by "kind/N", in this process's checkout."""
    from generalAgent.config.settings import load_settings
    from generalAgent.graph.checkpoints import open_sqlite_checkpointer
    from tests.support.agent import build_test_agent, thread, user_turn
    from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # No summaries: a long history is cut without a model call, so only the turn is timed.
        settings = load_settings(
            env_file=None,
            model={"model_name": "bench", "openai_api_key": "sk"},
            paths={"data_dir": Path(tmp)},
            governance={"compact_history": False},
        )
        script: list[Any] = []
        model = ScriptedChatModel(responder=lambda request: script.pop(0) if script else ai("done"))
        _, graph = build_test_agent(settings, model, open_sqlite_checkpointer(settings.paths.sessions_db))
        for kind in KINDS:
            for size in SIZES:
                session = f"{kind}-{size}"
                workspace = settings.paths.workspaces_dir / session / "outputs"
                workspace.mkdir(parents=True, exist_ok=True)
                (workspace / "seed.md").write_text("seed\n")
                times = []
                for turn in range(turns + 1):
                    if kind == "read":
                        calls = [
                            tool_call("read_file", {"path": "outputs/seed.md", "limit": 100 + turn * 100 + i})
                            for i in range(size)
                        ]
                    else:
                        calls = [
                            tool_call(
                                "write_file", {"path": f"outputs/f{i}.md", "content": f"turn {turn} {i}\n"}
                            )
                            for i in range(size)
                        ]
                    script[:] = [ai("", *calls), ai("done")]
                    started = time.perf_counter()
                    graph.invoke(user_turn(f"go {turn}", settings, session_id=session), thread(session))
                    if turn:  # the first turn of a session warms its caches
                        times.append((time.perf_counter() - started) * 1000)
                results[f"{kind}/{size}"] = times
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(TURNS)))
        return
    here = Path(__file__).resolve().parent.parent
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    for _round in range(args.rounds):
        for checkout, into in ((here, ours), (args.baseline, theirs)):
            if checkout is None:
                continue
            env = {**os.environ, "PYTHONPATH": f"{checkout}{os.pathsep}{here}"}
            done = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--child"],
                cwd=checkout,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            for key, values in json.loads(done.stdout.strip().splitlines()[-1]).items():
                into.setdefault(key, []).extend(values)
    report: dict[str, Any] = {"turns_per_point": TURNS * args.rounds}
    for key, values in ours.items():
        point: dict[str, Any] = {"ms_median": round(statistics.median(values), 2)}
        if key in theirs:
            point["baseline_ms_median"] = round(statistics.median(theirs[key]), 2)
            point["ratio"] = round(point["ms_median"] / point["baseline_ms_median"], 3)
        report[key] = point
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
