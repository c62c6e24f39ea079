"""Rankings of chunks by meaning: the cosine of their stored vectors with the query's.

When semantic search is on (EMBEDDING_MODEL or EMBEDDING_LOCAL_MODEL, search/embeddings.py)
every chunk gets a vector when it is indexed; a search embeds each phrasing of the query
and ranks the chunks of its scope (one document's rowid range, or a set of items) by
nearness. search/lookup.py fuses these rankings with the lexical ones by rank, so a
passage that shares no word with the question (another language, a synonym) can still
come first, and a failing endpoint only takes this part away.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from generalAgent.search.embeddings import EmbeddingError
from generalAgent.search.storage import VectorSource

# Chunks of each phrasing's vector ranking handed to the fusion (as knowledge search does).
VECTOR_CANDIDATES = 50


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
            raise EmbeddingError("stored vectors come from a model of another size; re-index")
        similarity = matrix @ vector
        best = np.argsort(-similarity)[:limit]
        rankings.append([(int(rows[i][0]), float(similarity[i])) for i in best])
    return rankings
