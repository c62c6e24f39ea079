"""The session catalog: one row per chat session, beside LangGraph's checkpoints.

The checkpointer stores each thread's state; this table adds what a person needs to
pick a session again (title = first user line, age, turns) and the token totals that
`/usage` reports, without scanning checkpoints.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from generalAgent.i18n import _
from generalAgent.migrations import Migration, NewerSchemaError, Track, migrate, script, use_wal
from generalAgent.private_storage import private_file

# The catalog of release 0.1.0 (which created it without a migration table).
INITIAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_sessions (
    id            TEXT PRIMARY KEY,   -- also the LangGraph thread_id and the workspace folder
    title         TEXT NOT NULL,      -- first user line, shortened
    created_at    REAL NOT NULL,      -- unix seconds
    updated_at    REAL NOT NULL,
    turns         INTEGER NOT NULL DEFAULT 0,
    model_calls   INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,   -- as the provider reported them
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chat_sessions_updated ON chat_sessions(updated_at);
"""
# The catalog's schema history, oldest first: append, never edit a released one. Its track
# is the only one of sessions.db (migrations.py): LangGraph migrates its own tables.
MIGRATIONS = (
    Migration("0001_chat_sessions", script(INITIAL_SCHEMA)),
    # Reasoning tokens apart from the output they are part of (thinking models).
    Migration(
        "0002_session_reasoning_tokens",
        script("ALTER TABLE chat_sessions ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;"),
    ),
    # The folder a session was started in (`--continue` picks the latest there; NULL: older
    # sessions, never picked), and whether /sessions lists it (`-p` runs are not listed
    # unless --save: a script's hundred runs would bury the user's chats).
    Migration(
        "0003_session_folder_and_listing",
        script(
            "ALTER TABLE chat_sessions ADD COLUMN folder TEXT;\n"
            "ALTER TABLE chat_sessions ADD COLUMN listed INTEGER NOT NULL DEFAULT 1;"
        ),
    ),
    # The approval mode an editor left the session in (cli/acp/modes.py), so loading it
    # again restores it; NULL: none chosen (the terminal's sessions, older ones).
    Migration(
        "0004_session_approval_mode",
        script("ALTER TABLE chat_sessions ADD COLUMN approval_mode TEXT;"),
    ),
)
# Releases before the tracks knew the first three by name (migrations.py).
TRACK = Track("sessions", MIGRATIONS, adopts=tuple(m.name for m in MIGRATIONS[:3]))
TITLE_CHARS = 60
# A turn's usage added to the session's totals; its values come from `usage_values`.
ADD_USAGE = (
    "model_calls = model_calls + ?, input_tokens = input_tokens + ?, cached_tokens = cached_tokens + ?, "
    "output_tokens = output_tokens + ?, reasoning_tokens = reasoning_tokens + ?"
)
# How long a write waits for another process's (the checkpointer shares the file) to finish.
SQLITE_BUSY_SECONDS = 30


def usage_values(usage: Usage) -> tuple[int, ...]:
    return (
        usage.model_calls,
        usage.input_tokens,
        usage.cached_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
    )


