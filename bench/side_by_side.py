"""Run a benchmark's child from this checkout and from a baseline checkout in the same run.

Used by the benchmarks that compare this tree with another commit's (`--baseline DIR`):
each round runs `SCRIPT --child ARGS` once per side, the order swapped every round so that
neither side is always first on a machine whose load drifts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def child_runs(
    script: Path, child_args: Sequence[str], rounds: int, baseline: Path | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """("this" or "baseline", the child's last JSON line) for each run, round by round."""
    order = [("this", HERE), ("baseline", baseline)]
    for round_ in range(rounds):
        for side, checkout in order if round_ % 2 == 0 else order[::-1]:
            if checkout is None:
                continue
            env = {**os.environ, "PYTHONPATH": f"{checkout}{os.pathsep}{HERE}"}
            if checkout != HERE:
                env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave the other checkout as it was
            done = subprocess.run(
                [sys.executable, str(script), "--child", *child_args],
                cwd=checkout,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            yield side, json.loads(done.stdout.strip().splitlines()[-1])
