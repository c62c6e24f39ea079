"""The schema of indexes.db, the one SQLite file of everything searchable: the index's tables
and their migrations (the `index` track, migrations.py).

Documents and knowledge share it: an indexed file is a knowledge item of domain
`documents` whose `documents` row records the file's facts. Chunk text lives once, in the
FTS5 table, under the same rowid as the chunk's row in `chunks`; deleting an item cascades
to its chunks, and a trigger removes their FTS rows, so nothing can be left behind. Chunks
of one item get consecutive rowids, which lets a search inside one document restrict FTS5
to a rowid range instead of filtering after the match.

Every connection applies this track (search/connection.py): items, chunks, their text and
vectors are written by documents and knowledge alike. What only the knowledge base reads
(items' tags, the built-in files imported) is its own track, knowledge/schema.py, applied
by the knowledge store when it opens the file.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from generalAgent.migrations import Migration, Track, script
from generalAgent.search.language import main_language
from generalAgent.search.vector_schema import VECTOR_CHANGES

DOCUMENTS_DOMAIN = "documents"

# The index's part of the schema of release 0.1.0 (which created it without a migration
# table); the rest of it, item_tags and builtin_sources, is the knowledge track's first.
INITIAL_SCHEMA = """
-- One row per searchable thing: a note, a built-in knowledge page, or an indexed file
-- (domain 'documents'). `content` is the full text: regex search and lazy re-chunking read it.
-- (An indexed file's text moved to document_texts in migration 0003; see ITEM_CONTENT.)
CREATE TABLE IF NOT EXISTS items (
    id          TEXT PRIMARY KEY,
    domain      TEXT NOT NULL,
    category    TEXT NOT NULL DEFAULT '',
    title       TEXT NOT NULL,
    content     TEXT NOT NULL,
    source      TEXT NOT NULL DEFAULT 'user',
    source_path TEXT,
    priority    INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS items_by_domain ON items(domain, category);

-- File facts of items in domain 'documents'. The MD5 of the bytes is the identity, so the
-- same file under two names is indexed once.
CREATE TABLE IF NOT EXISTS documents (
    file_hash    TEXT PRIMARY KEY,
    item_id      TEXT NOT NULL UNIQUE REFERENCES items(id) ON DELETE CASCADE,
    file_name    TEXT NOT NULL,
    file_type    TEXT NOT NULL,
    file_size    INTEGER NOT NULL,
    indexed_at   TEXT NOT NULL,
    total_chunks INTEGER NOT NULL,
    segmenter    TEXT NOT NULL
);

-- Where each document was last seen: a new version at the same path replaces the old one.
CREATE TABLE IF NOT EXISTS document_paths (
    path      TEXT PRIMARY KEY,
    file_hash TEXT NOT NULL REFERENCES documents(file_hash) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS document_paths_by_hash ON document_paths(file_hash);

-- Chunks of an item, in order, with their place in the item's content. Their text is in
-- chunks_fts under the same rowid.
CREATE TABLE IF NOT EXISTS chunks (
    rowid          INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    item_id        TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    chunk_index    INTEGER NOT NULL,
    page           INTEGER,
    heading        TEXT NOT NULL DEFAULT '',
    start_position INTEGER NOT NULL,
    end_position   INTEGER NOT NULL,
    metadata       TEXT NOT NULL DEFAULT '{}',
    UNIQUE (item_id, chunk_index)
);

-- Full-text index of chunk text (rowid = chunks.rowid). No UNINDEXED columns: what is not
-- searched (item, page, offsets) lives in `chunks`, joined by rowid, not stored twice.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text,        -- the chunk as written; Latin words are matched here, Porter-stemmed
    text_jieba,  -- the chunk's Chinese words, space-separated by the segmenter
    title,       -- the item's title and the chunk's heading (as written + segmented), so a
                 -- passage is also found by the name of the document or section it is in
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_drop_text AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
END;

-- Embeddings of chunks (float32 little-endian), only when semantic search is on.
CREATE TABLE IF NOT EXISTS chunk_vectors (
    chunk_rowid INTEGER PRIMARY KEY REFERENCES chunks(rowid) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    vector      BLOB NOT NULL
);
"""

# The size and modification time of the file a path showed when it was hashed: while both
# are unchanged, the hash is taken from here instead of reading the file again.
DOCUMENT_PATH_STAT = """
ALTER TABLE document_paths ADD COLUMN file_size INTEGER;
ALTER TABLE document_paths ADD COLUMN mtime_ns INTEGER;
"""

# The text of an indexed file, apart from its item: SQLite's incremental blob I/O writes it
# piece by piece only when it is the last value of its row (otherwise SQLite builds the
# whole value in memory first), so a 200 MB text file is indexed in bounded memory. UTF-8
# bytes; items.content stays '' for these items (older indexes kept the text there).
DOCUMENT_TEXTS = """
CREATE TABLE document_texts (
    item_id TEXT PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    content BLOB NOT NULL
);
"""

# Whose an item is and in which space (search/store.py, `Viewer`): '' / '' is the terminal's
# one user's private space, so every item written before is still the terminal's own; the
# built-in knowledge is everyone's ('*', search/store.py PUBLIC).
ITEM_SPACES = """
ALTER TABLE items ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN space TEXT NOT NULL DEFAULT '';
CREATE INDEX items_by_space ON items(space, owner);
UPDATE items SET space = '*' WHERE source = 'builtin';
"""

# A PDF whose text is indexed and whose tables are still to be read (documents/index.py):
# its chunks are the text read without tables until a later reading replaces them whole
# with the table-aware ones, in one transaction, and sets this back to 0.
DOCUMENT_TABLES_PENDING = """
ALTER TABLE documents ADD COLUMN tables_pending INTEGER NOT NULL DEFAULT 0;
"""

# Chunks read to tell an already indexed document's language (search/language.py): a few
# hundred are far more than the language needs.
LANGUAGE_SAMPLE_CHUNKS = 200


def add_document_language(conn: sqlite3.Connection) -> None:
    """The main language of each document ("en", "zh", ...; search/language.py), told at
    indexing so search can tell the model which language to ask in; documents indexed
    before are told here from their first chunks."""
    conn.execute("ALTER TABLE documents ADD COLUMN language TEXT NOT NULL DEFAULT ''")
    for file_hash, item_id in conn.execute("SELECT file_hash, item_id FROM documents").fetchall():
        texts = conn.execute(
            "SELECT f.text FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
            " WHERE c.item_id = ? ORDER BY c.chunk_index LIMIT ?",
            (item_id, LANGUAGE_SAMPLE_CHUNKS),
        ).fetchall()
        language = main_language("\n".join(t[0] for t in texts))
        conn.execute("UPDATE documents SET language = ? WHERE file_hash = ?", (language, file_hash))


# The index's schema history, oldest first: append, never edit a released one. Before the
# tracks, each was recorded in schema_migrations under the same name (migrations.py).
MIGRATIONS = (
    Migration("0001_initial_schema", script(INITIAL_SCHEMA)),
    Migration("0002_document_path_stat", script(DOCUMENT_PATH_STAT)),
    Migration("0003_document_texts", script(DOCUMENT_TEXTS)),
    Migration("0004_document_language", add_document_language),
    Migration("0005_vector_changes", script(VECTOR_CHANGES)),  # search/vector_schema.py
    Migration("0006_item_spaces", script(ITEM_SPACES)),
    Migration("0007_document_tables_pending", script(DOCUMENT_TABLES_PENDING)),
)
# The legacy schema_migrations table knew the first five by these names (migrations.py).
TRACK = Track("index", MIGRATIONS, adopts=tuple(m.name for m in MIGRATIONS[:5]))

# An item's full text as SQL (in a query over `items`): an indexed file's from document_texts.
ITEM_CONTENT = (
    "COALESCE((SELECT CAST(t.content AS TEXT) FROM document_texts t WHERE t.item_id = items.id),"
    " items.content)"
)


def now_iso() -> str:
    """The timestamp format of every row: UTC, to the second, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")
