"""query_table over a 50k-row sheet: what loading costs, and what a GROUP BY then costs.

The sheet is the test suite's (tests/support/documents.py, `make_sales_sheet`): a title row, a merged
group header, 50,000 data rows and an uncalculated formula column. Printed side by side:

- `load_seconds`: the file read into the in-memory database (once per file and change:
  the tool keeps it), and `openpyxl_read_seconds`, a bare openpyxl read of the same cells
  in the same run, the floor any reader built on openpyxl pays;
- `group_by_seconds`: median of a GROUP BY with SUM and COUNT over all rows, beside
  `python_group_by_seconds`, the same sums done in Python over rows already in memory.

    python -m bench.query_table [--rows 50000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    import openpyxl

    from generalAgent.documents.tables import load_tables
    from tests.support.documents import make_sales_sheet

    with tempfile.TemporaryDirectory() as folder:
        path = make_sales_sheet(Path(folder) / "sales.xlsx", args.rows)
        started = time.perf_counter()
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
        rows = [list(r) for r in workbook["Sales"].iter_rows(values_only=True)]
        workbook.close()
        openpyxl_seconds = time.perf_counter() - started

        started = time.perf_counter()
        database = load_tables(path)
        load_seconds = time.perf_counter() - started

        query_times, python_times = [], []
        for _ in range(args.runs):
            query_times.append(database.query(GROUP_BY).seconds)
            started = time.perf_counter()
            sums: dict[str, list[int]] = {}
            for row in rows[3:]:
                total = sums.setdefault(row[0], [0, 0, 0])
                total[0] += row[2]
                total[1] += row[3]
                total[2] += 1
            python_times.append(time.perf_counter() - started)
        database.close()
    print(
        json.dumps(
            {
                "rows": args.rows,
                "load_seconds": round(load_seconds, 3),
                "openpyxl_read_seconds": round(openpyxl_seconds, 3),
                "group_by_seconds": round(statistics.median(query_times), 4),
                "python_group_by_seconds": round(statistics.median(python_times), 4),
                "group_by_under_1s": statistics.median(query_times) < 1.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
