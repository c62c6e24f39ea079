"""The schema of the search store in PostgreSQL and its migrations (the `index` track).

The tables are indexes.db's (search/schema.py) as one PostgreSQL schema, with three
differences the database asks for:

- Chunk text is a column of `chunks`, and the full-text index is a `tsvector` beside it
  (`terms`) under a GIN index: each lexeme is a column number and an FTS5 token
  (fts_expression.py, fts_tokens.py), with its positions, so phrases, column filters and
  BM25's term counts work as in FTS5 on any PostgreSQL, no extension needed.
- `chunk_totals` keeps the number of chunks and of their tokens (BM25's N and average
  length) and `term_chunks` the chunks holding each word (BM25's n), kept right by
  statement triggers: counting GIN matches at every search is not free.
- Items say whose they are (`owner`) and in which space (`space`): '' is the owner's
  private space, another name a team space every member searches (store.py, `Viewer`).

Migrations are applied as for SQLite (migrations.py): in order, each with the track's new
version, under a transaction-scoped advisory lock so replicas starting together migrate
once; a database of a newer release is refused before anything is written.
"""

from __future__ import annotations

from typing import Any

from generalAgent.migrations import NewerSchemaError

TRACK = "index"
# pg_advisory_xact_lock keys: one for migrations, one for writes (rowids are allocated
# consecutively per item, which needs writers one at a time, as SQLite has them).
MIGRATION_LOCK = 0x6761_0001
WRITE_LOCK = 0x6761_0002

INITIAL_SCHEMA = """
CREATE TABLE items (
    id          TEXT PRIMARY KEY,
    domain      TEXT NOT NULL,
    category    TEXT NOT NULL DEFAULT '',
    title       TEXT NOT NULL,
    content     TEXT NOT NULL,          -- the full text (regex search and re-chunking read it)
    source      TEXT NOT NULL DEFAULT 'user',
    source_path TEXT,
    priority    INTEGER NOT NULL DEFAULT 1,
    owner       TEXT NOT NULL DEFAULT '',   -- the user who added it ('' = the terminal's one user)
    space       TEXT NOT NULL DEFAULT '',   -- '' = its owner's private space, else a team space
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX items_by_domain ON items (domain, category);
CREATE INDEX items_by_space ON items (space, owner);

-- Chunks of an item, in order, with their text: rowids of one item are consecutive, so a
-- search in one document is a rowid range, as in indexes.db.
CREATE TABLE chunks (
    rowid          BIGINT PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    item_id        TEXT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    chunk_index    INTEGER NOT NULL,
    page           INTEGER,
    heading        TEXT NOT NULL DEFAULT '',
    start_position INTEGER NOT NULL,
    end_position   INTEGER NOT NULL,
    metadata       TEXT NOT NULL DEFAULT '{}',
    text           TEXT NOT NULL,           -- the chunk as written
    text_jieba     TEXT NOT NULL DEFAULT '',-- its Chinese words, space-separated (segmentation.py)
    title          TEXT NOT NULL DEFAULT '',-- the item's title and the chunk's heading
    tokens         INTEGER NOT NULL,        -- FTS5's tokens in the three: BM25's document length
    terms          TSVECTOR NOT NULL,       -- column number + FTS5 token, with positions
    UNIQUE (item_id, chunk_index)
);
CREATE INDEX chunks_terms ON chunks USING GIN (terms);

-- Embeddings of chunks (float32 little-endian), only when semantic search is on.
CREATE TABLE chunk_vectors (
    chunk_rowid BIGINT PRIMARY KEY REFERENCES chunks (rowid) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    vector      BYTEA NOT NULL
);

-- Chunks holding each word in the column pairs queries name ({text title}: lexeme 'a' +
-- token, {text_jieba title}: 'b' + token; fts_expression.py): BM25's document frequency
-- and the rare-term split read it instead of counting GIN matches (tens of ms a common
-- word at 10k chunks). Kept by the triggers below.
CREATE TABLE term_chunks (
    lexeme TEXT PRIMARY KEY,
    chunks BIGINT NOT NULL
);

-- BM25's collection figures: one row, kept by the triggers below.
CREATE TABLE chunk_totals (
    only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
    chunks   BIGINT NOT NULL,
    tokens   BIGINT NOT NULL
);
INSERT INTO chunk_totals VALUES (TRUE, 0, 0);

CREATE FUNCTION chunk_totals_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chunk_totals SET chunks = chunks + (SELECT count(*) FROM changed),
                            tokens = tokens + (SELECT COALESCE(sum(tokens), 0) FROM changed);
    INSERT INTO term_chunks (lexeme, chunks)
        SELECT word, count(*) FROM changed, unnest(tsvector_to_array(changed.terms)) AS word
        WHERE left(word, 1) IN ('a', 'b') GROUP BY word
        ON CONFLICT (lexeme) DO UPDATE SET chunks = term_chunks.chunks + excluded.chunks;
    RETURN NULL;
END $$;
CREATE FUNCTION chunk_totals_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chunk_totals SET chunks = chunks - (SELECT count(*) FROM changed),
                            tokens = tokens - (SELECT COALESCE(sum(tokens), 0) FROM changed);
    UPDATE term_chunks t SET chunks = t.chunks - gone.chunks
        FROM (SELECT word, count(*) AS chunks FROM changed, unnest(tsvector_to_array(changed.terms)) AS word
              WHERE left(word, 1) IN ('a', 'b') GROUP BY word) gone
        WHERE t.lexeme = gone.word;
    DELETE FROM term_chunks WHERE chunks <= 0;
    RETURN NULL;
END $$;
CREATE FUNCTION chunk_totals_emptied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chunk_totals SET chunks = 0, tokens = 0;
    DELETE FROM term_chunks;
    RETURN NULL;
END $$;
CREATE TRIGGER chunks_emptied AFTER TRUNCATE ON chunks
    FOR EACH STATEMENT EXECUTE FUNCTION chunk_totals_emptied();
CREATE TRIGGER chunks_added AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION chunk_totals_added();
CREATE TRIGGER chunks_removed AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION chunk_totals_removed();
"""