class SessionStoreError(Exception):
    """The session catalog cannot be used; the message says why and what to do."""


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0  # as the provider reports it: reasoning included
    model_calls: int = 0
    reasoning_tokens: int = 0  # the part of output_tokens spent thinking

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_tokens + other.cached_tokens,
            self.output_tokens + other.output_tokens,
            self.model_calls + other.model_calls,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def cache_hit_ratio(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> Usage:
        """From a message's `usage_metadata` (input_token_details.cache_read is the cache hit,
        output_token_details.reasoning the thinking)."""
        if not metadata:
            return cls()
        details = metadata.get("input_token_details") or {}
        output_details = metadata.get("output_token_details") or {}
        return cls(
            input_tokens=int(metadata.get("input_tokens") or 0),
            cached_tokens=int(details.get("cache_read") or 0),
            output_tokens=int(metadata.get("output_tokens") or 0),
            model_calls=1,
            reasoning_tokens=int(output_details.get("reasoning") or 0),
        )


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str
    created_at: float
    updated_at: float
    turns: int
    usage: Usage
    folder: str | None = None  # where it was started; None before release 0.3
    approval_mode: str | None = None  # the editor's mode for it (cli/acp/modes.py); None: never chosen

    def age(self, now: float | None = None) -> str:
        seconds = max(0, (now or time.time()) - self.updated_at)
        if seconds >= 86400:
            return _("{count}d ago").format(count=int(seconds // 86400))
        if seconds >= 3600:
            return _("{count}h ago").format(count=int(seconds // 3600))
        if seconds >= 60:
            return _("{count}m ago").format(count=int(seconds // 60))
        return _("just now")


class SessionCatalog:
    def __init__(self, db_path: Path) -> None:
        private_file(db_path)  # conversations are the user's alone (0600 in a 0700 folder)
        self._conn = sqlite3.connect(
            db_path, check_same_thread=False, timeout=SQLITE_BUSY_SECONDS, isolation_level=None
        )
        self._conn.row_factory = sqlite3.Row
        # The checkpoints share this file; both open it so that a new file reuses freed pages
        # and hands them back (the checkpointer prunes old checkpoints as a session goes).
        self._conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        use_wal(self._conn, SQLITE_BUSY_SECONDS)
        self._conn.execute("PRAGMA synchronous=NORMAL")  # as the checkpoints (graph/checkpoints.py)
        try:
            migrate(self._conn, (TRACK,))
        except NewerSchemaError as exc:
            self._conn.close()
            raise SessionStoreError(
                _("{path} was {reason}; upgrade generalAgent, or point DATA_DIR elsewhere.").format(
                    path=db_path, reason=exc
                )
            ) from None

    def close(self) -> None:
        self._conn.close()

    @staticmethod
    def new_id(now: datetime | None = None) -> str:
        """Sortable, and unique without asking anyone: 20261121-2237-a3f90c1e. Four random
        bytes: with two, an editor opening 200 sessions in a minute gave two of them one id
        (and so one workspace and one history) about one time in three."""
        moment = now or datetime.now(UTC)
        return f"{moment.strftime('%Y%m%d-%H%M')}-{secrets.token_hex(4)}"

    def open_session(
        self,
        session_id: str,
        first_line: str,
        folder: Path | None = None,
        *,
        listed: bool = True,
        approval_mode: str | None = None,
    ) -> None:
        """List the session before its first turn runs, so a crash in that turn can be resumed.
        `folder` is where it was started; `listed=False` keeps it out of /sessions (a `-p` run),
        while its id still resumes it. Opening an unlisted session again listed lists it (a
        `-p` run resumed in the chat, or with --save). `approval_mode` is the editor's mode
        for the session; None (the terminal has no modes) keeps the one stored."""
        now = time.time()
        title = " ".join(first_line.split())[:TITLE_CHARS] or "(empty)"
        self._conn.execute(
            "INSERT INTO chat_sessions (id, title, created_at, updated_at, folder, listed, approval_mode) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET listed = MAX(listed, excluded.listed), "
            "folder = COALESCE(folder, excluded.folder), "
            "approval_mode = COALESCE(excluded.approval_mode, approval_mode)",
            (session_id, title, now, now, str(folder) if folder else None, int(listed), approval_mode),
        )

    def set_listed(self, session_id: str, listed: bool) -> None:
        """Put the session on /sessions and the picker, or take it off (its id still resumes it)."""
        self._conn.execute("UPDATE chat_sessions SET listed = ? WHERE id = ?", (int(listed), session_id))

    def set_approval_mode(self, session_id: str, mode: str) -> None:
        """Keep the mode the editor switched the session to. A session not in the catalog yet
        (no message sent) gets it when it is opened (`open_session`), not before: a session
        that never sent a message leaves no row behind."""
        self._conn.execute("UPDATE chat_sessions SET approval_mode = ? WHERE id = ?", (mode, session_id))

    def record_turn(self, session_id: str, first_line: str, usage: Usage) -> None:
        """Count a finished (or failed) turn; the row is created (listed) if it is missing."""
        now = time.time()
        title = " ".join(first_line.split())[:TITLE_CHARS] or "(empty)"
        self._conn.execute(
            "INSERT INTO chat_sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(id) DO NOTHING",
            (session_id, title, now, now),
        )
        self._conn.execute(
            f"UPDATE chat_sessions SET updated_at = ?, turns = turns + 1, {ADD_USAGE} WHERE id = ?",
            (time.time(), *usage_values(usage), session_id),
        )

    def add_usage(self, session_id: str, usage: Usage) -> None:
        """Tokens spent outside a counted turn (e.g. a failed attempt before /retry)."""
        self._conn.execute(
            f"UPDATE chat_sessions SET {ADD_USAGE} WHERE id = ?", (*usage_values(usage), session_id)
        )

    def recent(
        self, limit: int = 20, *, folder: Path | None = None, unlisted: bool = False
    ) -> list[SessionInfo]:
        """The latest sessions first: the listed ones (also the unlisted with `unlisted`),
        of every folder or of `folder` only."""
        where = ["1"] if unlisted else ["listed = 1"]
        values: list[Any] = []
        if folder is not None:
            where.append("folder = ?")
            values.append(str(folder))
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM chat_sessions WHERE {' AND '.join(where)} "
            "ORDER BY updated_at DESC LIMIT ?",
            (*values, limit),
        ).fetchall()
        return [_info(row) for row in rows]

    def get(self, session_id: str) -> SessionInfo | None:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM chat_sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return _info(row) if row else None

    def latest(self, *, folder: Path | None = None, unlisted: bool = False) -> SessionInfo | None:
        sessions = self.recent(limit=1, folder=folder, unlisted=unlisted)
        return sessions[0] if sessions else None

    def resolve(self, reference: str) -> SessionInfo:
        """ "last" (or "") is the latest session, listed or not (a `-p` run continued in the
        chat), else an id or a unique prefix of one.

        Raises LookupError with a message for the user.
        """
        if reference in {"", "last"}:
            latest = self.latest(unlisted=True)
            if latest is None:
                raise LookupError(_("No saved session to resume yet."))
            return latest
        matches = self.find(reference)
        exact = [m for m in matches if m.id == reference]
        if exact:
            return exact[0]
        if not matches:
            raise LookupError(
                _("No session id starts with {reference}; /sessions lists them.").format(
                    reference=repr(reference)
                )
            )
        if len(matches) > 1:
            ids = ", ".join(m.id for m in matches[:5])
            raise LookupError(
                _("{reference} matches several sessions: {ids}").format(reference=repr(reference), ids=ids)
            )
        return matches[0]

    def find(self, prefix: str) -> list[SessionInfo]:
        """Sessions whose id starts with `prefix` (ids are long; a unique prefix is enough)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM chat_sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY updated_at DESC",
            (escaped + "%",),
        ).fetchall()
        return [_info(row) for row in rows]

    def updated_before(self, moment: float) -> list[SessionInfo]:
        """Every session, listed or not, last used before `moment` (unix seconds), oldest first."""
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM chat_sessions WHERE updated_at < ? ORDER BY updated_at", (moment,)
        ).fetchall()
        return [_info(row) for row in rows]

    def delete(self, session_id: str) -> None:
        """Take the session off the list (its checkpoints and files go first: cli/sessions_commands.py)."""
        self._conn.execute("DELETE FROM chat_sessions WHERE id = ?", (session_id,))

    def rename(self, session_id: str, title: str) -> None:
        """Give the session the title the user chose (/rename), in place of its first line."""
        self._conn.execute(
            "UPDATE chat_sessions SET title = ? WHERE id = ?",
            (" ".join(title.split())[:TITLE_CHARS], session_id),
        )


_COLUMNS = (
    "id, title, created_at, updated_at, turns, input_tokens, cached_tokens, output_tokens, model_calls, "
    "reasoning_tokens, folder, approval_mode"
)


def _info(row: sqlite3.Row) -> SessionInfo:
    return SessionInfo(
        id=row["id"],
        title=row["title"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        turns=row["turns"],
        usage=Usage(
            input_tokens=row["input_tokens"],
            cached_tokens=row["cached_tokens"],
            output_tokens=row["output_tokens"],
            model_calls=row["model_calls"],
            reasoning_tokens=row["reasoning_tokens"],
        ),
        folder=row["folder"],
        approval_mode=row["approval_mode"],
    )
