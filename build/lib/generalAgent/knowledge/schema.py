"""The knowledge base's own tables in indexes.db and their migrations (the `knowledge` track).

Items, chunks and their text are the index's (search/schema.py): an indexed file is an
item too, written by documents, below knowledge. What only the knowledge base reads is
here: the items' tags and the built-in files already imported. `KnowledgeStore` applies
this track, after the index's, whenever it opens the file (migrations.py), so documents
can create and upgrade indexes.db without knowing of the knowledge base.
"""

from __future__ import annotations

from generalAgent.migrations import Migration, Track, script

# Release 0.1.0 created these with the index's tables (its 0001_initial_schema), hence
# IF NOT EXISTS and the adopted name.
KNOWLEDGE_TABLES = """
-- Tags, one row each, so "any of these tags" and the list of tags are index lookups.
CREATE TABLE IF NOT EXISTS item_tags (
    item_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    tag     TEXT NOT NULL,
    PRIMARY KEY (item_id, tag)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS item_tags_by_tag ON item_tags(tag);

-- Built-in knowledge files already imported, by content hash: start-up imports only changes.
CREATE TABLE IF NOT EXISTS builtin_sources (
    path         TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    item_id      TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    imported_at  TEXT NOT NULL
);
"""

# The knowledge base's schema history, oldest first: append, never edit a released one.
MIGRATIONS = (Migration("0001_tags_and_builtin_sources", script(KNOWLEDGE_TABLES)),)
TRACK = Track("knowledge", MIGRATIONS, adopts=("0001_initial_schema",))