# The knowledge base's tables beside the search store's (knowledge/schema.py has them for
# indexes.db), so KnowledgeStore's statements read the same in both: an item's tags, the
# built-in files imported, indexed files' texts (and, replaced in 0003, their languages).
# `chunks_fts` is the chunks' text under
# FTS5's table name and `instr` SQLite's function, for the statements that name them.
KNOWLEDGE_TABLES = """
CREATE TABLE item_tags (
    item_id TEXT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    tag     TEXT NOT NULL,
    PRIMARY KEY (item_id, tag)
);
CREATE INDEX item_tags_by_tag ON item_tags (tag);
CREATE TABLE builtin_sources (
    path         TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    item_id      TEXT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    imported_at  TEXT NOT NULL
);
CREATE TABLE document_texts (
    item_id TEXT PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    content TEXT NOT NULL
);
CREATE TABLE documents (
    item_id  TEXT PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    language TEXT NOT NULL DEFAULT ''
);
CREATE VIEW chunks_fts AS SELECT rowid, text, text_jieba, title FROM chunks;
CREATE FUNCTION instr(haystack TEXT, needle TEXT) RETURNS INTEGER
    LANGUAGE sql IMMUTABLE AS 'SELECT strpos(haystack, needle)';
"""

# Indexed files (`generalagent index`, search_file, search_folder) in the shared store too,
# with indexes.db's facts (search/schema.py): a hash of the bytes is a document's identity
# (the same file under two names, or on two replicas, is indexed once: SHA-256 here, where
# users who do not trust each other share documents, MD5 in a terminal's own indexes.db),
# and the path it was
# last seen at, with its size and modification time, spares hashing it again. Migration
# 0002's `documents` held only languages and was never written: it is replaced whole.
DOCUMENT_TABLES = """
DROP TABLE documents;
CREATE TABLE documents (
    file_hash    TEXT PRIMARY KEY,
    item_id      TEXT NOT NULL UNIQUE REFERENCES items (id) ON DELETE CASCADE,
    file_name    TEXT NOT NULL,
    file_type    TEXT NOT NULL,
    file_size    BIGINT NOT NULL,
    indexed_at   TEXT NOT NULL,
    total_chunks INTEGER NOT NULL,
    segmenter    TEXT NOT NULL,
    language     TEXT NOT NULL DEFAULT ''
);
CREATE TABLE document_paths (
    path      TEXT PRIMARY KEY,
    file_hash TEXT NOT NULL REFERENCES documents (file_hash) ON DELETE CASCADE,
    file_size BIGINT,
    mtime_ns  BIGINT
);
CREATE INDEX document_paths_by_hash ON document_paths (file_hash);
"""

# A path is where a file was seen on one machine: the team's machines share the store, not
# their disks, so the same path on two of them can hold two different files (two documents,
# each kept while its machine shows it), and a machine trusts only its own record of a
# path's size and modification time. Paths recorded before are a machine's '' (the first
# machine to index such a path again takes it over: documents/index.py).
DOCUMENT_MACHINES = """
ALTER TABLE document_paths ADD COLUMN machine TEXT NOT NULL DEFAULT '';
ALTER TABLE document_paths DROP CONSTRAINT document_paths_pkey;
ALTER TABLE document_paths ADD PRIMARY KEY (machine, path);
"""

