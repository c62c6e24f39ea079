"""Files and folders of the data home that only their owner may read: 0600 and 0700.

sessions.db holds every conversation, indexes.db every indexed document and note, the
input history what the user typed, logs what went wrong, workspaces the uploads: none
of it is for the other accounts of the machine, whatever the umask. A folder is created
0700 (an existing one is left as the user made it); a data file is created 0600 before
SQLite or a log opens it, and an existing one of ours is tightened to 0600. SQLite gives
its -wal and -shm files the mode of the database file.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(path: Path) -> Path:
    """`path` and its missing parents created 0700; an existing folder is not changed."""
    missing = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=FOLDER_MODE)
        with contextlib.suppress(OSError):  # mkdir's mode passes through the umask
            folder.chmod(FOLDER_MODE)
    return path


def private_file(path: Path) -> Path:
    """`path` created empty with mode 0600 if missing (its folder 0700), or tightened to
    0600 when it is a regular file that others can read; returns `path`."""
    private_folder(path.parent)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        tighten(path)
    else:
        os.close(descriptor)
        tighten(path)  # the umask may have taken bits off, never added: this only makes sure
    return path


def tighten(path: Path) -> None:
    """Mode 0600 for a regular file of this user that others may read; anything else is left."""
    with contextlib.suppress(OSError):
        info = path.lstat()
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077:
            path.chmod(FILE_MODE)
