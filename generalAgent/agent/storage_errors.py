"""One line for the user when the data directory or a database file cannot be used.

A read-only or full data directory, a locked or damaged SQLite file: each is described
with the place and what to do, instead of a traceback. `check_data_dir` runs before the
chat or `-p` writes anything, so neither starts on a directory it cannot save to;
`describe_storage_error` covers what goes wrong later (the disk fills during a turn).
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from generalAgent.config.settings import PathSettings
from generalAgent.i18n import _
from generalAgent.private_storage import private_folder

# Enough to catch a disk that is already full, small enough to cost nothing at start-up.
PROBE_BYTES = 64 * 1024
_FULL = {errno.ENOSPC, errno.EDQUOT}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def check_data_dir(paths: PathSettings) -> str | None:
    """None when DATA_DIR can be created and written; else the message for the user."""
    try:
        private_folder(paths.data_dir)
        with tempfile.NamedTemporaryFile(dir=paths.data_dir, prefix=".write-check-") as probe:
            probe.write(b"\0" * PROBE_BYTES)
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as exc:
        return describe_storage_error(exc, paths) or _(
            "The data directory {folder} cannot be used: {reason}"
        ).format(folder=paths.data_dir, reason=exc)
    return None


def describe_storage_error(exc: BaseException, paths: PathSettings) -> str | None:
    """The message for a storage failure, or None if `exc` is not one."""
    data_dir = _shown(paths.data_dir)
    for cause in _chain(exc):
        if type(cause).__name__ == "CheckpointStoreError":  # graph/checkpoints.py, not imported at start-up
            return str(cause)
        if _is_postgres_connection_error(cause):
            return _(
                "Lost the connection to the PostgreSQL server that stores the conversation (DATABASE_URL). "
                "Try again when it is back; the turns saved so far are kept there."
            )
        kind = _kind(cause)
        if kind == "full":
            return _(
                "No space left for the data directory {folder}{free}. Free some space "
                "(or set DATA_DIR to another disk), then try again."
            ).format(folder=data_dir, free=_free(paths.data_dir))
        if kind == "read-only":
            reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause)
            return _(
                "The data directory {folder} is not writable ({reason}). Make it writable, or set "
                "DATA_DIR to a folder you can write to (in .env or the environment)."
            ).format(folder=data_dir, reason=reason)
        if kind == "locked":
            return _(
                "A database in the data directory is locked by another generalagent process. "
                "Wait for it to finish (or close it), then try again."
            )
        if kind == "damaged":
            return _(
                "A database in the data directory {folder} is damaged ({cause}). Move sessions.db or "
                "indexes.db aside, do not delete it (indexes.db also holds your knowledge base); a new "
                "one is created, or restore it from a backup."
            ).format(folder=data_dir, cause=cause)
    return None


def _kind(exc: BaseException) -> str | None:
    if isinstance(exc, OSError):
        if exc.errno in _FULL:
            return "full"
        if exc.errno in _READ_ONLY:
            return "read-only"
        return None
    if isinstance(exc, sqlite3.Error):
        text = str(exc).lower()
        if "disk is full" in text:
            return "full"
        if "readonly" in text or "read-only" in text or "unable to open database" in text:
            return "read-only"
        if "locked" in text or "busy" in text:
            return "locked"
        if "malformed" in text or "not a database" in text:
            return "damaged"
    return None


def _is_postgres_connection_error(exc: BaseException) -> bool:
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.OperationalError)


def _chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    return chain


def _shown(path: Path) -> str:
    try:
        return str(path.resolve())
    except OSError:
        return str(path)


def _free(path: Path) -> str:
    try:
        free = shutil.disk_usage(path).free
    except OSError:
        return ""
    return " " + _("({size} MB free)").format(size=f"{free / 1024**2:.1f}") if free < 1024**3 else ""
