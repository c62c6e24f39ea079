"""Versioned schema migrations of our SQLite files, one version track per package.

A file may hold the tables of several packages: indexes.db holds the index's (search and
documents: the `index` track, search/schema.py) and the knowledge base's (the `knowledge`
track, knowledge/schema.py). Each package owns its track, an ordered list of migrations,
and the file's `schema_versions` table keeps one row per track: how many of its migrations
the file has had. A connection applies and checks only the tracks it is given: documents
open indexes.db knowing nothing of the knowledge base, and the knowledge store adds its
track when it opens the file, so no package imports one above it to keep the file whole.

Each migration runs in its own transaction together with its track's new version, so a
crash leaves every migration applied whole or not at all. A file whose version on a track
the connection knows is higher than this release's was written by a newer release: it is
refused, before anything is written, rather than guessed at. Tracks it does not know are
left alone.

Releases before the tracks recorded migrations by name in one `schema_migrations` table
per file. A track without a row adopts its version from there (`Track.adopts`: the names
its first migrations had then), and the table gets one row those releases do not know
(`TRACKS_MARK`), so they refuse a file this release has upgraded instead of misreading it.
The first migration of each track creates the schema of release 0.1.0 (which had no
migration table at all) with CREATE ... IF NOT EXISTS, so such a file is adopted as it is.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

VERSIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_versions (
    track      TEXT PRIMARY KEY,   -- the package that owns the tables, e.g. 'index', 'knowledge'
    version    INTEGER NOT NULL,   -- migrations of the track applied, in order
    updated_at REAL NOT NULL       -- unix seconds
)
"""
# Where releases before the tracks recorded their migrations, by name. Kept: the tracks
# adopt from it, and the mark below makes those releases refuse the file.
LEGACY_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    name       TEXT PRIMARY KEY,   -- e.g. 0002_session_reasoning_tokens
    applied_at REAL NOT NULL       -- unix seconds
)
"""
TRACKS_MARK = "9000_schema_versions"


@dataclass(frozen=True)
class Migration:
    name: str  # "NNNN_what_it_does": NNNN is its version in the track
    apply: Callable[[sqlite3.Connection], None]


@dataclass(frozen=True)
class Track:
    """One package's tables in a file: their migrations, oldest first (append, never edit
    a released one), and the names its first ones had before the tracks (`adopts`)."""

    name: str
    migrations: tuple[Migration, ...]
    adopts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.adopts) > len(self.migrations):
            raise ValueError(f"track {self.name!r} adopts more versions than it has")

    @property
    def version(self) -> int:
        return len(self.migrations)


class NewerSchemaError(Exception):
    """The database was migrated by a newer release; the message says which track."""


def script(sql: str) -> Callable[[sqlite3.Connection], None]:
    """A migration that runs `sql`, statement by statement (executescript would commit)."""

    def run(conn: sqlite3.Connection) -> None:
        for statement in statements(sql):
            conn.execute(statement)

    return run


def statements(sql: str) -> list[str]:
    """The complete statements of a script, in order (CREATE TRIGGER bodies included)."""
    found, pending = [], ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    if pending.strip():
        found.append(pending.strip())
    return found


def schema_versions(conn: sqlite3.Connection) -> dict[str, int]:
    """The version of each track the file records; {} before the tracks."""
    try:
        return {row[0]: row[1] for row in conn.execute("SELECT track, version FROM schema_versions")}
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise


def use_wal(conn: sqlite3.Connection, seconds: float) -> None:
    """Switch `conn`'s file to WAL, waiting up to `seconds` for other connections.

    SQLite does not wait on the busy timeout for this pragma: when several connections open
    a new file at once (two processes, or two calls of one message on their threads), all
    but one may meet "database is locked" while the first switches the file. Once the file
    is in WAL mode the pragma succeeds at once.
    """
    execute_when_unlocked(conn, "PRAGMA journal_mode = WAL", seconds)


def execute_when_unlocked(conn: sqlite3.Connection, sql: str, seconds: float) -> None:
    """Run `sql`, trying again while another connection's lock fails it ("database is
    locked"), for up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def migrate(conn: sqlite3.Connection, tracks: Sequence[Track]) -> list[str]:
    """Bring `conn`'s file up to date on `tracks`, in order; returns the migrations applied.

    `conn` must be in autocommit mode (isolation_level=None). Nothing is written when the
    file is up to date (opening costs one read), nor when it is refused. Two processes
    opening the same file at once queue on BEGIN IMMEDIATE, and the second sees the
    first's work.
    """
    recorded = schema_versions(conn)
    for track in tracks:
        _refuse_newer(track, recorded.get(track.name, 0))
    if all(recorded.get(track.name) == track.version for track in tracks):
        return []
    applied: list[str] = []
    for track in tracks:
        applied += _advance(conn, track)
    return applied


def _advance(conn: sqlite3.Connection, track: Track) -> list[str]:
    """`track`'s missing migrations, one transaction each (the version is read again inside
    it: another process may have applied some while this one waited)."""
    applied = []
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = _version(conn, track)
            _refuse_newer(track, version)
            if version < track.version:
                track.migrations[version].apply(conn)
                applied.append(track.migrations[version].name)
                version += 1
            conn.execute(
                "INSERT INTO schema_versions (track, version, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (track) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at"
                " WHERE version != excluded.version",
                (track.name, version, time.time()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if version == track.version:
            return applied


def _version(conn: sqlite3.Connection, track: Track) -> int:
    """The track's version: its row, else what the names of the older table stand for."""
    conn.execute(VERSIONS_TABLE)
    row = conn.execute("SELECT version FROM schema_versions WHERE track = ?", (track.name,)).fetchone()
    conn.execute(LEGACY_TABLE)
    conn.execute(
        "INSERT OR IGNORE INTO schema_migrations (name, applied_at) VALUES (?, ?)", (TRACKS_MARK, time.time())
    )
    if row is not None:
        return int(row[0])
    legacy = {name for (name,) in conn.execute("SELECT name FROM schema_migrations")}
    adopted = 0
    while adopted < len(track.adopts) and track.adopts[adopted] in legacy:
        adopted += 1
    return adopted


def _refuse_newer(track: Track, version: int) -> None:
    if version > track.version:
        raise NewerSchemaError(
            f"written by a newer generalAgent (its {track.name} schema is at version {version};"
            f" this one knows up to {track.version})"
        )
