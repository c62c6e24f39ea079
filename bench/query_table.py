"""query_table over big sheets: what a first question costs (imports, load, GROUP BY) and its
peak memory, beside openpyxl, at 5k, 50k and 500k rows, with the growth exponent.

The sheet is the test suite's (tests/support/documents.py, `make_sales_sheet`): a title row,
a merged group header, N data rows and an uncalculated formula column. Each figure is taken
in a fresh Python process, so a first question pays its imports as a user's does; the
variants run in lockstep (one of each, then again) and the median of `--runs` is kept:

- `first_question`: load the sheet into SQLite and run the GROUP BY (the agent has imported
  the loader at start; anything the load imports, such as openpyxl, is counted);
- `load`, `group_by`: each alone;
- `peak_mb`: the process's peak resident memory (VmHWM; the interpreter's own ~20 MB included);
- `openpyxl_read`: import openpyxl and read the same cells with `iter_rows(values_only=True)`,
  the floor for any loader built on openpyxl;
- with `--baseline-tree DIR` (a checkout of another commit, e.g. main's), that tree's
  `first_question` in the same lockstep.

The growth exponent of a figure is log(t at the largest size / t at the smallest) /
log(size ratio): 1.0 is linear.

    python -m bench.query_table [--rows 5000 50000 500000] [--runs 3] [--baseline-tree /work/main]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GROUP_BY = (
    'SELECT "Region", SUM("Revenue Q1") AS q1, SUM("Revenue Q2") AS q2, COUNT(*) AS n '
    'FROM "Sales" GROUP BY "Region" ORDER BY q1 DESC'
)

# Each variant is a small program run in a fresh interpreter; it prints JSON of its timings
# (wall seconds, and CPU seconds of the process, which other work on the machine inflates less).
_FIRST_QUESTION = """
import json, resource, sys, time
sys.path.insert(0, {tree!r})
from pathlib import Path
from generalAgent.documents.tables import load_tables
wall, cpu = time.perf_counter(), time.process_time()
database = load_tables(Path({path!r}))
load, load_cpu = time.perf_counter() - wall, time.process_time() - cpu
result = database.query({sql!r})
assert len(result.rows) == 5, result.rows
# VmHWM is this process's own peak; ru_maxrss would carry the parent's across fork+exec
# (the parent held the openpyxl-written sheet).
status = Path("/proc/self/status")
lines = status.read_text().splitlines() if status.exists() else []
hwm = [int(line.split()[1]) for line in lines if line.startswith("VmHWM:")]
peak = (hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
print(json.dumps({{"load": load, "load_cpu": load_cpu, "group_by": result.seconds, "peak_mb": peak,
                  "first_question": load + result.seconds, "first_question_cpu": time.process_time() - cpu}}))
"""
_OPENPYXL = """
import json, time
wall, cpu = time.perf_counter(), time.process_time()
import openpyxl
workbook = openpyxl.load_workbook({path!r}, read_only=True, data_only=True)
rows = [list(r) for r in workbook["Sales"].iter_rows(values_only=True)]
workbook.close()
assert len(rows) == {rows} + 3
print(json.dumps({{"openpyxl_read": time.perf_counter() - wall, "openpyxl_read_cpu": time.process_time() - cpu}}))
"""


def _run(program: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd="/")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _measure(path: Path, rows: int, runs: int, baseline: Path | None) -> dict[str, float]:
    programs = {
        "new": _FIRST_QUESTION.format(tree=str(ROOT), path=str(path), sql=GROUP_BY),
        "openpyxl": _OPENPYXL.format(path=str(path), rows=rows),
    }
    if baseline is not None:
        programs["baseline"] = _FIRST_QUESTION.format(tree=str(baseline), path=str(path), sql=GROUP_BY)
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        for name, program in programs.items():
            for key, value in _run(program).items():
                label = f"baseline_{key}" if name == "baseline" else key
                samples.setdefault(label, []).append(value)
    return {key: round(statistics.median(values), 4) for key, values in samples.items()}


def _exponent(small: float, large: float, ratio: float) -> float:
    return round(math.log(large / small) / math.log(ratio), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[5_000, 50_000, 500_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-tree", type=Path, default=None)
    args = parser.parse_args()

    from tests.support.documents import make_sales_sheet

    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            started = time.perf_counter()
            path = make_sales_sheet(Path(folder) / f"sales-{rows}.xlsx", rows)
            print(f"wrote {rows:,} rows in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            figures[str(rows)] = measured = _measure(path, rows, args.runs, args.baseline_tree)
            measured["load_vs_openpyxl_cpu"] = round(measured["load_cpu"] / measured["openpyxl_read_cpu"], 3)
            if "baseline_load_cpu" in measured:
                measured["load_vs_baseline_cpu"] = round(
                    measured["load_cpu"] / measured["baseline_load_cpu"], 3
                )
                measured["peak_vs_baseline"] = round(measured["peak_mb"] / measured["baseline_peak_mb"], 3)
    smallest, largest = str(min(args.rows)), str(max(args.rows))
    ratio = max(args.rows) / min(args.rows)
    growth = {
        key: _exponent(figures[smallest][key], figures[largest][key], ratio)
        for key in ("load_cpu", "openpyxl_read_cpu", "baseline_load_cpu")
        if key in figures[smallest] and ratio > 1
    }
    fifty = figures.get("50000", {})
    print(
        json.dumps(
            {
                "sizes": figures,
                "growth_exponent": growth,
                "first_question_at_50k_under_1s": fifty.get("first_question", math.inf) < 1.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
