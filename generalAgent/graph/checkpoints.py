"""The checkpointer that stores each thread's state: SQLite by default, PostgreSQL on request.

Without DATABASE_URL every thread lives in DATA_DIR/sessions.db (SqliteSaver). With it,
checkpoints go to PostgreSQL (PostgresSaver, the `postgres` extra), so several machines or
a LangGraph deployment can share conversations; the session list (titles, token totals)
stays in DATA_DIR. Either way the chat's worker threads share one saver.

Storage stays linear in the conversation. LangGraph saves a checkpoint of the whole state
after every step (about five per turn), each holding the whole history, so keeping them
all grows with the square of the turns (1.35 GB after 400 turns). Nothing here travels in
time: `--resume`, `/retry`, a pending approval and the repair after Ctrl-C all start from
a thread's latest checkpoint and its pending writes. So every save deletes the thread's
older checkpoints and their writes, SQLite hands freed pages back to the file system
incrementally (`auto_vacuum=INCREMENTAL`), and a database from before this rule is pruned
and compacted once, the first time it is opened.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlsplit

import ormsgpack
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde import jsonplus
from langgraph.checkpoint.sqlite import SqliteSaver

from generalAgent.config.install import install_hint
from generalAgent.config.settings import PathSettings
from generalAgent.display import one_line
from generalAgent.migrations import use_wal
from generalAgent.private_storage import private_file

LOGGER = logging.getLogger(__name__)


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


def forget_thread(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Drop what `saver` keeps in memory about a thread whose session closed (its stored
    checkpoints stay: the session can be resumed)."""
    packer = getattr(saver, "_packer", None)
    if isinstance(packer, MessagePacker):
        packer.forget(thread_id)


def close_checkpointer(saver: BaseCheckpointSaver) -> None:
    """Close the SQLite connection or the PostgreSQL pool behind `saver`."""
    cast(Any, saver).conn.close()  # both savers keep their connection (or pool) in `conn`


# Free pages are handed back once they pass a quarter of the file (and 4 MB): below that
# the next checkpoint reuses them anyway, and shrinking the file only to grow it again
# costs writes. Checked every VACUUM_CHECK_PUTS saves, as the check itself is a query.
VACUUM_CHECK_PUTS = 16
VACUUM_MIN_FREE_PAGES = 1024
# A save writes the whole state (a long session: a megabyte or more) to the WAL, which
# SQLite copies into the database every WAL_CHECKPOINT_PAGES pages and then reuses from
# the start; the size limit also truncates it then, so the WAL stays about a megabyte
# instead of keeping its largest size (4 MB by default) beside a small session.
WAL_CHECKPOINT_PAGES = 256
WAL_SIZE_LIMIT = 1024 * 1024
AUTO_VACUUM_INCREMENTAL = 2  # the value `PRAGMA auto_vacuum` reports for INCREMENTAL


# Threads whose latest messages are kept packed (the chat's session and its sub-agents).
PACKED_THREADS = 8


