"""The checkpointer that stores each thread's state: SQLite in DATA_DIR/sessions.db."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver


def open_sqlite_checkpointer(path: Path) -> SqliteSaver:
    """A SqliteSaver usable from the chat's worker threads (it serialises access itself)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver
