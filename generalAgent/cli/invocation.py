"""How the user started this command, so the hints we print can be typed as they are.

`make run` starts `.venv/bin/generalagent`, which is not on PATH: a hint that says
`generalagent --resume ID` would fail there. The hint names the command the way it was
run: `generalagent` when that is what PATH finds, else the path that was used, or
`python -m generalAgent`.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

COMMAND = "generalagent"


def command_hint(argv0: str | None = None) -> str:
    """What to type to run this command again from the current folder."""
    started = argv0 if argv0 is not None else sys.argv[0]
    if not started or started.endswith(("__main__.py", "-c")) or Path(started).name == "__main__.py":
        return "python -m generalAgent"
    found = shutil.which(COMMAND)
    if found and Path(started).name == COMMAND and _same_file(found, started):
        return COMMAND
    shown = Path(started)
    if not shown.is_absolute() and shown.parent == Path("."):
        return f"./{shown}"
    try:
        relative = os.path.relpath(Path(started).resolve(), Path.cwd())
    except ValueError:  # another drive on Windows
        return str(Path(started).resolve())
    return relative if not relative.startswith("..") else str(Path(started).resolve())


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
