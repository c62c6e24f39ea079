"""docs/reliability.md must list exactly the fault suite's cases, each with a passing result."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.faults.report import REPORT_ENV, parse_rows

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_report_matches_the_suite(tmp_path: Path) -> None:
    collected_report = tmp_path / "reliability.md"
    collection = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/faults"],
        cwd=ROOT,
        env={**os.environ, REPORT_ENV: str(collected_report)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert collection.returncode == 0, collection.stdout + collection.stderr
    collected = [
        (fault, outcome) for fault, outcome, _ in parse_rows(collected_report.read_text(encoding="utf-8"))
    ]
    committed_rows = parse_rows((ROOT / "docs" / "reliability.md").read_text(encoding="utf-8"))
    committed = [(fault, outcome) for fault, outcome, _ in committed_rows]
    assert len(collected) >= 30
    assert committed == collected, "docs/reliability.md is out of date: run `make reliability`"
    assert {result for _, _, result in committed_rows} == {"passed"}, "regenerate after a full, passing run"