# Per item, the chunks holding each word (term_chunks, one item at a time): a search inside
# one document splits its words into rare and common by these counts (lookup.split_rare)
# instead of testing every chunk of the document against every word, which cost a third
# of such a search in a 3,300-chunk manual. Kept by the same statement triggers; a removed
# item's rows are found by the primary key's first column.
ITEM_TERMS = """
CREATE TABLE item_terms (
    item_id TEXT NOT NULL,
    lexeme  TEXT NOT NULL,
    chunks  BIGINT NOT NULL,
    PRIMARY KEY (item_id, lexeme)
);
INSERT INTO item_terms (item_id, lexeme, chunks)
    SELECT item_id, word, count(*) FROM chunks, unnest(tsvector_to_array(terms)) AS word
    WHERE left(word, 1) IN ('a', 'b') GROUP BY item_id, word;
CREATE OR REPLACE FUNCTION chunk_totals_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chunk_totals SET chunks = chunks + (SELECT count(*) FROM changed),
                            tokens = tokens + (SELECT COALESCE(sum(tokens), 0) FROM changed);
    -- The new chunks' words counted once, per item, for both tables.
    WITH words AS (
        SELECT changed.item_id, word, count(*) AS chunks
        FROM changed, unnest(tsvector_to_array(changed.terms)) AS word
        WHERE left(word, 1) IN ('a', 'b') GROUP BY changed.item_id, word
    ), per_item AS (
        INSERT INTO item_terms (item_id, lexeme, chunks) SELECT item_id, word, chunks FROM words
        ON CONFLICT (item_id, lexeme) DO UPDATE SET chunks = item_terms.chunks + excluded.chunks
    )
    INSERT INTO term_chunks (lexeme, chunks) SELECT word, sum(chunks) FROM words GROUP BY word
        ON CONFLICT (lexeme) DO UPDATE SET chunks = term_chunks.chunks + excluded.chunks;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION chunk_totals_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chunk_totals SET chunks = chunks - (SELECT count(*) FROM changed),
                            tokens = tokens - (SELECT COALESCE(sum(tokens), 0) FROM changed);
    WITH words AS (
        SELECT changed.item_id, word, count(*) AS chunks
        FROM changed, unnest(tsvector_to_array(changed.terms)) AS word
        WHERE left(word, 1) IN ('a', 'b') GROUP BY changed.item_id, word
    ), per_item AS (
        UPDATE item_terms t SET chunks = t.chunks - gone.chunks FROM words gone
        WHERE t.item_id = gone.item_id AND t.lexeme = gone.word
    )
    UPDATE term_chunks t SET chunks = t.chunks - gone.chunks
        FROM (SELECT word, sum(chunks) AS chunks FROM words GROUP BY word) gone
        WHERE t.lexeme = gone.word;
    DELETE FROM item_terms WHERE item_id IN (SELECT DISTINCT item_id FROM changed) AND chunks <= 0;
    DELETE FROM term_chunks WHERE chunks <= 0;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION chunk_totals_emptied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chunk_totals SET chunks = 0, tokens = 0;
    DELETE FROM term_chunks;
    DELETE FROM item_terms;
    RETURN NULL;
END $$;
"""

# A PDF whose text is indexed and whose tables are still to be read (documents/index.py,
# as in indexes.db's 0007): replaced whole by the table-aware reading, which sets it to 0.
DOCUMENT_TABLES_PENDING = """
ALTER TABLE documents ADD COLUMN tables_pending INTEGER NOT NULL DEFAULT 0;
"""

# A reader of a PDF's tables claims them by writing the Unix time it began there
# (documents/index.py): INTEGER would overflow in 2038 (SQLite's INTEGER is 64-bit already).
DOCUMENT_TABLES_CLAIM_TIME = """
ALTER TABLE documents ALTER COLUMN tables_pending TYPE BIGINT;
"""

# The track's history, oldest first: append, never edit a released one.
MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("0001_initial_schema", INITIAL_SCHEMA),
    ("0002_knowledge_tables", KNOWLEDGE_TABLES),
    ("0003_document_tables", DOCUMENT_TABLES),
    ("0004_document_machines", DOCUMENT_MACHINES),
    ("0005_item_terms", ITEM_TERMS),
    ("0006_document_tables_pending", DOCUMENT_TABLES_PENDING),
    ("0007_document_tables_claim_time", DOCUMENT_TABLES_CLAIM_TIME),
)

VERSIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_versions (
    track      TEXT PRIMARY KEY,
    version    INTEGER NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
)
"""


def migrate(conn: Any) -> list[str]:
    """Bring the connection's schema up to date (psycopg connection in autocommit mode);
    the names of the migrations applied. Raises NewerSchemaError for a newer database."""
    applied: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(VERSIONS_TABLE)
        row = conn.execute("SELECT version FROM schema_versions WHERE track = %s", (TRACK,)).fetchone()
        version = row[0] if row else 0
        if version > len(MIGRATIONS):
            raise NewerSchemaError(
                f"written by a newer release (schema version {version} of track {TRACK!r},"
                f" this release knows {len(MIGRATIONS)})"
            )
        for name, sql in MIGRATIONS[version:]:
            conn.execute(sql)
            applied.append(name)
        if applied:
            conn.execute(
                "INSERT INTO schema_versions (track, version, updated_at) VALUES (%s, %s, extract(epoch FROM now()))"
                " ON CONFLICT (track) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at",
                (TRACK, len(MIGRATIONS)),
            )
    return applied
