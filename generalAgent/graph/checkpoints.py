"""The checkpointer that stores each thread's state: SQLite by default, PostgreSQL on request.

Without DATABASE_URL every thread lives in DATA_DIR/sessions.db (SqliteSaver). With it,
checkpoints go to PostgreSQL (PostgresSaver, the `postgres` extra), so several machines or
a LangGraph deployment can share conversations; the session list (titles, token totals)
stays in DATA_DIR. Either way the chat's worker threads share one saver.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from generalAgent.config.settings import PathSettings
from generalAgent.display import one_line


class CheckpointStoreError(Exception):
    """The checkpoint database cannot be used; the message says what to do, without the password."""


# How long a checkpoint write waits for another writer of sessions.db (the catalog, a
# second chat) before it fails.
SQLITE_BUSY_SECONDS = 30
POSTGRES_CONNECT_SECONDS = 10
# Sub-agents run in threads of their own; a few connections let them checkpoint in parallel.
POSTGRES_POOL_SIZE = 4
# Two processes starting against an empty database would both run the saver's migrations.
SETUP_LOCK = "SELECT pg_advisory_lock(hashtext('generalagent:checkpoint-setup'))"
SETUP_UNLOCK = "SELECT pg_advisory_unlock(hashtext('generalagent:checkpoint-setup'))"


def open_checkpointer(paths: PathSettings) -> BaseCheckpointSaver:
    """PostgresSaver when DATABASE_URL is set, else SqliteSaver on DATA_DIR/sessions.db."""
    if paths.database_url is not None:
        return open_postgres_checkpointer(paths.database_url.get_secret_value())
    return open_sqlite_checkpointer(paths.sessions_db)


def close_checkpointer(saver: BaseCheckpointSaver) -> None:
    """Close the SQLite connection or the PostgreSQL pool behind `saver`."""
    cast(Any, saver).conn.close()  # both savers keep their connection (or pool) in `conn`


def open_sqlite_checkpointer(path: Path) -> SqliteSaver:
    """A SqliteSaver usable from the chat's worker threads (it serialises access itself)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, timeout=SQLITE_BUSY_SECONDS)
    conn.execute("PRAGMA journal_mode=WAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def open_postgres_checkpointer(url: str) -> Any:
    """A PostgresSaver on a small connection pool; `CheckpointStoreError` says what is wrong."""
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise CheckpointStoreError(
            "DATABASE_URL is set but PostgreSQL support is not installed: "
            "pip install 'generalAgent[postgres]', or unset DATABASE_URL to keep sessions in SQLite."
        ) from None
    where = describe_database_url(url)
    # The connection settings PostgresSaver is written for (as in its from_conn_string).
    options: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    try:
        # One direct connection first: a server that is down or a wrong password fails at
        # once with the reason, where the pool would keep retrying until its timeout.
        with psycopg.connect(url, connect_timeout=POSTGRES_CONNECT_SECONDS, **options) as conn:
            conn.execute(SETUP_LOCK)
            try:
                PostgresSaver(conn).setup()
            finally:
                conn.execute(SETUP_UNLOCK)
    except psycopg.OperationalError as exc:
        raise CheckpointStoreError(
            f"Cannot connect to PostgreSQL at {where} (DATABASE_URL): {_first_line(exc, url).rstrip('.')}. "
            "Check that the server runs and the URL, user and password are right, or unset "
            "DATABASE_URL to keep sessions in SQLite."
        ) from None
    except psycopg.Error as exc:
        raise CheckpointStoreError(
            f"PostgreSQL at {where} (DATABASE_URL) refused the checkpoint tables: {_first_line(exc, url)}"
        ) from None
    # The pool hands out dict_row connections (`options`), which its type cannot say.
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=POSTGRES_POOL_SIZE,
        kwargs={**options, "connect_timeout": POSTGRES_CONNECT_SECONDS},
        # A connection the server dropped (a restart) is replaced instead of failing a turn.
        check=ConnectionPool.check_connection,
        open=False,
        name="generalagent-checkpoints",
    )
    pool.open()
    return PostgresSaver(cast("ConnectionPool[psycopg.Connection[dict[str, Any]]]", pool))


def describe_database_url(url: str) -> str:
    """host:port/database (user), never the password."""
    if "://" not in url:
        return "the server in DATABASE_URL"
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    database = parts.path.lstrip("/") or "(default database)"
    user = f" as {parts.username}" if parts.username else ""
    return f"{host}{port}/{database}{user}"


def _first_line(exc: BaseException, url: str) -> str:
    text = one_line(str(exc).strip().splitlines()[0], 300) if str(exc).strip() else type(exc).__name__
    password = urlsplit(url).password if "://" in url else None
    return text.replace(password, "***") if password else text
