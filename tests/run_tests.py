"""Run a slice of the test suite: smoke | unit | e2e | faults | all (default: all).

    python tests/run_tests.py smoke   # seconds: marked @pytest.mark.smoke
    python tests/run_tests.py unit    # unit and property tests (scripted models, no server)
    python tests/run_tests.py e2e     # the real client and CLI against the local test server
    python tests/run_tests.py faults  # fault injection (docs/reliability.md is written from it)
    python tests/run_tests.py all     # everything; what `make test` and CI run

Extra arguments go to pytest, e.g. `python tests/run_tests.py unit -k truncate`.

Suites run on one worker more than there are cores (pytest-xdist): most of the time goes to
end-to-end cases that start the real CLI and wait on it, so the cores idle a fifth of the time
with one worker each; three workers on two cores took the suite from 10.5 to 9.2 minutes.
`-n 0` (or any `-n`) in the extra arguments chooses otherwise. The fault report
(RELIABILITY_REPORT) is written by the controller from the cases its workers collected
(tests/faults/conftest.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

SUITES: dict[str, list[str]] = {
    "smoke": ["-m", "smoke", str(ROOT)],
    "unit": [str(ROOT / "unit"), str(ROOT / "property")],
    "e2e": [str(ROOT / "e2e")],
    "faults": [str(ROOT / "faults")],
    "all": [str(ROOT)],
}


def _workers(extra: list[str]) -> list[str]:
    """xdist's options, unless the caller chose."""
    chosen = any(arg == "-n" or arg.startswith(("-n", "--numprocesses", "-pno:xdist")) for arg in extra)
    if chosen or "no:xdist" in extra:
        return []
    # loadscope: a module's cases stay on one worker, so a module-scoped server starts once.
    return ["-n", str((os.cpu_count() or 1) + 1), "--dist", "loadscope"]


def main(argv: list[str]) -> int:
    suite = argv[0] if argv and not argv[0].startswith("-") else "all"
    if suite not in SUITES:
        print(f"unknown suite {suite!r}; choose one of: {', '.join(SUITES)}", file=sys.stderr)
        return 2
    extra = argv[1:] if argv and argv[0] == suite else argv
    paths = [p for p in SUITES[suite] if not p.startswith(str(ROOT)) or Path(p).exists()]
    command = [sys.executable, "-m", "pytest", "-q", *_workers(extra), *paths, *extra]
    return subprocess.call(command, cwd=ROOT.parent)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