class MessagePacker:
    """Checkpoints serialised as LangGraph's JsonPlusSerializer does, byte for byte, with
    each message packed once.

    Every save holds the whole history, and LangGraph saves two to five times a turn: at
    400 turns packing the same 800 messages again was more than half of a turn's time.
    A thread's messages from its last save are kept packed; a save packs only the
    messages it has not seen. A message is recognised by identity (the very object, kept
    alive beside its bytes), which is sound because a message in the state is never
    changed in place once it has an id: every change of the history (an update, a repair,
    a cut) puts new objects in the list. A message without an id is packed every time:
    LangGraph's reducer gives it one in place, after the save of the step's input has
    packed it without. Any other serializer (an encrypted one) is used as it is.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (thread, namespace) -> id(message) -> (the message, its packed form)
        self._threads: OrderedDict[tuple[str, str], dict[int, tuple[BaseMessage, Any]]] = OrderedDict()

    def forget(self, thread_id: str) -> None:
        """The thread's session closed: its packed messages are let go now, not when
        PACKED_THREADS newer threads push them out."""
        with self._lock:
            for key in [key for key in self._threads if key[0] == thread_id]:
                del self._threads[key]

    @staticmethod
    def applies_to(serde: Any) -> bool:
        return type(serde) is jsonplus.JsonPlusSerializer and hasattr(jsonplus, "_msgpack_default")

    def dumps(self, thread: tuple[str, str], checkpoint: Checkpoint) -> tuple[str, bytes]:
        with self._lock:
            previous = self._threads.pop(thread, {})
        current: dict[int, tuple[BaseMessage, Any]] = {}

        def default(value: Any) -> Any:
            if isinstance(value, BaseMessage) and value.id is not None:
                known = previous.get(id(value)) or current.get(id(value))
                if known is None or known[0] is not value:
                    known = (value, jsonplus._msgpack_default(value))
                current[id(value)] = known
                return known[1]
            return jsonplus._msgpack_default(value)

        packed = ormsgpack.packb(checkpoint, default=default, option=jsonplus._option)
        with self._lock:
            self._threads[thread] = current
            while len(self._threads) > PACKED_THREADS:
                self._threads.popitem(last=False)
        return "msgpack", packed


@dataclass(frozen=True)
class StorageReport:
    """What opening the store did to an older database; empty when nothing was done."""

    pruned_checkpoints: int = 0
    bytes_before: int = 0
    bytes_after: int = 0

    def summary(self) -> str:
        """One line for the user when an older database was pruned; "" otherwise."""
        if not self.pruned_checkpoints:
            return ""
        return (
            f"sessions.db: removed {self.pruned_checkpoints:,} old checkpoints, "
            f"{_megabytes(self.bytes_before)} → {_megabytes(self.bytes_after)}"
        )


class PrunedSqliteSaver(SqliteSaver):
    """SqliteSaver that keeps only each thread's latest checkpoint and the writes pending on it.

    Older checkpoints go in the transaction that saves the new one. Writes of an older step can be
    saved after its successor checkpoint (LangGraph saves both in the background), so each
    save deletes every older write of the thread, including such late ones.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._puts = 0
        self.report = StorageReport()
        self._packer = MessagePacker()

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save `checkpoint` and delete the thread's older ones in one transaction: one
        commit (one WAL sync) per step instead of two, and no moment where a crash leaves
        the old checkpoints without the new one or the new one beside them all."""
        where = config["configurable"]
        thread_id, namespace = str(where["thread_id"]), where["checkpoint_ns"]
        if MessagePacker.applies_to(self.serde):
            try:
                type_, serialized = self._packer.dumps((thread_id, namespace), checkpoint)
            except ormsgpack.MsgpackEncodeError:  # what the serializer itself would pickle
                type_, serialized = self.serde.dumps_typed(checkpoint)
        else:
            type_, serialized = self.serde.dumps_typed(checkpoint)
        serialized_metadata = json.dumps(
            get_checkpoint_metadata(config, metadata), ensure_ascii=False
        ).encode("utf-8", "ignore")
        key = (thread_id, namespace, checkpoint["id"])
        with self.cursor() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id,"
                " parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*key, where.get("checkpoint_id"), type_, serialized, serialized_metadata),
            )
            cur.execute(
                "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?", key
            )
            cur.execute(
                "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?", key
            )
        self._puts += 1
        if self._puts % VACUUM_CHECK_PUTS == 0:
            try:
                self.release_free_pages()
            except sqlite3.OperationalError as exc:  # housekeeping: the next check tries again
                LOGGER.warning("free pages not released: %s", exc)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": namespace,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def release_free_pages(self) -> None:
        """Give free pages back to the file system when they make up much of the file."""
        with self.cursor() as cur:
            free = cur.execute("PRAGMA freelist_count").fetchone()[0]
            pages = cur.execute("PRAGMA page_count").fetchone()[0]
            if free >= VACUUM_MIN_FREE_PAGES and free * 4 >= pages:
                cur.execute("PRAGMA incremental_vacuum").fetchall()

    def prune_all(self) -> int:
        """Delete every thread's older checkpoints and the writes no checkpoint owns; returns how many."""
        with self.cursor() as cur:
            pruned = cur.execute(
                "DELETE FROM checkpoints WHERE checkpoint_id < (SELECT MAX(latest.checkpoint_id) "
                "FROM checkpoints AS latest WHERE latest.thread_id = checkpoints.thread_id "
                "AND latest.checkpoint_ns = checkpoints.checkpoint_ns)"
            ).rowcount
            cur.execute(
                "DELETE FROM writes WHERE NOT EXISTS (SELECT 1 FROM checkpoints AS c "
                "WHERE c.thread_id = writes.thread_id AND c.checkpoint_ns = writes.checkpoint_ns "
                "AND c.checkpoint_id = writes.checkpoint_id)"
            )
        return pruned


