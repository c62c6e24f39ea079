"""Files as they were before the agent wrote them, so /rewind can put them back.

Every write of a file tool (tools/workspace.py: `Workspace.write_bytes`, the one write
path) in the user's working folder or under `outputs/` first keeps what the file held:
its bytes, content-addressed by SHA-256, and one row saying which session and turn wrote
which file, from what content (none: the file was created) to what. `temp/` is scratch
and not kept.

A turn is the position of the user's message in the session's history (0 for the first),
not the message's id: /retry after Ctrl-C removes the cancelled message and sends it again
with a new id, and the writes of the cancelled attempt belong to the same turn. Messages
are never removed from a session's history otherwise (a cut or /clear only moves where
the request starts), so the positions stay put.

Restoring to before turn `k` (`restore_plan`) puts each file back as the first write of
turn `k` or later found it; a file whose content is no longer what the agent last wrote
(the user changed it since) is a conflict and is left alone. A file that is gone now (a
command the agent ran removed it, say) is written back: nothing anyone wrote is lost by
that. A restored file gets the permission bits it had then (a 0600 file comes back 0600). Once done, the
rows of turn `k` and later are dropped with the content nothing else refers to, so the
store holds one copy of each version the session can still go back to: it grows with the
writes, never with their square, and `forget_session` empties a session's share.

The store is a SQLite file of its own in the data folder (`snapshots.db`), so it needs no
migration of sessions.db, and writes to it are one short transaction each.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from generalAgent.migrations import Migration, Track, migrate, script, use_wal
from generalAgent.private_storage import private_file

STORE_FILE = "snapshots.db"
SCHEMA = """
-- One copy of each file version a session can still go back to, by its SHA-256.
CREATE TABLE IF NOT EXISTS snapshot_contents (
    sha256  TEXT PRIMARY KEY,
    content BLOB NOT NULL
) WITHOUT ROWID;
-- One row per write of a file tool, in the order they happened (id).
CREATE TABLE IF NOT EXISTS file_writes (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session       TEXT NOT NULL,     -- the session's id (its workspace; sub-agents share it)
    turn          INTEGER NOT NULL,  -- position of the user's message in the history, from 0
    path          TEXT NOT NULL,     -- the file's real path
    before_sha256 TEXT,              -- what the file held before; NULL: it did not exist
    after_sha256  TEXT NOT NULL,     -- what the write left (a conflict when the file differs now)
    written_at    REAL NOT NULL      -- unix seconds
);
CREATE INDEX IF NOT EXISTS file_writes_by_turn ON file_writes(session, turn);
"""
MIGRATIONS = (
    Migration("0001_file_snapshots", script(SCHEMA)),
    # The permission bits the file had before the write (NULL: created, or kept before
    # this column), so a file restored after it was removed is not recreated readable by all.
    Migration("0002_file_modes", script("ALTER TABLE file_writes ADD COLUMN before_mode INTEGER;")),
)
TRACK = Track("snapshots", MIGRATIONS, adopts=("0001_file_snapshots",))
BUSY_SECONDS = 30


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


@dataclass(frozen=True)
class FileWrite:
    """One write of a file tool, as recorded."""

    turn: int
    path: str
    before: str | None  # SHA-256 of the content before; None: the write created the file
    after: str
    before_mode: int | None = None  # the permission bits before (None: created, or not kept)


@dataclass(frozen=True)
class FileRestore:
    """What going back does to one file.

    `action`: "restore" (write `content_sha256` back), "delete" (the agent created it),
    "unchanged" (it already holds what it held then), "conflict" (changed by someone else
    since the agent's last write: left as it is). `mode`: the permission bits to restore."""

    path: str
    action: str
    content_sha256: str | None = None
    mode: int | None = None


def restore_plan(writes: Sequence[FileWrite], current: Mapping[str, str | None]) -> list[FileRestore]:
    """For the writes being undone (in the order they happened) and each file's current
    SHA-256 (None: missing), what to do to each file, in the order first written. A file
    missing now is written back (no one's content is overwritten by that)."""
    first: dict[str, FileWrite] = {}
    last: dict[str, FileWrite] = {}
    for write in writes:
        first.setdefault(write.path, write)
        last[write.path] = write
    plan = []
    for path, earliest in first.items():
        now = current.get(path)
        if now == earliest.before:
            plan.append(FileRestore(path, "unchanged", earliest.before))
        elif now is not None and now != last[path].after:
            plan.append(FileRestore(path, "conflict", earliest.before, earliest.before_mode))
        elif earliest.before is None:
            plan.append(FileRestore(path, "delete"))
        else:
            plan.append(FileRestore(path, "restore", earliest.before, earliest.before_mode))
    return plan


class SnapshotStore:
    """The snapshots of one data folder (module docstring)."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._ready = False

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> SnapshotStore:
        return cls(data_dir / STORE_FILE)

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            private_file(self.db_path)  # what the user's files held: theirs alone
        conn = sqlite3.connect(self.db_path, timeout=BUSY_SECONDS, isolation_level=None)
        if not self._ready:
            use_wal(conn, BUSY_SECONDS)
            migrate(conn, (TRACK,))
            self._ready = True
        return conn

    def exists(self) -> bool:
        return self.db_path.exists()

    def record(
        self,
        session: str,
        turn: int,
        path: Path,
        before: bytes | None,
        after: bytes,
        before_mode: int | None = None,
    ) -> None:
        """Keep `before` (what `path` held; None: it did not exist) and its permission bits
        for a write of `after`."""
        before_sha = digest(before) if before is not None else None
        with closing(self._connect()) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if before is not None:
                    conn.execute(
                        "INSERT OR IGNORE INTO snapshot_contents (sha256, content) VALUES (?, ?)",
                        (before_sha, before),
                    )
                conn.execute(
                    "INSERT INTO file_writes"
                    " (session, turn, path, before_sha256, after_sha256, written_at, before_mode)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (session, turn, str(path), before_sha, digest(after), time.time(), before_mode),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def writes_since(self, session: str, turn: int) -> list[FileWrite]:
        """The writes of turn `turn` and later, in the order they happened."""
        if not self.exists():
            return []
        with closing(self._connect()) as conn:
            rows = conn.execute(
                "SELECT turn, path, before_sha256, after_sha256, before_mode FROM file_writes"
                " WHERE session = ? AND turn >= ? ORDER BY id",
                (session, turn),
            ).fetchall()
        return [FileWrite(*row) for row in rows]

    def content(self, sha256: str) -> bytes:
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT content FROM snapshot_contents WHERE sha256 = ?", (sha256,)).fetchone()
        if row is None:
            raise LookupError(f"no snapshot {sha256[:12]}")
        return bytes(row[0])

    def drop_since(self, session: str, turn: int) -> None:
        """Forget the writes of turn `turn` and later (they have been gone back over)."""
        self._delete("DELETE FROM file_writes WHERE session = ? AND turn >= ?", (session, turn))

    def forget_session(self, session: str) -> None:
        """Forget everything kept for `session` (the session is being deleted)."""
        self._delete("DELETE FROM file_writes WHERE session = ?", (session,))

    def _delete(self, sql: str, parameters: tuple[object, ...]) -> None:
        if not self.exists():
            return
        with closing(self._connect()) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(sql, parameters)
                conn.execute(
                    "DELETE FROM snapshot_contents WHERE sha256 NOT IN"
                    " (SELECT before_sha256 FROM file_writes WHERE before_sha256 IS NOT NULL)"
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def stored_bytes(self) -> int:
        """The kept contents' size (for the storage benchmark)."""
        if not self.exists():
            return 0
        with closing(self._connect()) as conn:
            return int(
                conn.execute("SELECT COALESCE(SUM(LENGTH(content)), 0) FROM snapshot_contents").fetchone()[0]
            )


def permission_bits(path: Path) -> int | None:
    """The permission bits of the regular file `path` (the link itself is never followed)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


def snapshot_hook(
    store: SnapshotStore, session: str, turn: int, read_current: Callable[[Path], bytes | None]
) -> Callable[[Path, bytes], Callable[[], None]]:
    """What the write path calls before writing `data` to a file: it reads what the file
    holds now and returns the step that records it once the write has succeeded (a failed
    write leaves the file as it was, and nothing to go back to)."""

    def before_write(path: Path, data: bytes) -> Callable[[], None]:
        before = read_current(path)
        mode = permission_bits(path) if before is not None else None
        return lambda: store.record(session, turn, path, before, data, mode)

    return before_write
