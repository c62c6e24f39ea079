"""How long the first glossed question of a chat waits, with and without the warm-up.

    python -m bench.gloss_warmup [--rounds 3] [--typing 10 1]

A folder of twenty English Markdown files is indexed as the chat's background pass indexes
it. Then, per round and per typing time, fresh processes alternate: each first runs an
English search (the search engine loaded, as in a chat that has answered before), then
`cold` asks the lone Chinese question at once, and `warm` starts the chat's warm-up
(documents/gloss_warmup.py: jieba and CC-CEDICT loaded in a thread) and asks it after
`typing` seconds, the time a person takes to type the question. Each figure is that one
search's wall time in milliseconds; the question is glossed in every run (checked).

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

QUESTION = "怎么查看已加载的内核模块"

_SETUP = """
import sys
from pathlib import Path
from generalAgent.config.settings import load_settings
from generalAgent.documents.background_indexing import FolderIndexer
root = Path(sys.argv[1])
settings = load_settings(env_file=None, paths={"data_dir": root / "data"})
(root / "data").mkdir()
folder = root / "manuals"
folder.mkdir()
for n in range(20):
    (folder / f"m{n}.md").write_text(
        f"# Kernel modules {n}\\n\\n" + "Use lsmod to list the kernel modules that are loaded. " * 5
    )
assert FolderIndexer(settings.paths.indexes_db, settings.documents, folder.resolve()).start().wait(300)
"""

_ASK = """
import sys, time
from pathlib import Path
from generalAgent.config.settings import load_settings
from generalAgent.documents.gloss_warmup import GlossWarmup
from generalAgent.documents.search import search_document
root, mode, typing, question = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
settings = load_settings(env_file=None, paths={"data_dir": root / "data"})
folder = (root / "manuals").resolve()
search_document(settings.paths.indexes_db, settings.documents, folder / "m1.md", "kernel")
if mode == "warm":
    GlossWarmup(settings.paths.indexes_db, folder, use_jieba=settings.documents.use_jieba).request()
    time.sleep(typing)
began = time.perf_counter()
found = search_document(settings.paths.indexes_db, settings.documents, folder / "m3.md", question)
print(round((time.perf_counter() - began) * 1000, 1), bool(found.glossed))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--typing", type=float, nargs="+", default=[10.0, 1.0])
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gloss-warmup-"))
    subprocess.run([sys.executable, "-c", _SETUP, str(root)], check=True)
    figures: dict[str, Any] = {}
    for typing in args.typing:
        runs: dict[str, list[float]] = {"cold": [], "warm": []}
        for _ in range(args.rounds):
            for mode in ("cold", "warm"):
                asked = subprocess.run(
                    [sys.executable, "-c", _ASK, str(root), mode, str(typing), QUESTION],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                ms, glossed = asked.stdout.split()
                if glossed != "True":
                    raise SystemExit(f"the question was not glossed: {asked.stdout}{asked.stderr}")
                runs[mode].append(float(ms))
        figures[f"typing_{typing:g}s"] = {
            **runs,
            "cold_ms_median": statistics.median(runs["cold"]),
            "warm_ms_median": statistics.median(runs["warm"]),
        }
    print(json.dumps({"question": QUESTION, "figures": figures, "load": os.getloadavg()}, ensure_ascii=False))


if __name__ == "__main__":
    main()
