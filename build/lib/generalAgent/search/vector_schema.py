"""The tables and triggers that keep KNN indexes of chunk vectors in step (the index track's 0005).

Why the index is fed from notes instead of by triggers of its own: search/vector_index.py.
"""

VECTOR_CHANGES = """
-- One row per embedding model with a KNN index: its vec0 table and the last change applied.
CREATE TABLE knn_indexes (
    model      TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    dimensions INTEGER NOT NULL,
    synced     INTEGER NOT NULL DEFAULT 0  -- vector_changes.seq applied up to
);
-- Vectors added, replaced or deleted since the KNN index of their model was brought up to
-- date; noted only for models that have an index. Rows are removed once applied.
CREATE TABLE vector_changes (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_rowid INTEGER NOT NULL,
    model       TEXT NOT NULL
);
CREATE TRIGGER vector_added AFTER INSERT ON chunk_vectors
WHEN EXISTS (SELECT 1 FROM knn_indexes WHERE model = new.model) BEGIN
    INSERT INTO vector_changes (chunk_rowid, model) VALUES (new.chunk_rowid, new.model);
END;
CREATE TRIGGER vector_removed AFTER DELETE ON chunk_vectors
WHEN EXISTS (SELECT 1 FROM knn_indexes WHERE model = old.model) BEGIN
    INSERT INTO vector_changes (chunk_rowid, model) VALUES (old.chunk_rowid, old.model);
END;
CREATE TRIGGER vector_replaced AFTER UPDATE ON chunk_vectors
WHEN EXISTS (SELECT 1 FROM knn_indexes WHERE model IN (old.model, new.model)) BEGIN
    INSERT INTO vector_changes (chunk_rowid, model) VALUES (old.chunk_rowid, old.model);
    INSERT INTO vector_changes (chunk_rowid, model) VALUES (new.chunk_rowid, new.model);
END;
"""
