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


def alive(pid: int) -> bool:
    """Still running (a process that has exited but not been waited for is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
