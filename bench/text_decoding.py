"""Decoding one large text file: the encoding guessed from a prefix and the text decoded once.

A generated 40 MB UTF-8 file (English and Chinese lines, bench/large_text.py's log) is read
three ways, in this process, one after the other:

    twice       what read_file did before issue 37: the whole file decoded to test for
                UTF-8, then decoded again to read it (the baseline)
    once        `decode_text_replacing` as shipped: the encoding guessed from the first
                TEXT_SAMPLE_BYTES, the text decoded once
    streamed    the indexer's reader (`documents/text.py`), 1 MB pieces

and the same file with one bad byte in its middle by `once` and `streamed` (before, both
refused it: "not text in an encoding generalAgent knows"). For each: seconds (best of
--repeat) and, for the damaged file, the note the reader gets.

    python -m bench.text_decoding [--megabytes 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _best(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = run()
        times.append(time.perf_counter() - started)
    return round(min(times), 3), value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=float, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from bench.large_text import write_log
    from generalAgent.documents import text as text_reader
    from generalAgent.documents.encoding import decode_text_replacing
    from generalAgent.documents.reading import Reading

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.md"
        write_log(path, args.megabytes)
        clean = path.read_bytes()
    middle = clean.index(b"\n", len(clean) // 2) + 1
    damaged = clean[:middle] + b"\xe6\x8a\n" + clean[middle:]  # one character cut short

    def twice(data: bytes) -> str:
        data.decode("utf-8")  # "is it UTF-8?" on the whole file
        return data.decode("utf-8")

    def streamed(data: bytes) -> Reading:
        reading = Reading(total=len(data))
        for _ in text_reader._text_pieces(io.BytesIO(data), "log.md", reading):
            pass
        return reading

    results: dict[str, Any] = {"megabytes": args.megabytes, "repeat": args.repeat}
    results["clean_twice_s"], _ = _best(args.repeat, lambda: twice(clean))
    results["clean_once_s"], _ = _best(args.repeat, lambda: decode_text_replacing(clean, "log.md"))
    results["clean_streamed_s"], _ = _best(args.repeat, lambda: streamed(clean))
    results["damaged_once_s"], decoded = _best(args.repeat, lambda: decode_text_replacing(damaged, "log.md"))
    results["damaged_streamed_s"], reading = _best(args.repeat, lambda: streamed(damaged))
    results["once_vs_twice"] = round(results["clean_once_s"] / results["clean_twice_s"], 2)
    results["damaged_note"] = decoded.note("log.md")
    results["damaged_streamed_note"] = " ".join(reading.notes)
    print(json.dumps(results, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
