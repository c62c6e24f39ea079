"""Rankings of chunks by meaning: the cosine of their stored vectors with the query's.

When semantic search is on (search/embeddings.py) chunks get vectors after they are
indexed (search/background_embedding.py); a search embeds each phrasing of the query and
ranks the chunks of its scope (one document's rowid range, a set of items, or all) by
nearness. Within one document the stored vectors are ranked with numpy (a few thousand at
most); across many documents the KNN index of sqlite-vec answers when it can load
(search/vector_index.py), else numpy over the scope's vectors as well. search/lookup.py
fuses these rankings with the lexical ones by rank, so a passage that shares no word with
the question (another language, a synonym) can still come first, and a failing endpoint
only takes this part away. Chunks not embedded yet are simply not in these rankings: BM25
answers for them until their vectors exist.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from generalAgent.display import N_
from generalAgent.search import vector_index
from generalAgent.search.embeddings import EmbeddingError
from generalAgent.search.storage import VectorSource

# Chunks of each phrasing's vector ranking handed to the fusion (as knowledge search does).
VECTOR_CANDIDATES = 50
# A scope of more chunks than this is ranked by the KNN index (when there is one): at 10k
# vectors the scan's p95 was 4x the index's, at 100k 12x (bench/semantic_search.py, 256
# dimensions). A smaller scope is scanned, exactly: the index's nearest of the whole store
# (at most vec0's k of 4096) may hold few of its chunks.
SCAN_MAX_CHUNKS = 10_000


def _scope_is_large(conn: sqlite3.Connection, item_ids: Sequence[str]) -> bool:
    if not item_ids:
        return True
    marks = ",".join("?" * len(item_ids))
    count = conn.execute(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM chunks WHERE item_id IN ({marks}) LIMIT ?)",
        [*item_ids, SCAN_MAX_CHUNKS + 1],
    ).fetchone()[0]
    return bool(count > SCAN_MAX_CHUNKS)


def nearest_chunks(
    conn: sqlite3.Connection,
    embedder: VectorSource,
    queries: Sequence[str],
    *,
    rowid_range: tuple[int, int] | None = None,
    item_ids: Sequence[str] = (),
    limit: int = VECTOR_CANDIDATES,
) -> list[list[tuple[int, float]]]:
    """Per query, the `limit` chunks of the scope nearest it, as (rowid, cosine), nearest
    first; [] when the scope has no vectors of `embedder`'s model (nothing is embedded).
    Raises EmbeddingError when the query cannot be embedded."""
    if (
        rowid_range is None
        and vector_index.has_index(conn, embedder.model)
        and _scope_is_large(conn, item_ids)
    ):
        return _nearest_by_index(conn, embedder, queries, item_ids, limit)
    return scan_nearest(conn, embedder, queries, rowid_range, item_ids, limit)


def _nearest_by_index(
    conn: sqlite3.Connection,
    embedder: VectorSource,
    queries: Sequence[str],
    item_ids: Sequence[str],
    limit: int,
) -> list[list[tuple[int, float]]]:
    """The KNN index's answer, kept to the items of the scope; the scan's when the index
    cannot be used (the extension does not load in this process)."""
    if vector_index.load_extension(conn) is not None:
        return scan_nearest(conn, embedder, queries, None, item_ids, limit)
    rankings = []
    for blob in embedder.vectors(list(queries)):
        found = vector_index.nearest(
            conn, embedder.model, blob, limit if not item_ids else vector_index.MAX_K
        )
        if found is None:
            raise EmbeddingError(N_("stored vectors come from a model of another size; re-index"))
        if item_ids and found:
            marks, items = ",".join("?" * len(found)), ",".join("?" * len(item_ids))
            inside = {
                row[0]
                for row in conn.execute(
                    f"SELECT rowid FROM chunks WHERE rowid IN ({marks}) AND item_id IN ({items})",
                    [rowid for rowid, _ in found] + list(item_ids),
                )
            }
            found = [pair for pair in found if pair[0] in inside]
        rankings.append(found[:limit])
    return rankings


def scan_nearest(
    conn: Any,
    embedder: VectorSource,
    queries: Sequence[str],
    rowid_range: tuple[int, int] | None,
    item_ids: Sequence[str],
    limit: int = VECTOR_CANDIDATES,
) -> list[list[tuple[int, float]]]:
    """The exact scan of nearest_chunks, on any connection with sqlite3's `execute` (the
    PostgreSQL store's statements too)."""
    import numpy as np

    where: list[str] = ["v.model = ?"]
    values: list[object] = [embedder.model]
    join = ""
    if rowid_range is not None:
        where.append("v.chunk_rowid BETWEEN ? AND ?")
        values += list(rowid_range)
    if item_ids:
        join = " JOIN chunks c ON c.rowid = v.chunk_rowid"
        where.append(f"c.item_id IN ({','.join('?' * len(item_ids))})")
        values += list(item_ids)
    rows = conn.execute(
        f"SELECT v.chunk_rowid, v.vector FROM chunk_vectors v{join} WHERE {' AND '.join(where)}", values
    ).fetchall()
    if not rows:
        return []
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4").reshape(len(rows), -1)
    rankings = []
    for blob in embedder.vectors(list(queries)):
        vector = np.frombuffer(blob, dtype="<f4")
        if vector.shape[0] != matrix.shape[1]:
            raise EmbeddingError(N_("stored vectors come from a model of another size; re-index"))
        similarity = matrix @ vector
        best = np.argsort(-similarity)[:limit]
        rankings.append([(int(rows[i][0]), float(similarity[i])) for i in best])
    return rankings


def unembedded_chunks(
    conn: sqlite3.Connection,
    model: str,
    *,
    rowid_range: tuple[int, int] | None = None,
    item_ids: Sequence[str] = (),
) -> int:
    """Chunks of the scope without a vector of `model` yet (searched by keywords only)."""
    where: list[str] = ["(v.chunk_rowid IS NULL OR v.model != ?)"]
    values: list[object] = [model]
    if rowid_range is not None:
        where.append("c.rowid BETWEEN ? AND ?")
        values += list(rowid_range)
    if item_ids:
        where.append(f"c.item_id IN ({','.join('?' * len(item_ids))})")
        values += list(item_ids)
    return int(
        conn.execute(
            "SELECT COUNT(*) FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_rowid = c.rowid"
            f" WHERE {' AND '.join(where)}",
            values,
        ).fetchone()[0]
    )
