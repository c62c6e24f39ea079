"""The machine's processes as /proc shows them, for tests that check what a process left running."""

from __future__ import annotations

from pathlib import Path


def processes_with(marker: str) -> list[int]:
    """The pids whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def gone(pid: int) -> bool:
    """Exited and collected by its parent. (A process whose main thread is a zombie may still
    have threads being torn down, its pipes still open: only this is the end of it.)"""
    return not Path(f"/proc/{pid}").exists()
