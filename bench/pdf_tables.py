"""Tables in PDFs: cells read at the right row and column, rows recalled, tables merged across
pages, and a cell question's row in search_file's top 5, ours beside pdfplumber and the
product without table reading, in one run, printed as JSON.

The set is bench/data/pdf_tables (its README says where each PDF comes from): 16 tables in
seven PDFs made from Debian's own data, for development (`dev`) or held out (`heldout`, reported unless told otherwise: tune on `--split dev` only), with the
cell grid of every table (truth.json) and questions whose answer is one cell
(questions.jsonl).

Systems:

- `ours`: `read_pdf_tables` (documents/pdf.py), what query_table and `generalagent tables`
  read;
- `pdfplumber`: `page.extract_tables()` of each page (its default settings; it merges no
  table across pages, so each page's part is its own table);
- `before`: PDF_TABLES=false, the text layer with paragraphs rebuilt (no table output:
  its cell figures are 0 by construction; its hit@5 is measured).

Metrics, per table of the truth (header rows and body rows), against the one extracted
table that matches most of its cells:

- `cells`: the truth's cells found at the right row and column (each true row is matched
  to the extracted row that agrees with it in most columns, each extracted row used once);
- `rows`: the truth's rows found whole (every cell right);
- `merged`: tables of the truth spanning pages of which one extracted table holds 90% of
  the rows;
- `hit@5`: questions whose row is in one of the top 5 passages `search_file` shows (the
  hit's chunk and the chunks of its place folded into it): the row's key and the answer
  both there, within 200 characters of each other.

Cells are compared as `normalised` (NFKC, case folded, whitespace removed).

    python -m bench.pdf_tables [--split heldout|dev|all]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from generalAgent.config.settings import load_settings  # noqa: E402
from generalAgent.documents.pdf_tables import normalised  # noqa: E402

DATA = ROOT / "bench" / "data" / "pdf_tables"
TOP = 5
NEAR = 200

Grid = list[list[str]]


def ours(path: Path) -> list[Grid]:
    from generalAgent.documents.pdf import read_pdf_tables

    with path.open("rb") as handle:
        return [[*t.header, *t.rows] for t in read_pdf_tables(handle, path)]


def plumber(path: Path) -> list[Grid]:
    import pdfplumber

    grids: list[Grid] = []
    with pdfplumber.open(str(path)) as pdf:
        for page in pdf.pages:
            for table in page.extract_tables():
                grids.append([[cell or "" for cell in row] for row in table])
    return grids


def match_rows(truth: Grid, found: Grid) -> tuple[int, int]:
    """(cells right, rows whole) of `truth` in `found`, each found row used once."""
    keyed: dict[str, list[int]] = {}
    norm_found = [[normalised(c) for c in row] for row in found]
    for n, row in enumerate(norm_found):
        for value in row:
            if value:
                keyed.setdefault(value, []).append(n)
    used: set[int] = set()
    cells = whole = 0
    for row in truth:
        want = [normalised(c) for c in row]
        candidates = {n for value in want if value for n in keyed.get(value, [])} - used
        best, best_score = -1, 0
        for n in sorted(candidates):
            score = sum(
                1 for j, value in enumerate(want) if j < len(norm_found[n]) and norm_found[n][j] == value
            )
            if score > best_score:
                best, best_score = n, score
        if best >= 0:
            used.add(best)
            cells += best_score
            whole += best_score == len(want) and len(norm_found[best]) >= len(want)
    return cells, whole


def cell_scores(truth: list[dict[str, Any]], system: Any, split: str) -> dict[str, Any]:
    per: dict[str, list[float]] = {"cells": [], "total": [], "rows": [], "total_rows": []}
    by_language: dict[str, list[int]] = {}
    merged = multi = 0
    tables = 0
    for document in truth:
        if split != "all" and document["split"] != split:
            continue
        found = system(DATA / document["file"]) if system is not None else []
        for table in document["tables"]:
            tables += 1
            grid = [*table["header"], *table["rows"]]
            size = sum(len(r) for r in grid)
            best = max((match_rows(grid, f) for f in found), default=(0, 0))
            per["cells"].append(best[0])
            per["total"].append(size)
            per["rows"].append(best[1])
            per["total_rows"].append(len(grid))
            language = by_language.setdefault(table["language"], [0, 0])
            language[0] += best[0]
            language[1] += size
            if table["pages"][0] != table["pages"][1]:
                multi += 1
                body = max((match_rows(table["rows"], f)[1] for f in found), default=0)
                merged += body >= 0.9 * len(table["rows"])
    return {
        "tables": tables,
        "cells": round(sum(per["cells"]) / max(sum(per["total"]), 1), 3),
        "rows": round(sum(per["rows"]) / max(sum(per["total_rows"]), 1), 3),
        "cells_by_language": {k: round(v[0] / max(v[1], 1), 3) for k, v in sorted(by_language.items())},
        "multi_page_tables": multi,
        "merged": merged,
    }


def near(text: str, key: str, answer: str) -> bool:
    flat, k, a = normalised(text), normalised(key), normalised(answer)
    keys = [i for i in range(len(flat)) if flat.startswith(k, i)]
    answers = [i for i in range(len(flat)) if flat.startswith(a, i)]
    return any(abs(i - j) <= NEAR for i in keys for j in answers)


def hit_at_5(questions: list[dict[str, Any]], tables_on: bool) -> dict[str, Any]:
    from generalAgent.documents.index import SearchIndex
    from generalAgent.search.lookup import chunks_at

    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            env_file=None, paths={"data_dir": Path(tmp)}, documents={"pdf_tables": tables_on}
        )
        hits: dict[str, list[int]] = {}
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            items: dict[str, tuple[str, int]] = {}
            for question in questions:
                file = question["file"]
                if file not in items:
                    # As a user's index gets it: the text first, then the tables (documents/index.py).
                    index.index_file(DATA / file, tables_later=True)
                    document = index.index_file(DATA / file, tables_later=False)
                    items[file] = (document.item_id, document.total_chunks)
                item_id, total = items[file]
                found = index.search_item(item_id, [question["question"]], TOP, chunks=total)
                shown = [
                    "\n".join(
                        [hit.text, *(c.text for c in chunks_at(index.conn, item_id, list(hit.folded[:3])))]
                    )
                    for hit in found[:TOP]
                ]
                ok = any(near(text, question["key"], question["answer"]) for text in shown)
                hits.setdefault(question["language"], []).append(int(ok))
                hits.setdefault("all", []).append(int(ok))
    return {k: round(sum(v) / len(v), 3) for k, v in sorted(hits.items())}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="heldout", choices=["heldout", "dev", "all"])
    args = parser.parse_args(argv)
    truth = json.loads((DATA / "truth.json").read_text(encoding="utf-8"))
    questions = [
        json.loads(line)
        for line in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    questions = [q for q in questions if args.split == "all" or q["split"] == args.split]
    report = {
        "split": args.split,
        "questions": len(questions),
        "ours": {**cell_scores(truth, ours, args.split), "hit@5": hit_at_5(questions, True)},
        "pdfplumber": cell_scores(truth, plumber, args.split),
        "before": {**cell_scores(truth, None, args.split), "hit@5": hit_at_5(questions, False)},
    }
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
