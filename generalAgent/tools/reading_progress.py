"""How far a tool's long reading has got (indexing a large file), sent to the front end.

The indexer reports (stage, chunks done, chunks expected); this turns that into a custom
stream event `{"reading": {...}}` at most every PROGRESS_SECONDS, which the terminal shows
on its status line beside "Ctrl-C to interrupt" (cli/render.py). The model never sees it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

PROGRESS_SECONDS = 0.25


def reading_progress(
    writer: Callable[[Any], None] | None, name: str
) -> Callable[[str, int, int], None] | None:
    """A progress callback for `SearchIndex.index_file` that writes to `writer` (the
    tool runtime's stream writer), or None when there is nowhere to write."""
    if writer is None:
        return None
    last = [0.0]

    def report(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_SECONDS and done < total:
            return
        last[0] = now
        try:
            writer({"reading": {"name": name, "stage": stage, "done": done, "total": max(total, done)}})
        except Exception:  # no stream to write to (a direct invoke): progress is a nicety
            last[0] = float("inf")

    return report
