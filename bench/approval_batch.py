"""What judging each call when it runs costs: the wall time of a turn whose model message holds N calls.

Approvals are decided by one judge at the moment each call is about to run, after the
calls before it that touch the same file (tools/judge.py); the calls of a message run in
one ToolNode pass, those on different files side by side (graph/nodes/tools.py). This
measures a turn of N calls through the real compiled graph with the SQLite checkpointer
and a scripted model that answers at once, for four kinds of message, N = 1, 4, 16, 64:

- `read`: N `read_file` calls of one file (side by side);
- `write`: N `write_file` calls, each to its own file under outputs/ (no question);
- `write-one`: N `write_file` calls to one file (one after the other, in order);
- `mixed`: reads, writes and `edit_file` calls of the file the write before it made
  (each edit after its write, the rest side by side).

It reports the median milliseconds per turn (wall, and the CPU time of the process's
threads: under load the wall time of one turn spreads two-fold, the CPU time much less),
the growth exponent (the slope of log time
over log N from 16 to 64 calls: 1 means each call adds its own time, 0 that more calls
cost nothing more) and the time each call beyond 16 adds.

`--baseline DIR` runs the same turns against another checkout (e.g. /work/main, or
`git archive main | tar -x -C DIR`) in a subprocess, interleaved round by round with this
one, and prints its figures and the ratios (this / baseline): one run, one machine, side
by side (docs/benchmarks.md). Each side names the generalAgent it imported.

    .venv/bin/python -m bench.approval_batch [--rounds 3] [--baseline /work/main]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = (1, 4, 16, 64)
KINDS = ("read", "write", "write-one", "mixed")
TURNS = 6  # per size and kind, per round, after one turn that warms the session's caches


def message(kind: str, size: int, turn: int) -> list[dict[str, Any]]:
    """The calls of one model message of this kind."""
    from tests.support.scripted_model import tool_call

    calls = []
    for i in range(size):
        if kind == "read" or (kind == "mixed" and i % 3 == 0):
            calls.append(tool_call("read_file", {"path": "outputs/seed.md", "limit": 100 + turn * 100 + i}))
        elif kind == "mixed" and i % 3 == 2:
            edit = {
                "path": f"outputs/m{i - 1}.md",
                "old_string": f"turn {turn} ",
                "new_string": f"TURN {turn} ",
            }
            calls.append(tool_call("edit_file", edit))
        else:
            path = {"write": f"outputs/f{i}.md", "write-one": "outputs/one.md"}.get(kind, f"outputs/m{i}.md")
            calls.append(tool_call("write_file", {"path": path, "content": f"turn {turn} {i}\n"}))
    return calls


def measure(turns: int) -> dict[str, Any]:
    """Milliseconds per turn, by "kind/N", in this process's checkout."""
    import generalAgent
    from generalAgent.config.settings import load_settings
    from generalAgent.graph.checkpoints import open_sqlite_checkpointer
    from tests.support.agent import build_test_agent, thread, user_turn
    from tests.support.scripted_model import ScriptedChatModel, ai

    results: dict[str, Any] = {"code": str(Path(generalAgent.__file__).parent.parent)}
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
                times, cpu = [], []
                for turn in range(turns + 1):
                    script[:] = [ai("", *message(kind, size, turn)), ai("done")]
                    started, used = time.perf_counter(), time.process_time()
                    graph.invoke(user_turn(f"go {turn}", settings, session_id=session), thread(session))
                    if turn:  # the first turn of a session warms its caches
                        times.append((time.perf_counter() - started) * 1000)
                        cpu.append((time.process_time() - used) * 1000)
                results[f"{kind}/{size}"] = times
                results[f"cpu:{kind}/{size}"] = cpu
    return results


def summary(medians: dict[str, float]) -> dict[str, Any]:
    """Per kind: the growth exponent from 16 to 64 calls and the milliseconds each call
    beyond 16 adds."""
    kinds: dict[str, Any] = {}
    for kind in KINDS:
        low, high = medians.get(f"{kind}/16"), medians.get(f"{kind}/64")
        if low and high:
            kinds[kind] = {
                "growth_exponent_16_64": round(math.log(high / low) / math.log(64 / 16), 3),
                "ms_per_call_beyond_16": round((high - low) / (64 - 16), 2),
            }
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.turns)))
        return
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    code: dict[str, str] = {}
    # Imported here, in the parent: a child runs with the baseline's `bench` first on its path.
    from bench.side_by_side import child_runs

    runs = child_runs(Path(__file__).resolve(), ["--turns", str(args.turns)], args.rounds, args.baseline)
    for side, measured in runs:
        code[side] = measured.pop("code")
        into = ours if side == "this" else theirs
        for key, values in measured.items():
            into.setdefault(key, []).extend(values)
    mine = {key: statistics.median(values) for key, values in ours.items()}
    base = {key: statistics.median(values) for key, values in theirs.items()}
    report: dict[str, Any] = {"code": code, "turns_per_point": args.turns * args.rounds}
    for key, value in mine.items():
        if key.startswith("cpu:"):
            continue
        point: dict[str, Any] = {"ms_median": round(value, 1), "cpu_ms_median": round(mine[f"cpu:{key}"], 1)}
        if key in base:
            point["baseline_ms_median"] = round(base[key], 1)
            point["ratio"] = round(value / base[key], 3)
            point["baseline_cpu_ms_median"] = round(base[f"cpu:{key}"], 1)
            point["cpu_ratio"] = round(mine[f"cpu:{key}"] / base[f"cpu:{key}"], 3)
        report[key] = point
    report["growth"] = summary(mine)
    if base:
        report["baseline_growth"] = summary(base)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
