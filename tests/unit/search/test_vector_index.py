"""The KNN index of chunk vectors (sqlite-vec): built from chunk_vectors, kept in step by the
notes of its triggers (added, replaced, deleted vectors), answering as the exact scan does;
and where the extension cannot load, searches rank by the scan and say nothing is lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from generalAgent.search import vector_index
from generalAgent.search.connection import connect, transaction
from generalAgent.search.embeddings import to_blob
from generalAgent.search.semantic import nearest_chunks


def _loads() -> bool:
    conn = sqlite3.connect(":memory:")
    try:
        return vector_index.load_extension(conn) is None
    finally:
        conn.close()


needs_sqlite_vec = pytest.mark.skipif(not _loads(), reason="this Python's sqlite3 cannot load extensions")


class FixedVectors:
    """A VectorSource whose vectors are given per text (unit length)."""

    def __init__(self, model: str, table: dict[str, np.ndarray]) -> None:
        self.model = model
        self.table = table

    def vectors(self, texts, progress=None):
        return [to_blob(self.table[t]) for t in texts]


def store(path: Path, vectors: np.ndarray, model: str = "m") -> sqlite3.Connection:
    conn = connect(path)
    with transaction(conn):
        conn.execute(
            "INSERT INTO items (id, domain, title, content, created_at, updated_at)"
            " VALUES ('i', 'notes', 't', '', '', '')"
        )
        for n, vector in enumerate(vectors, start=1):
            conn.execute(
                "INSERT INTO chunks (rowid, id, item_id, chunk_index, start_position, end_position)"
                " VALUES (?, ?, 'i', ?, 0, 1)",
                (n, f"c{n}", n),
            )
            conn.execute(
                "INSERT INTO chunks_fts (rowid, text, text_jieba, title) VALUES (?, 'x', '', '')", (n,)
            )
            conn.execute("INSERT INTO chunk_vectors VALUES (?, ?, ?)", (n, model, to_blob(vector)))
    return conn


def test_changes_are_noted_only_for_models_with_an_index(tmp_path: Path):
    conn = store(tmp_path / "i.db", np.eye(4, dtype=np.float32))
    conn.execute("DELETE FROM chunk_vectors WHERE chunk_rowid = 1")
    assert conn.execute("SELECT COUNT(*) FROM vector_changes").fetchone()[0] == 0
    conn.execute("INSERT INTO knn_indexes (model, name, dimensions) VALUES ('m', 'knn_x', 4)")
    conn.execute("DELETE FROM chunk_vectors WHERE chunk_rowid = 2")
    conn.execute("UPDATE chunk_vectors SET model = 'other' WHERE chunk_rowid = 3")
    noted = conn.execute("SELECT chunk_rowid, model FROM vector_changes ORDER BY seq").fetchall()
    assert [tuple(row) for row in noted] == [(2, "m"), (3, "m"), (3, "other")]


def test_without_the_extension_searches_scan_the_stored_vectors(tmp_path: Path, monkeypatch):
    vectors = np.random.default_rng(1).standard_normal((50, 8)).astype(np.float32)
    conn = store(tmp_path / "i.db", vectors)
    monkeypatch.setattr(
        vector_index, "load_extension", lambda conn: "this Python's sqlite3 cannot load extensions"
    )
    assert vector_index.build(conn, "m") is False
    embedder = FixedVectors("m", {"q": vectors[7]})
    [ranking] = nearest_chunks(conn, embedder, ["q"])
    assert ranking[0][0] == 8 and ranking[0][1] == pytest.approx(1.0, abs=1e-5)


@needs_sqlite_vec
def test_the_knn_index_answers_as_the_scan_does_and_follows_changes(tmp_path: Path):
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    conn = store(tmp_path / "i.db", vectors)
    assert vector_index.build(conn, "m")
    query = to_blob(vectors[42] + 0.01)
    by_index = vector_index.nearest(conn, "m", query, 10)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = np.argsort(-(unit @ np.frombuffer(query, dtype="<f4")))[:10] + 1
    assert [rowid for rowid, _ in by_index] == list(exact)
    # Deleted, replaced and added vectors: the index follows on its next use.
    with transaction(conn):
        conn.execute("DELETE FROM chunks WHERE rowid = 43")
        conn.execute("UPDATE chunk_vectors SET vector = ? WHERE chunk_rowid = 5", (to_blob(vectors[42]),))
    assert 43 not in [rowid for rowid, _ in vector_index.nearest(conn, "m", query, 10)]
    assert vector_index.nearest(conn, "m", to_blob(vectors[42]), 1)[0][0] == 5
    assert conn.execute("SELECT COUNT(*) FROM vector_changes").fetchone()[0] == 0  # applied, then removed
    # A connection of a process without the extension can still delete: only notes are written.
    plain = sqlite3.connect(tmp_path / "i.db")
    plain.execute("PRAGMA foreign_keys = ON")
    plain.execute("DELETE FROM chunks WHERE rowid = 6")
    plain.commit()
    plain.close()
    assert 6 not in [rowid for rowid, _ in vector_index.nearest(conn, "m", to_blob(vectors[5]), 5)]


@needs_sqlite_vec
def test_a_large_scope_is_ranked_by_the_index(tmp_path: Path, monkeypatch):
    from generalAgent.search import semantic

    vectors = np.random.default_rng(3).standard_normal((100, 8)).astype(np.float32)
    conn = store(tmp_path / "i.db", vectors)
    vector_index.build(conn, "m")
    monkeypatch.setattr(semantic, "SCAN_MAX_CHUNKS", 10)
    scanned = semantic.scan_nearest(conn, FixedVectors("m", {"q": vectors[3]}), ["q"], None, ["i"], 5)
    [ranking] = nearest_chunks(conn, FixedVectors("m", {"q": vectors[3]}), ["q"], item_ids=["i"], limit=5)
    assert [r for r, _ in ranking] == [r for r, _ in scanned[0]]
