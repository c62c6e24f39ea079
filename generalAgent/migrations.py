"""Versioned schema migrations for our SQLite files (indexes.db, the session catalog).

Each database has an ordered list of named migrations. `migrate` applies the ones not yet
recorded in its `schema_migrations` table, each in its own transaction together with its
record, so a crash leaves every migration applied whole or not at all. The first migration
of each list creates the schema of release 0.1.0 with CREATE ... IF NOT EXISTS, so a
database made by that release (which had no migration table) is adopted as it is. A
database that records a migration this release does not know was written by a newer
release and is refused rather than guessed at.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    name       TEXT PRIMARY KEY,   -- e.g. 0002_session_reasoning_tokens
    applied_at REAL NOT NULL       -- unix seconds
)
"""


@dataclass(frozen=True)
class Migration:
    name: str  # "NNNN_what_it_does": the order is the list's, the number makes it visible
    apply: Callable[[sqlite3.Connection], None]


class NewerSchemaError(Exception):
    """The database was migrated by a newer release; the message says which migrations."""


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


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    conn.execute(MIGRATIONS_TABLE)
    return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY applied_at, name")]


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> list[str]:
    """Apply the migrations `conn` has not had yet, in order; returns their names.

    `conn` must be in autocommit mode (isolation_level=None). Two processes opening the
    same database at once queue on BEGIN IMMEDIATE, and the second sees the first's work.
    """
    known = {m.name for m in migrations}
    done = set(applied_migrations(conn))
    if done - known:
        raise NewerSchemaError(
            f"written by a newer generalAgent (migrations {', '.join(sorted(done - known))})"
        )
    applied = []
    for migration in migrations:
        if migration.name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (migration.name,)).fetchone():
                conn.execute("COMMIT")  # another process applied it while we waited
                continue
            migration.apply(conn)
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (migration.name, time.time()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(migration.name)
    return applied
