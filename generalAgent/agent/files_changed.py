"""The files a turn wrote that no file tool recorded: what a command the user approved made.

The file tools record every file they write (tools/run_context.py); a shell command's
writes are found by comparing the workspace's outputs/ and temp/ before and after the
turn (mtime and size). The chat, `-p`, the editor and the Python API all name them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

# A written file is found by comparing the workspace before and after the turn; a folder
# of many thousands of files stops the walk there rather than stall the answer.
MAX_FILES_COMPARED = 20_000
# The workspace folders a command writes results and scratch to.
COMPARED_FOLDERS = ("outputs", "temp")

FileState = dict[Path, tuple[int, int]]


def snapshot_files(folders: Iterable[Path]) -> FileState:
    """(mtime, size) of every file under `folders`, links not followed, at most MAX_FILES_COMPARED."""
    state: FileState = {}
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                path = Path(top) / name
                try:
                    info = path.lstat()
                except OSError:
                    continue
                state[path] = (info.st_mtime_ns, info.st_size)
                if len(state) >= MAX_FILES_COMPARED:
                    return state
    return state


def written_files(before: FileState, after: FileState) -> list[Path]:
    """Files that are new or changed between two snapshots, in path order."""
    return sorted(path for path, stamp in after.items() if before.get(path) != stamp)


def workspace_state(root: Path) -> FileState:
    """The snapshot of a workspace's outputs/ and temp/ that `written_files` compares."""
    return snapshot_files(root / name for name in COMPARED_FOLDERS)