def open_sqlite_checkpointer(path: Path) -> PrunedSqliteSaver:
    """A pruning SqliteSaver usable from the chat's worker threads (it serialises access itself).

    An older database (every checkpoint kept, no incremental vacuum) is pruned and rewritten
    once, here; `saver.report` says what that did. Another process holding the database
    open only postpones the rewrite to a later start.
    """
    private_file(path)  # 0600 in a 0700 folder (generalAgent/private_storage.py)
    conn = sqlite3.connect(path, check_same_thread=False, timeout=SQLITE_BUSY_SECONDS)
    # Before any table exists this takes effect at once; an older file needs the VACUUM below.
    conn.execute(f"PRAGMA auto_vacuum={AUTO_VACUUM_INCREMENTAL}")
    use_wal(conn, SQLITE_BUSY_SECONDS)
    # WAL + NORMAL: a commit is not synced to disk, the WAL is, at each WAL checkpoint. A
    # crash of the process loses nothing committed; a power loss (or an OS crash) can lose
    # the steps committed since the last WAL checkpoint (at most WAL_CHECKPOINT_PAGES pages,
    # the last turn or few), never the file's consistency (docs/reliability.md).
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
    conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    saver = PrunedSqliteSaver(conn)
    saver.setup()
    before = _file_bytes(path)
    pruned = saver.prune_all()
    vacuumed = False
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != AUTO_VACUUM_INCREMENTAL:
        try:
            with saver.lock:
                conn.execute("VACUUM")
            vacuumed = True
        except sqlite3.OperationalError as exc:  # busy: another process has it open
            LOGGER.warning("sessions.db not compacted this time: %s", exc)
    elif pruned:
        saver.release_free_pages()
    if pruned or vacuumed:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        saver.report = StorageReport(pruned, before, _file_bytes(path))
    return saver


def _file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def open_postgres_checkpointer(url: str) -> Any:
    """A PostgresSaver on a small connection pool; `CheckpointStoreError` says what is wrong."""
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        from generalAgent.graph.pruned_postgres import PrunedPostgresSaver
    except ImportError:
        raise CheckpointStoreError(
            "DATABASE_URL is set but PostgreSQL support is not installed: "
            f"{install_hint('postgres')}, or unset DATABASE_URL to keep sessions in SQLite."
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
    saver = PrunedPostgresSaver(cast("ConnectionPool[psycopg.Connection[dict[str, Any]]]", pool))
    try:
        pruned = saver.prune_all()
    except psycopg.Error as exc:  # housekeeping: every save prunes its own thread anyway
        LOGGER.warning("old checkpoints in PostgreSQL not pruned: %s", exc)
    else:
        if pruned:
            LOGGER.info("pruned the older checkpoints of %d threads in PostgreSQL", pruned)
    return saver


def describe_database_url(url: str) -> str:
    """host:port/database (user), never the password. The hosts are shown as written: libpq's
    URL may list several (`host1:5432,host2:5433`), which urllib's `port` cannot read."""
    if "://" not in url:
        return "the server in DATABASE_URL"
    parts = urlsplit(url)
    userinfo, _at, hosts = parts.netloc.rpartition("@")
    name = unquote(userinfo.partition(":")[0])
    database = unquote(parts.path.lstrip("/")) or "(default database)"
    user = f" as {name}" if name else ""
    hosts = hosts or parse_qs(parts.query).get("host", ["localhost"])[0]  # a socket folder, perhaps
    return f"{hosts}/{database}{user}"


def _first_line(exc: BaseException, url: str) -> str:
    text = one_line(str(exc).strip().splitlines()[0], 300) if str(exc).strip() else type(exc).__name__
    password = urlsplit(url).password if "://" in url else None
    return text.replace(password, "***") if password else text
