"""A KNN index of chunk vectors inside indexes.db (sqlite-vec), kept in step with chunk_vectors.

`chunk_vectors` stays the one record of every vector (written with its chunk, deleted with
it); the index is derived from it and can be rebuilt at any time. That matters because the
index is a virtual table of the sqlite-vec extension, and not every Python can load
extensions (pyenv's and some distributions' builds cannot): a trigger that wrote into it
would make every delete fail there. So the triggers below only note which vectors changed
(`vector_changes`, plain SQL), and a connection that can load the extension applies those
notes before it reads the index. Without the extension, searches rank the stored vectors
with numpy as before (search/semantic.py) and `doctor` says so in one line.

One index per embedding model (`knn_indexes`), a vec0 table with that model's number of
dimensions; vectors are unit length, so the L2 distance it ranks by orders as cosine does
(cosine = 1 - d^2 / 2).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence

from generalAgent.i18n import N_
from generalAgent.search.connection import transaction

# vec0's largest k; a scoped search asks for more than it needs and keeps those in scope.
MAX_K = 4096
BUILD_BATCH = 2048  # vectors copied into a new index per statement


def load_extension(conn: sqlite3.Connection, translate: Callable[[str], str] = str) -> str | None:
    """Load sqlite-vec into `conn` (once); None when it is there, else why it cannot be
    (`translate` is the terminal's `_`, for doctor)."""
    try:
        conn.execute("SELECT vec_version()")
        return None
    except sqlite3.OperationalError:
        pass
    if not hasattr(conn, "enable_load_extension"):
        return translate(N_("this Python's sqlite3 cannot load extensions"))
    try:
        import sqlite_vec
    except ImportError:
        return translate(N_("the sqlite-vec package is not installed"))
    try:
        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
    except (sqlite3.Error, AttributeError) as exc:
        return translate(N_("sqlite-vec did not load ({error})")).format(error=exc)
    return None


def table_name(model: str) -> str:
    return f"knn_{hashlib.sha1(model.encode(), usedforsecurity=False).hexdigest()[:16]}"


def has_index(conn: sqlite3.Connection, model: str) -> bool:
    return conn.execute("SELECT 1 FROM knn_indexes WHERE model = ?", (model,)).fetchone() is not None


def build(conn: sqlite3.Connection, model: str) -> bool:
    """Make (or bring up to date) the KNN index of `model`'s vectors; False when the
    extension cannot load or there is no vector of that model yet."""
    if load_extension(conn) is not None:
        return False
    if has_index(conn, model):
        sync(conn, model)
        return True
    row = conn.execute(
        "SELECT length(vector) FROM chunk_vectors WHERE model = ? LIMIT 1", (model,)
    ).fetchone()
    if row is None:
        return False
    name, dimensions = table_name(model), row[0] // 4
    with transaction(conn):
        conn.execute(f"DROP TABLE IF EXISTS {name}")
        conn.execute(f"CREATE VIRTUAL TABLE {name} USING vec0(embedding float[{dimensions}])")
        # Registered first, in the same transaction: from here on the triggers note changes.
        conn.execute(
            "INSERT INTO knn_indexes (model, name, dimensions, synced) VALUES (?, ?, ?,"
            " (SELECT COALESCE(MAX(seq), 0) FROM vector_changes))",
            (model, name, dimensions),
        )
        last = 0
        while True:
            rows = conn.execute(
                "SELECT chunk_rowid, vector FROM chunk_vectors WHERE model = ? AND chunk_rowid > ?"
                " AND length(vector) = ? ORDER BY chunk_rowid LIMIT ?",
                (model, last, dimensions * 4, BUILD_BATCH),
            ).fetchall()
            if not rows:
                break
            conn.executemany(f"INSERT INTO {name} (rowid, embedding) VALUES (?, ?)", [tuple(r) for r in rows])
            last = rows[-1][0]
    return True


def sync(conn: sqlite3.Connection, model: str) -> None:
    """Apply the changes noted since the index of `model` was last brought up to date."""
    found = conn.execute(
        "SELECT name, dimensions, synced FROM knn_indexes WHERE model = ?", (model,)
    ).fetchone()
    if found is None:
        return
    name, dimensions, synced = found
    if (
        conn.execute(
            "SELECT 1 FROM vector_changes WHERE seq > ? AND model = ? LIMIT 1", (synced, model)
        ).fetchone()
        is None
    ):
        return
    with transaction(conn):
        changes = conn.execute(
            "SELECT MAX(seq), chunk_rowid FROM vector_changes WHERE seq > ? AND model = ? GROUP BY chunk_rowid",
            (synced, model),
        ).fetchall()
        rowids = [rowid for _, rowid in changes]
        for start in range(0, len(rowids), 500):
            part = rowids[start : start + 500]
            marks = ",".join("?" * len(part))
            conn.execute(f"DELETE FROM {name} WHERE rowid IN ({marks})", part)
            conn.execute(
                f"INSERT INTO {name} (rowid, embedding) SELECT chunk_rowid, vector FROM chunk_vectors"
                f" WHERE chunk_rowid IN ({marks}) AND model = ? AND length(vector) = ?",
                [*part, model, dimensions * 4],
            )
        last = max(seq for seq, _ in changes)
        conn.execute("UPDATE knn_indexes SET synced = ? WHERE model = ?", (last, model))
        # Notes every index has applied are no longer needed.
        conn.execute("DELETE FROM vector_changes WHERE seq <= (SELECT MIN(synced) FROM knn_indexes)")


def drop(conn: sqlite3.Connection, model: str) -> None:
    """Remove the index of `model` (its vectors are gone or replaced by another model's)."""
    found = conn.execute("SELECT name FROM knn_indexes WHERE model = ?", (model,)).fetchone()
    if found is None or load_extension(conn) is not None:
        return
    with transaction(conn):
        conn.execute(f"DROP TABLE IF EXISTS {found[0]}")
        conn.execute("DELETE FROM knn_indexes WHERE model = ?", (model,))
        conn.execute("DELETE FROM vector_changes WHERE model = ?", (model,))


def nearest(
    conn: sqlite3.Connection, model: str, query: bytes, k: int, allowed: Sequence[int] | None = None
) -> list[tuple[int, float]] | None:
    """(rowid, cosine) of the `k` vectors of `model` nearest `query`, nearest first, keeping
    only rowids in `allowed` when given; None when there is no usable index."""
    if load_extension(conn) is not None:
        return None
    found = conn.execute("SELECT name, dimensions FROM knn_indexes WHERE model = ?", (model,)).fetchone()
    if found is None or found[1] * 4 != len(query):
        return None
    sync(conn, model)
    wanted = k if allowed is None else MAX_K
    rows = conn.execute(
        f"SELECT rowid, distance FROM {found[0]} WHERE embedding MATCH ? AND k = ?",
        (query, min(wanted, MAX_K)),
    ).fetchall()
    keep = set(allowed) if allowed is not None else None
    ranked = [(int(r), 1.0 - float(d) ** 2 / 2) for r, d in rows if keep is None or r in keep]
    return ranked[:k]
