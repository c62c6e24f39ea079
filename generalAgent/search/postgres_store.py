"""The search store in PostgreSQL: a team's items, chunks and vectors in one database
every replica reaches (store.py has the interface and the spaces).

Full text without an extension. Chinese full-text search in PostgreSQL usually needs a
segmenting extension (zhparser, pg_jieba, PGroonga) that hosted databases lack; here the
application cuts the text, as it does for SQLite: the same jieba column (segmentation.py)
and FTS5's own tokens of all three columns (fts_tokens.py), stored as one `tsvector`
whose lexemes carry their column's number, under a GIN index. A query is the very FTS5
expression query.py writes, read as a tree (fts_expression.py) and matched as a tsquery,
so both backends match the same chunks.

Ranking is FTS5's BM25, computed from the same figures: PostgreSQL's ts_rank_cd knows no
document frequency, and ranked the man-page set's answers well below FTS5. For the chunks
a query matches, the positions of its lexemes come back with the match (one statement);
phrase hits per column, each phrase's number of chunks (GIN counts) and the collection's
size and average length (`chunk_totals`) give each chunk FTS5's score, weighted as
ranking.py weighs the columns. The large-index pruning to the rarer terms is lookup.py's
own (`split_rare`), and the places are chosen by the shared `fused_places`, so the two
backends differ only in where the figures are read.

Vectors: float32 blobs (chunk_vectors), ranked exactly with numpy, as SQLite does without
sqlite-vec; past EXACT_SCAN_WARN vectors in a scope a warning says so once per store.
Where the database has pgvector (installed, or available and ours to create), a search of
the whole store asks an HNSW index instead (`KnnIndex`): a copy of each model's vectors as
pgvector values in `knn_chunks`, brought up to date when an embedding pass ends, with a
partial expression index per model and dimension. pgvector is not required.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Self

from generalAgent.config.settings import DocumentSettings
from generalAgent.display import N_
from generalAgent.search.english_gloss import (
    PROBE_CAP,
    chinese_glossed_query,
    may_gloss_in_chinese,
    own_words_weighed,
)
from generalAgent.search.fts_expression import (
    COLUMNS,
    Expression,
    Node,
    Phrase,
    conditions,
    lexeme,
    parse,
    phrases,
    tsquery,
    union_lexeme,
    union_lexemes,
)
from generalAgent.search.fts_tokens import FTS5Tokenizer
from generalAgent.search.lookup import (
    RERANK_POOL,
    ChunkHit,
    Glossed,
    LookupNotes,
    fused_places,
    glossed_query,
    hit_of_row,
    may_gloss,
    query_error,
    scanned_run,
    split_rare,
)
from generalAgent.search.postgres_schema import WRITE_LOCK, migrate
from generalAgent.search.query import MatchQuery, build_match_query
from generalAgent.search.query_translation import DOCLIST_CAP
from generalAgent.search.ranking import BM25, GLOSS_WEIGHT, PLAIN_BM25
from generalAgent.search.segmentation import Segmenter
from generalAgent.search.storage import ChunkRow, segment_rows
from generalAgent.search.store import (
    StoreCommon,
    StoredItem,
    Viewer,
    _check_write,
)

logger = logging.getLogger(__name__)

# FTS5's bm25 constants (sqlite/ext/fts5/fts5_aux.c), so the scores are FTS5's.
BM25_K1 = 1.2
BM25_B = 0.75
BM25_MIN_IDF = 1e-6  # FTS5 gives a term in more than half the rows this idf, not a negative one
# tsvector limits: positions above 16383 are clamped, at most 256 kept per lexeme, a lexeme
# is under 2 KB. A chunk is far smaller; the limits only bound a pathological one.
MAX_POSITION = 16_383
MAX_POSITIONS = 256
MAX_LEXEME_BYTES = 2_046
# More vectors than this (and than are indexed) to copy: the model's HNSW index is dropped
# and built again after the copy, as inserting into the graph costs far more per vector.
REBUILD_AFTER = 10_000
# A search in a rowid range (one document) finds its chunks through the GIN index when the
# whole store holds at most this many times the range's size in matches. A match fetched
# and dropped for its rowid costs less than testing one chunk's tsvector while the table
# is cached, more once it is scattered over a table larger than shared_buffers:
# bench.store_postgres, in-document p50 / SQLite's at 10k / 100k chunks, one run: 4 ->
# 1.78 / 2.24, 1 -> 1.77 / 2.02, never (0) -> 2.03 / 1.81.
GIN_FIRST = 1

_HIT_COLUMNS = (
    "c.rowid AS rowid, c.item_id AS item_id, c.id AS chunk_id, c.chunk_index AS chunk_index,"
    " c.page AS page, c.heading AS heading, c.text AS text, c.start_position AS start,"
    ' c.end_position AS "end", c.metadata AS metadata'
)


def _weights(bm25_sql: str) -> tuple[float, ...]:
    """The column weights of a `bm25(chunks_fts, w0, w1, w2)` expression of ranking.py."""
    return tuple(float(w) for w in re.findall(r"[-\d.]+", bm25_sql.split(",", 1)[1]))


TUNED_WEIGHTS = _weights(BM25)
PLAIN_WEIGHTS = _weights(PLAIN_BM25)


def tsvector_literal(columns: Sequence[Sequence[str]]) -> tuple[str, int]:
    """The tsvector text of a chunk's columns' FTS5 tokens (with positions, and the union
    lexemes without), and the number of tokens (BM25's length)."""
    positions: dict[str, list[int]] = {}
    position = 0
    for number, tokens in enumerate(columns):
        for token in tokens:
            position += 1
            kept = positions.setdefault(lexeme(number, token), [])
            if len(kept) < MAX_POSITIONS:
                kept.append(min(position, MAX_POSITION))
    parts = [_quoted_lexeme(word) for word in union_lexemes(columns) if _fits(word)]
    parts += [
        f"{_quoted_lexeme(text)}:{','.join(map(str, sorted(set(spots))))}"
        for text, spots in positions.items()
        if _fits(text)
    ]
    return " ".join(parts), position


def _fits(text: str) -> bool:
    """False for a run of thousands of letters: no query word can be one, and it is over
    the size of a lexeme."""
    return len(text.encode("utf-8")) <= MAX_LEXEME_BYTES


def _quoted_lexeme(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


class PostgresSearchStore(StoreCommon):
    """The search store in one PostgreSQL database (schema `schema`, default the
    connection's search_path). One connection, used by one call at a time."""

    backend = "postgresql"
    # Matches per chunk of a searched range up to which they are found through GIN (_Scope).
    gin_first = GIN_FIRST

    def __init__(self, url: str, settings: DocumentSettings, *, schema: str | None = None) -> None:
        try:
            import psycopg
        except ImportError:
            from generalAgent.config.install import install_hint

            raise query_error(
                N_("The PostgreSQL search store needs the postgres extra: {hint}"),
                hint=install_hint("postgres"),
            ) from None
        self.segmenter = Segmenter.from_setting(settings.use_jieba)
        self._url, self._settings, self._schema = url, settings, schema
        self.tokenizer = FTS5Tokenizer()
        self._lock = threading.RLock()
        self._warned_scan = False
        try:
            self.conn = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise query_error(
                N_("Cannot reach the search database ({problem}). Check the database URL."), problem=str(exc)
            ) from None
        if schema is not None:
            from psycopg import sql

            self.conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            self.conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        migrate(self.conn)
        self.knn = KnnIndex.detect(self.conn, settings.pgvector_ef_search)

    # -- writing -------------------------------------------------------------------------
    def put_item(
        self,
        item: StoredItem,
        rows: Sequence[ChunkRow],
        viewer: Viewer,
        vectors: Sequence[bytes] | None = None,
        vector_model: str = "",
    ) -> list[int]:
        segmented = segment_rows(rows, self.segmenter, item.title)
        return self.put_prepared(item, rows, segmented, viewer, vectors=vectors, vector_model=vector_model)

    def put_prepared(
        self,
        item: StoredItem,
        rows: Sequence[ChunkRow],
        segmented: Sequence[tuple[str, str]],
        viewer: Viewer,
        *,
        rowids: Sequence[int] | None = None,
        vectors: Sequence[bytes] | None = None,
        vector_model: str = "",
    ) -> list[int]:
        """`put_item` with the segmented columns already made (store.copy_store copies
        them from indexes.db), and with `rowids` when they must be kept."""
        _check_write(viewer, item)
        terms = [
            tsvector_literal(self._columns(row.text, words, title))
            for row, (words, title) in zip(rows, segmented, strict=True)
        ]
        with self.transaction() as statements:
            self._replace_item(statements, item, viewer)
            rowids = self._insert_chunks(
                self.conn, item.id, rows, segmented, terms, rowids, vectors, vector_model
            )
        return list(rowids)

    def _insert_chunks(
        self,
        conn: Any,
        item_id: str,
        rows: Sequence[ChunkRow],
        segmented: Sequence[tuple[str, str]],
        terms: Sequence[tuple[str, int]],
        rowids: Sequence[int] | None,
        vectors: Sequence[bytes] | None,
        vector_model: str,
    ) -> list[int]:
        """COPY the chunks (and vectors) of an item in the caller's write transaction."""
        if rowids is None:
            first = conn.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM chunks").fetchone()[0]
            rowids = list(range(first, first + len(rows)))
        with conn.cursor().copy(
            "COPY chunks (rowid, id, item_id, chunk_index, page, heading, start_position, end_position,"
            " metadata, text, text_jieba, title, tokens, terms) FROM STDIN"
        ) as copy:
            for rowid, row, (words, title), (vector_text, count) in zip(
                rowids, rows, segmented, terms, strict=True
            ):
                copy.write_row(
                    (
                        rowid,
                        row.id,
                        item_id,
                        row.chunk_index,
                        row.page,
                        row.heading,
                        row.start_position,
                        row.end_position,
                        row.metadata,
                        row.text,
                        words,
                        title,
                        count,
                        vector_text,
                    )
                )
        if vectors is not None:
            with conn.cursor().copy("COPY chunk_vectors (chunk_rowid, model, vector) FROM STDIN") as copy:
                for rowid, blob in zip(rowids, vectors, strict=True):
                    copy.write_row((rowid, vector_model, bytes(blob)))
        return list(rowids)

    def _columns(self, text: str, words: str, title: str) -> list[list[str]]:
        tokens = self.tokenizer.tokens
        return [tokens(text), tokens(words), tokens(title)]

    # -- the knowledge base's statements (store.py: `sql`, `transaction`) ---------------
    @property
    def sql(self) -> SqlConnection:
        """The knowledge base's statements, written once with SQLite's `?` marks, run here."""
        return SqlConnection(self)

    @contextmanager
    def transaction(self) -> Iterator[SqlConnection]:
        with self._write():
            yield SqlConnection(self)

    def replace_chunks(
        self,
        item_id: str,
        rows: Sequence[ChunkRow],
        segmented: Sequence[tuple[str, str]],
        vectors: Sequence[bytes] | None = None,
        vector_model: str = "",
    ) -> list[int]:
        """storage.replace_chunks here: inside `transaction()`, the item's chunks replaced."""
        terms = [
            tsvector_literal(self._columns(row.text, words, title))
            for row, (words, title) in zip(rows, segmented, strict=True)
        ]
        self.conn.execute("DELETE FROM chunks WHERE item_id = %s", (item_id,))
        return self._insert_chunks(self.conn, item_id, rows, segmented, terms, None, vectors, vector_model)

    def chunks_at(self, item_id: str, indexes: Sequence[int]) -> list[ChunkHit]:
        if not indexes:
            return []
        rows = self._query(
            f"SELECT {_HIT_COLUMNS} FROM chunks c WHERE c.item_id = %s AND c.chunk_index = ANY(%s)"
            " ORDER BY c.chunk_index",
            [item_id, list(indexes)],
            named=True,
        )
        return [hit_of_row(row, 0.0) for row in rows]

    def chunkless_items(self) -> list[str]:
        """Ids of items without chunks (normally none: every writer stores both at once)."""
        rows = self._query(
            "SELECT i.id FROM items i WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.item_id = i.id)"
        )
        return [row[0] for row in rows]

    def whole_store_nearest(self, embedder: Any, query: str, limit: int) -> list[tuple[int, float]] | None:
        """pgvector's HNSW answer when the model's vectors are indexed; None (the caller
        scans the vectors of its scope) without pgvector or an index."""
        if self.knn is None:
            return None
        with self._lock, reported():
            if not self.knn.indexed(self.conn, embedder.model):
                return None
        blob = embedder.vectors([query])[0]
        with self._lock, reported():
            return self.knn.nearest(self.conn, embedder.model, blob, limit)

    def settle_vectors(self, model: str) -> None:
        """After an embedding pass: pgvector's copy of `model`'s vectors brought up to date
        and indexed (nothing without pgvector). KnnIndex says why in this order: only the
        copy holds the write lock, a batch at a time; the index is built after, without
        blocking writers."""
        if self.knn is None:
            return
        with self._lock, reported():
            waiting, copied = self.knn.pending(self.conn, model)
            if waiting > max(REBUILD_AFTER, copied) and self.knn.state(self.conn, model) is not None:
                self.knn.drop(self.conn, model)
        with self._write():
            self.knn.prune(self.conn)
        # A thousand vectors a transaction: a writer waits for one batch, not the whole copy.
        while True:
            with self._write():
                copied, _ = self.knn.copy(self.conn, model)
            if not copied:
                break
        with self._lock, reported():
            dimension = self.knn.dimension(self.conn, model)
        if dimension:
            with self._lock, reported():
                self.knn.build(self.conn, model, dimension)

    @contextmanager
    def _write(self) -> Iterator[Any]:
        """One write transaction, writers one at a time (rowids are allocated per item)."""
        with self._lock, reported(), self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            yield self.conn

    # -- reading -------------------------------------------------------------------------
    def item_rowid_range(self, item_id: str, chunks: int | None = None) -> tuple[int, int] | None:
        # The first and last chunk by the (item_id, chunk_index) index: rowids follow the
        # chunks' order. MIN/MAX(rowid) WHERE item_id = ... walked the rowid index from an
        # end to the item (a quarter of a second for an early item of 100k chunks).
        row = self._query(
            "SELECT (SELECT rowid FROM chunks WHERE item_id = %s ORDER BY chunk_index LIMIT 1),"
            " (SELECT rowid FROM chunks WHERE item_id = %s ORDER BY chunk_index DESC LIMIT 1)",
            [item_id, item_id],
        )[0]
        return None if row[0] is None else (int(row[0]), int(row[1]))

    def window(self, item_id: str, first: int, last: int) -> list[ChunkHit]:
        rows = self._query(
            f"SELECT {_HIT_COLUMNS} FROM chunks c WHERE c.item_id = %s AND c.chunk_index BETWEEN %s AND %s"
            " ORDER BY c.chunk_index",
            [item_id, first, last],
            named=True,
        )
        return [hit_of_row(row, 0.0) for row in rows]

    def _query(
        self, sql: str, params: Sequence[Any] = (), *, named: bool = False, through_gin: bool = False
    ) -> list[Any]:
        """Rows of one statement; `through_gin`: planned without sequential or plain index
        scans, so its `terms @@` matches come from the GIN index (_Scope.through_gin)."""
        from psycopg.rows import dict_row, tuple_row

        with self._lock, reported():
            cursor = self.conn.cursor(row_factory=dict_row if named else tuple_row)
            if not through_gin:
                return cursor.execute(sql, list(params)).fetchall()
            with self.conn.transaction():
                # Left with bitmap scans, and the range (`rowid + 0`) no index condition, the
                # planner's one way in is the GIN index.
                cursor.execute("SET LOCAL enable_seqscan = off")
                cursor.execute("SET LOCAL enable_indexscan = off")
                return cursor.execute(sql, list(params)).fetchall()

    def find_chunks(
        self,
        query: str | MatchQuery | Sequence[str],
        limit: int,
        *,
        rowid_range: tuple[int, int] | None = None,
        item_filter: str = "",
        filter_params: Sequence[Any] = (),
        semantic: Sequence[Sequence[tuple[int, float]]] = (),
        notes: LookupNotes | None = None,
    ) -> list[ChunkHit]:
        """lookup.find_chunks on this database: the same arguments (`item_filter` with %s
        marks, or SQLite's ? ones), the same places, in the same order, the same `notes`."""
        if limit <= 0:
            return []
        matches = [
            q if isinstance(q, MatchQuery) else build_match_query(q, self.segmenter)
            for q in ([query] if isinstance(query, str | MatchQuery) else query)
        ]
        matches = [m for m in matches if not m.empty]
        pool = max(limit, RERANK_POOL)
        scope = _Scope(rowid_range, item_filter.replace("?", "%s"), list(filter_params))
        runs: list[tuple[list[tuple[int, float]], list[tuple[int, float]], float]] = []
        counted: dict[str, int] = {}  # chunks in `rowid_range` holding a term, counted once a call
        item = self._item_of_range(rowid_range) if rowid_range is not None else None
        glossing = may_gloss(query)
        to_chinese = may_gloss_in_chinese(query)  # the other direction (english_gloss.py)
        for match in matches:
            trees = self._expressions(match, rowid_range, counted, item)
            tuned, plain = self._scored(trees, pool, scope)
            if tuned and match.plain is not match:
                # Plain BM25 ranks by the query's own words (query.plain_query), the fusion's floor.
                plain_trees = self._expressions(match.plain, rowid_range, counted, item)
                plain = self._scored(plain_trees, pool, scope)[1]
            if tuned:
                covered = len(matches) > 1 or any(semantic) or glossing or to_chinese
                weight = self._coverage(match, scope, counted, item) if covered else 1.0
                runs.append((tuned, plain, weight))
        substrings = list(dict.fromkeys(s for m in matches for s in m.substrings))
        scanned: list[tuple[int, float]] = []
        if not runs and substrings:
            floor = min(m.scan_floor for m in matches if m.substrings)
            scanned = self._scan(substrings, floor, pool if any(semantic) else limit, scope)
            if not any(semantic) and (scanned or not glossing):
                return self.load_hits(scanned)
            if scanned:
                runs.append(scanned_run(scanned))
        glossed = (
            glossed_query(
                query,
                runs,
                scanned,
                self.segmenter,
                lambda probe: self._coverage(probe, scope, counted, item),
                lambda terms: self._holding(terms, DOCLIST_CAP, scope),
            )
            if glossing
            else None
        )
        gloss_weight = GLOSS_WEIGHT
        if glossed is None and to_chinese:
            chinese = chinese_glossed_query(
                query,
                self.segmenter,
                lambda terms: self._present_each(terms, scope, counted, item),
                lambda probe: self._capped_count(probe, scope, counted, item),
            )
            if chinese is not None:
                own_words_weighed(runs, chinese.english_prose)
                gloss_weight = chinese.weight
                if chinese.match is not None:
                    share = self._coverage(chinese.match, scope, counted, item)
                    glossed = Glossed(tuple(chinese.keywords.split()), chinese.match, share)
        if glossed is not None:
            trees = self._expressions(glossed.match, rowid_range, counted, item)
            tuned, plain = self._scored(trees, pool, scope)
            if tuned:
                runs.append((tuned, plain, gloss_weight * glossed.share))
                if notes is not None:
                    notes.glossed, notes.glossed_terms = glossed.english, glossed.terms
        if runs or any(semantic):
            wanted = list(
                dict.fromkeys(
                    [rowid for run in runs for scored in run[:2] for rowid, _ in scored]
                    + [rowid for ranking in semantic for rowid, _ in ranking]
                )
            )
            # The candidates are read whole at once: a second round trip for the few hits
            # returned cost more than the extra columns.
            rows = {
                row["rowid"]: row
                for row in self._query(
                    f"SELECT {_HIT_COLUMNS} FROM chunks c WHERE c.rowid = ANY(%s)", [wanted], named=True
                )
            }
            candidates = [
                (rowid, row["item_id"], row["page"], row["heading"], row["chunk_index"], row["text"])
                for rowid, row in rows.items()
            ]
            ranked = fused_places(runs, candidates, limit, semantic)
            return [
                replace(hit_of_row(rows[entry.rowid], entry.score), folded=folded)
                for entry, folded in ranked
                if entry.rowid in rows
            ]
        return []

    def load_hits(self, scored: Sequence[tuple[int, float]]) -> list[ChunkHit]:
        if not scored:
            return []
        rows = self._query(
            f"SELECT {_HIT_COLUMNS} FROM chunks c WHERE c.rowid = ANY(%s)",
            [[r for r, _ in scored]],
            named=True,
        )
        by_rowid = {row["rowid"]: row for row in rows}
        return [hit_of_row(by_rowid[rowid], float(score)) for rowid, score in scored if rowid in by_rowid]

    def _expressions(
        self,
        match: MatchQuery,
        rowid_range: tuple[int, int] | None,
        counted: dict[str, int],
        item: str | None = None,
    ) -> list[Expression]:
        """lookup._expressions, as trees: the expressions whose best chunks, merged, are the
        query's best (the rarer terms' chunks on a large index)."""
        if not match.any_terms:
            return [self._parse(match.all_terms)]
        if rowid_range is not None:
            chunks = rowid_range[1] - rowid_range[0] + 1
        else:
            chunks = self._query("SELECT COALESCE(MAX(rowid), 0) FROM chunks")[0][0]
        rare, common = split_rare(
            match.terms, chunks, lambda terms, cap: self._counts(terms, cap, rowid_range, counted, item)
        )
        if not rare:
            return []
        if not common:
            return [self._parse(" OR ".join(rare))]
        return [
            self._parse(f"({' OR '.join(rare)}) AND ({' OR '.join(common)})"),
            self._parse(" OR ".join(rare)),
        ]

    def _parse(self, expression: str) -> Expression:
        try:
            return parse(expression, self.tokenizer.tokens)
        except ValueError as exc:
            raise query_error(N_("the search could not run ({problem})"), problem=str(exc)) from None

    def _counts(
        self,
        terms: Sequence[str],
        cap: int,
        rowid_range: tuple[int, int] | None,
        counted: dict[str, int] | None = None,
        item: str | None = None,
    ) -> list[int]:
        """Chunks holding each term (within `rowid_range`), counted up to `cap`: a one-word
        term of the whole store from term_chunks, others by their GIN matches; within a
        document (`item`, the range's one item), a one-word term from item_terms, and the
        others in one pass over its chunks (`_range_counts`)."""
        if rowid_range is not None and counted is not None:
            missing = [term for term in dict.fromkeys(terms) if term not in counted]
            if missing and item is not None:
                words = {
                    term: union_lexeme(tree)
                    for term in missing
                    if isinstance(tree := self._parse(term), Phrase)
                }
                in_item = self._item_terms(item, [u for u in words.values() if u])
                counted.update((term, in_item.get(u, 0)) for term, u in words.items() if u)
                missing = [term for term in missing if term not in counted]
            if missing:
                counted.update(zip(missing, self._range_counts(missing, rowid_range), strict=True))
            return [min(counted[term], cap) for term in terms]
        trees = [self._parse(term) for term in terms]
        known: dict[int, int] = {}
        if rowid_range is None:
            unions = {n: union_lexeme(t) for n, t in enumerate(trees) if isinstance(t, Phrase)}
            counted = self._term_chunks([u for u in unions.values() if u])
            known = {n: min(counted.get(u, 0), cap) for n, u in unions.items() if u}
        rest = [n for n in range(len(trees)) if n not in known]
        if rest:
            within = " AND rowid BETWEEN %s AND %s" if rowid_range is not None else ""
            queries = ", ".join(
                f"(SELECT COUNT(*) FROM (SELECT 1 FROM chunks WHERE terms @@ %s::tsquery{within} LIMIT %s) s)"
                for _ in rest
            )
            values = [v for n in rest for v in (tsquery(trees[n]), *(rowid_range or ()), cap)]
            known.update(
                zip(rest, (int(c) for c in self._query(f"SELECT {queries}", values)[0]), strict=True)
            )
        return [known[n] for n in range(len(trees))]

    def _range_counts(self, terms: Sequence[str], rowid_range: tuple[int, int]) -> list[int]:
        """The chunks of a rowid range holding each term, exactly, in one pass over them.

        A document's common word is in most of its chunks: counted through the GIN index
        (one scan per term, as `_counts` does for the whole store) it cost a scan of the
        document per term, most of a search inside a 3,000-chunk manual. Here each chunk is
        read once and every term tested on it; the count is exact, so the growing caps of
        `split_rare` and the coverage ask again for nothing."""
        filters = ", ".join("count(*) FILTER (WHERE terms @@ %s::tsquery)" for _ in terms)
        values = [tsquery(self._parse(term)) for term in terms]
        row = self._query(
            f"SELECT {filters} FROM chunks WHERE rowid BETWEEN %s AND %s", [*values, *rowid_range]
        )[0]
        return [int(count) for count in row]

    def _item_of_range(self, rowid_range: tuple[int, int]) -> str | None:
        """The item whose chunks are exactly `rowid_range` (a search inside one document),
        else None. An item's rowids are consecutive: the range is one item's when its two
        ends are that item's and the rowids just outside are not."""
        first, last = rowid_range
        row = self._query(
            "SELECT a.item_id FROM chunks a JOIN chunks b ON b.rowid = %s AND b.item_id = a.item_id"
            " WHERE a.rowid = %s AND NOT EXISTS (SELECT 1 FROM chunks o WHERE o.rowid IN (%s, %s)"
            " AND o.item_id = a.item_id)",
            [last, first, first - 1, last + 1],
        )
        return str(row[0][0]) if row else None

    def _item_terms(self, item: str, lexemes: Sequence[str]) -> dict[str, int]:
        if not lexemes:
            return {}
        rows = self._query(
            "SELECT lexeme, chunks FROM item_terms WHERE item_id = %s AND lexeme = ANY(%s)",
            [item, list(lexemes)],
        )
        return {text: int(count) for text, count in rows}

    def _term_chunks(self, lexemes: Sequence[str]) -> dict[str, int]:
        if not lexemes:
            return {}
        rows = self._query("SELECT lexeme, chunks FROM term_chunks WHERE lexeme = ANY(%s)", [list(lexemes)])
        return {text: int(count) for text, count in rows}

    def _present_each(
        self, terms: Sequence[str], scope: _Scope, counted: dict[str, int], item: str | None = None
    ) -> list[bool]:
        """lookup.py's `_present_each`: whether any searched chunk holds each term (`_coverage` is their share)."""
        if not scope.item_filter:
            return [count > 0 for count in self._counts(terms, 1, scope.rowid_range, counted, item)]
        joins, where, values = scope.sql()
        exists = ", ".join(
            f"EXISTS (SELECT 1 FROM chunks c{joins} WHERE c.terms @@ %s::tsquery{where})" for _ in terms
        )
        params = [v for term in terms for v in (tsquery(self._parse(term)), *values)]
        return [bool(value) for value in self._query(f"SELECT {exists}", params)[0]]

    def _capped_count(
        self, match: MatchQuery, scope: _Scope, counted: dict[str, int], item: str | None = None
    ) -> int:
        """lookup.py's `_capped_count`: the searched chunks holding a one-word phrasing, up to PROBE_CAP."""
        if not match.all_terms:
            return 0
        if not scope.item_filter:
            return self._counts([match.all_terms], PROBE_CAP, scope.rowid_range, counted, item)[0]
        joins, where, values = scope.sql()
        sql = (
            f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM chunks c{joins}"
            f" WHERE c.terms @@ %s::tsquery{where} LIMIT {PROBE_CAP}) counted"
        )
        return int(self._query(sql, [tsquery(self._parse(match.all_terms)), *values])[0][0])

    def _coverage(
        self, match: MatchQuery, scope: _Scope, counted: dict[str, int], item: str | None = None
    ) -> float:
        """lookup.py's `_coverage`: the share of the terms found in the searched chunks (in one
        document, `item`, counted as `_counts` counts them there)."""
        if not match.terms:
            return 1.0
        return sum(self._present_each(match.terms, scope, counted, item)) / len(match.terms)

    def _holding(self, terms: Sequence[str], cap: int, scope: _Scope) -> list[frozenset[int]]:
        """lookup.py's `_holding`: the searched chunks holding each term, up to `cap` of
        them, in one statement."""
        if not terms:
            return []
        joins, where, values = scope.sql()
        union = " UNION ALL ".join(
            f"(SELECT {n} AS n, c.rowid FROM chunks c{joins} WHERE c.terms @@ %s::tsquery{where} LIMIT %s)"
            for n in range(len(terms))
        )
        params = [v for term in terms for v in (tsquery(self._parse(term)), *values, cap)]
        found: list[set[int]] = [set() for _ in terms]
        for n, rowid in self._query(union, params):
            found[int(n)].add(int(rowid))
        return [frozenset(rows) for rows in found]

    def _scored(
        self, trees: Sequence[Expression], limit: int, scope: _Scope
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """(rowid, score) of the `limit` best chunks by the tuned and by the plain BM25,
        best first; a chunk several expressions match keeps its best score in each."""
        if len(trees) == 2 and _rare_then_all(trees[0], trees[1]):
            # "(rare) AND (common)", then "rare": with one-word phrases, whose scores are
            # never negative, a chunk's better score of the two is its score on all the
            # words, and the chunks are those holding a rare one: one pass, not two.
            scored = [self._bm25_in_database(trees[1], trees[0], scope, limit)]
        else:
            # A chunk out of one tree's best `limit` cannot enter the merged best `limit`
            # through that tree's score (`limit` chunks beat it there), so each tree's best
            # suffice.
            scored = [self._bm25(tree, scope, limit) for tree in trees]
        tuned: dict[int, float] = {}
        plain: dict[int, float] = {}
        for scores in scored:
            for rowid, (t, p) in scores.items():
                tuned[rowid] = max(t, tuned.get(rowid, t))
                plain[rowid] = max(p, plain.get(rowid, p))

        def best(scores: dict[int, float]) -> list[tuple[int, float]]:
            # Ties in FTS5's order, by rowid.
            return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]

        return best(tuned), best(plain)

    def _bm25(self, tree: Expression, scope: _Scope, limit: int) -> dict[int, tuple[float, float]]:
        """FTS5's bm25 with the tuned and the plain column weights (ranking.py) of the chunks
        in scope the expression matches, at least the `limit` best by each: rowid -> (tuned,
        plain). Scored in the database when every phrase is one word (nearly every query:
        `_bm25_in_database`), else here from the positions of the matched lexemes."""
        found = phrases(tree)
        wanted = sorted({lexeme(c, t) for p in found for c in p.columns for t in p.tokens})
        if not wanted:
            return {}
        if _one_word(found):
            return self._bm25_in_database(tree, tree, scope, limit)
        joins, where, values = scope.sql()
        rows = self._query(
            # Only the query's lexemes are unnested: setweight marks them (A), ts_filter keeps
            # the marked, both in C; unnesting whole tsvectors was most of a search's time.
            "SELECT c.rowid, c.tokens, u.lexeme, u.positions FROM chunks c"
            + joins
            + " CROSS JOIN LATERAL unnest(ts_filter(setweight(c.terms, 'A', %s), '{a}')) u"
            + f" WHERE c.terms @@ %s::tsquery{where}",
            [wanted, tsquery(tree), *values],
        )
        if not rows:
            return {}
        chunks: dict[int, tuple[int, dict[str, Sequence[int]]]] = {}
        for rowid, length, text, spots in rows:
            chunks.setdefault(rowid, (length, {}))[1][text] = spots
        total_chunks, total_tokens, counts = self._phrase_counts(found)
        average = total_tokens / total_chunks if total_chunks else 1.0
        # Per phrase: its idf, and for a one-word phrase (nearly all) the lexeme of each of
        # its columns with the column's two weights; a longer one is matched position by
        # position (_phrase_hits). Counts times weights of 1 and 8 add up exactly, so the
        # sums equal FTS5's, which adds a weight per occurrence.
        plans = [
            (
                _idf(total_chunks, n),
                [(lexeme(c, p.tokens[0]), TUNED_WEIGHTS[c], PLAIN_WEIGHTS[c]) for c in p.columns]
                if len(p.tokens) == 1
                else None,
                p,
                above,
            )
            for p, n, above in zip(found, counts, conditions(tree), strict=True)
        ]
        boost = BM25_K1 + 1
        scores = {}
        for rowid, (length, at) in chunks.items():
            norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
            tuned = plain = 0.0
            for weight, keys, phrase, above in plans:
                if not all(_holds(node, at) for node in above):
                    continue  # an AND above it fails here: FTS5 counts none of it (`conditions`)
                by_tuned = by_plain = 0.0
                if keys is not None:
                    for key, tuned_weight, plain_weight in keys:
                        spots = at.get(key)
                        if spots:
                            by_tuned += tuned_weight * len(spots)
                            by_plain += plain_weight * len(spots)
                else:
                    per_column = _phrase_hits(phrase, at)
                    by_tuned = sum(w * n for w, n in zip(TUNED_WEIGHTS, per_column, strict=True))
                    by_plain = sum(w * n for w, n in zip(PLAIN_WEIGHTS, per_column, strict=True))
                if by_tuned:
                    tuned += weight * by_tuned * boost / (by_tuned + norm)
                if by_plain:
                    plain += weight * by_plain * boost / (by_plain + norm)
            scores[rowid] = (tuned, plain)
        return scores

    def _bm25_in_database(
        self, tree: Expression, scored: Expression, scope: _Scope, limit: int
    ) -> dict[int, tuple[float, float]]:
        """`_bm25` of the chunks `tree` matches, scored on the one-word phrases of `scored`
        (each only where the ANDs above it hold: `conditions`), summed by the database: only the `limit` best chunks by each weighting come back,
        not every matched chunk's lexemes.

        A word in nearly every chunk of a document matches all of them; sending each
        chunk's lexemes and positions here and scoring them in Python cost ten times
        SQLite's search inside a 2,400-chunk document. The sum is `_bm25`'s: per phrase,
        the weighted occurrences in each of its columns (a lexeme per column), then FTS5's
        term score; the phrase number keeps a phrase written twice counted twice, as FTS5
        and `_bm25` count it."""
        found = phrases(scored)
        wanted = sorted({lexeme(c, t) for p in found for c in p.columns for t in p.tokens})
        if not wanted:
            return {}
        total_chunks, total_tokens, counts = self._phrase_counts(found)
        average = total_tokens / total_chunks if total_chunks else 1.0
        # Each phrase's condition as one tsquery (0: none), tested once a matched chunk.
        tests = [" & ".join(tsquery(node) for node in above) for above in conditions(scored)]
        checked = list(dict.fromkeys(t for t in tests if t))
        keys = [
            (
                lexeme(c, p.tokens[0]),
                number,
                TUNED_WEIGHTS[c],
                PLAIN_WEIGHTS[c],
                _idf(total_chunks, n),
                checked.index(test) + 1 if test else 0,
            )
            for number, (p, n, test) in enumerate(zip(found, counts, tests, strict=True))
            if p.tokens
            for c in p.columns
        ]
        live = (
            "(SELECT array_agg(c.terms @@ q ORDER BY o) FROM unnest(%s::tsquery[]) WITH ORDINALITY x (q, o))"
            if checked
            else "NULL::boolean[]"
        )
        through_gin = scope.through_gin(_at_most(tree, dict(zip(found, counts, strict=True))), self.gin_first)
        joins, where, values = scope.sql(through_gin)
        rows = self._query(
            "WITH keys AS (SELECT * FROM unnest(%s::text[], %s::int[], %s::float8[], %s::float8[],"
            " %s::float8[], %s::int[]) AS k (lexeme, phrase, tuned, plain, idf, test)),"
            # Each matched chunk's occurrences of the query's lexemes (setweight marks them,
            # ts_filter keeps the marked: both in C) with its length's BM25 norm.
            " hits AS (SELECT c.rowid, %s * (1 - %s + %s * c.tokens / %s) AS norm, u.lexeme,"
            f" cardinality(u.positions) AS n, {live} AS live FROM chunks c"
            + joins
            + " CROSS JOIN LATERAL unnest(ts_filter(setweight(c.terms, 'A', %s), '{a}')) u"
            + f" WHERE c.terms @@ %s::tsquery{where}),"
            " phrases AS (SELECT h.rowid, h.norm, k.phrase, k.idf, sum(k.tuned * h.n) AS tuned,"
            " sum(k.plain * h.n) AS plain FROM hits h JOIN keys k ON k.lexeme = h.lexeme"
            " AND (k.test = 0 OR h.live[k.test])"
            " GROUP BY h.rowid, h.norm, k.phrase, k.idf),"
            " scored AS (SELECT rowid,"
            # Summed in the phrases' order, as FTS5 and `_bm25` add them: another order
            # rounds otherwise, and chunks of equal scores change places.
            " COALESCE(sum(idf * tuned * %s / (tuned + norm) ORDER BY phrase) FILTER (WHERE tuned > 0), 0)"
            " AS tuned,"
            " COALESCE(sum(idf * plain * %s / (plain + norm) ORDER BY phrase) FILTER (WHERE plain > 0), 0)"
            " AS plain"
            " FROM phrases GROUP BY rowid)"
            " SELECT rowid, tuned, plain FROM (SELECT rowid, tuned, plain,"
            " row_number() OVER (ORDER BY tuned DESC, rowid) AS by_tuned,"
            " row_number() OVER (ORDER BY plain DESC, rowid) AS by_plain FROM scored) s"
            " WHERE by_tuned <= %s OR by_plain <= %s",
            [
                [k[0] for k in keys],
                [k[1] for k in keys],
                [k[2] for k in keys],
                [k[3] for k in keys],
                [k[4] for k in keys],
                [k[5] for k in keys],
                BM25_K1,
                BM25_B,
                BM25_B,
                float(average),
                *([checked] if checked else []),
                list(wanted),
                tsquery(tree),
                *values,
                BM25_K1 + 1,
                BM25_K1 + 1,
                limit,
                limit,
            ],
            through_gin=through_gin,
        )
        return {int(rowid): (float(tuned), float(plain)) for rowid, tuned, plain in rows}

    def _phrase_counts(self, found: Sequence[Phrase]) -> tuple[int, int, list[int]]:
        """The store's chunks and tokens, and the chunks holding each phrase (in its
        columns): BM25's N, length and n, as FTS5 counts them (over the whole table,
        whatever the search's scope). One-word phrases' n come from term_chunks with the
        totals, in one statement; longer ones are counted by their GIN matches."""
        distinct = list(dict.fromkeys(found))
        unions = {p: union_lexeme(p) for p in distinct}
        total_chunks, total_tokens, counted = self._query(
            "SELECT t.chunks, t.tokens, (SELECT COALESCE(json_object_agg(lexeme, chunks), '{}')"
            " FROM term_chunks WHERE lexeme = ANY(%s)) FROM chunk_totals t",
            [[u for u in unions.values() if u]],
        )[0]
        by_phrase = {p: int(counted.get(u, 0)) for p, u in unions.items() if u}
        rest = [p for p in distinct if p not in by_phrase]
        if rest:
            queries = ", ".join("(SELECT COUNT(*) FROM chunks WHERE terms @@ %s::tsquery)" for _ in rest)
            by_phrase.update(
                zip(rest, self._query(f"SELECT {queries}", [tsquery(p) for p in rest])[0], strict=True)
            )
        return int(total_chunks), int(total_tokens), [int(by_phrase[p]) for p in found]

    def _scan(
        self, substrings: Sequence[str], floor: int, limit: int, scope: _Scope
    ) -> list[tuple[int, float]]:
        """lookup._scan on this database: the same substrings, weights and floor."""
        joins, where, values = scope.sql()
        present = " + ".join("(strpos(c.text, %s) > 0)::int * %s" for _ in substrings)
        weighted = [value for s in substrings for value in (s, len(s))]
        rows = self._query(
            f"SELECT rowid, found FROM (SELECT c.rowid, {present} AS found FROM chunks c{joins}"
            f" WHERE TRUE{where}) s WHERE found >= %s ORDER BY found DESC, rowid LIMIT %s",
            [*weighted, *values, max(1, floor), limit],
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    # -- vectors -------------------------------------------------------------------------
    def close(self) -> None:
        self.conn.close()
        self.tokenizer.close()

    @contextmanager
    def reopen(self) -> Iterator[PostgresSearchStore]:
        store = PostgresSearchStore(self._url, self._settings, schema=self._schema)
        try:
            yield store
        finally:
            store.close()

    def staging(self) -> RowStaging:
        return RowStaging(self)

    def nearest_chunks(
        self,
        embedder: Any,
        queries: Sequence[str],
        *,
        rowid_range: tuple[int, int] | None = None,
        item_ids: Sequence[str] = (),
    ) -> list[list[tuple[int, float]]]:
        """The whole store's nearest chunks by pgvector's index when there is one; else (and
        for a document or a folder) an exact scan of the scope's vectors, as SQLite's."""
        from generalAgent.search.semantic import VECTOR_CANDIDATES, scan_nearest

        if rowid_range is None and not item_ids and self.knn is not None:
            found = [self.whole_store_nearest(embedder, query, VECTOR_CANDIDATES) for query in queries]
            if all(ranking is not None for ranking in found):
                return [ranking or [] for ranking in found]

        return scan_nearest(self.sql, embedder, queries, rowid_range, item_ids)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class KnnIndex:
    """pgvector in the search store: whether it is there, and the HNSW index of each
    model's vectors (`knn_chunks`, a copy of chunk_vectors as pgvector values).

    The extension is the database's, not a store's: created (when it is available and ours
    to create) in `public`, so dropping a store's schema leaves it to every other user of
    the database; its objects are named with whatever schema it is in. An index is partial
    (one model) over a cast to the model's dimension, as pgvector indexes vectors of several
    sizes in one column; the model is written into the SQL as a literal, so the planner can
    match a search to its index.

    The order of settling, and why: the vectors are copied under the write lock (a copy
    matches chunk_vectors at each commit), a thousand per transaction, so a writer waits for
    a batch, not for the whole copy; the index is built after, CONCURRENTLY, so a
    writer replacing a document (whose chunks' copies go by cascade) does not wait for a
    build that takes minutes at 100k vectors. Before a large copy an existing index is
    dropped, as pgvector inserts into a graph one vector at a time, far slower than it
    builds one."""

    def __init__(self, schema: str, ef_search: int = 100) -> None:
        self.schema = schema
        self.ef_search = ef_search

    @classmethod
    def detect(cls, conn: Any, ef_search: int = 100) -> KnnIndex | None:
        """The extension when the database has it, created when it is available and the
        user may (CREATE EXTENSION); None otherwise: vectors are then scanned exactly."""
        import psycopg

        def installed() -> str | None:
            row = conn.execute(
                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                " WHERE e.extname = 'vector'"
            ).fetchone()
            return str(row[0]) if row else None

        schema = installed()
        if schema is None:
            available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
            if available is None:
                return None
            try:
                with conn.transaction():
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
            except psycopg.Error as exc:  # not ours to create (a privilege): scan exactly
                logger.info("pgvector is available but could not be created (%s); vectors are scanned", exc)
                return None
            schema = installed()
        elif schema != "public" and schema == conn.execute("SELECT current_schema()").fetchone()[0]:
            # Created in this store's schema by an earlier version: dropping the schema
            # would take the extension, and every other store's vectors, with it.
            try:
                with conn.transaction():
                    conn.execute("ALTER EXTENSION vector SET SCHEMA public")
                schema = installed()
            except psycopg.Error as exc:
                logger.warning("pgvector stays in the store's schema %s (%s)", schema, exc)
        return None if schema is None else cls(schema, ef_search)

    def _type(self, dimension: int | None = None) -> str:
        name = f"{self._schema_name}.vector"
        return f"{name}({dimension})" if dimension else name

    @property
    def _schema_name(self) -> str:
        return '"' + self.schema.replace('"', '""') + '"'

    def _index_name(self, model: str) -> str:
        import hashlib

        return "knn_" + hashlib.sha256(model.encode()).hexdigest()[:16]

    def prune(self, conn: Any) -> None:
        """Drop copies of vectors replaced or gone (in the caller's write transaction)."""
        self.create_table(conn)
        conn.execute(
            "DELETE FROM knn_chunks k WHERE NOT EXISTS (SELECT 1 FROM chunk_vectors v"
            " WHERE v.chunk_rowid = k.chunk_rowid AND v.model = k.model)"
        )

    def copy(self, conn: Any, model: str, batch: int = 1_000) -> tuple[int, int]:
        """Copy up to `batch` of `model`'s vectors not yet copied (in the caller's write
        transaction): (how many, their dimension)."""
        import numpy as np

        rows = conn.execute(
            "SELECT v.chunk_rowid, v.vector FROM chunk_vectors v LEFT JOIN knn_chunks k"
            " ON k.chunk_rowid = v.chunk_rowid WHERE v.model = %s AND k.chunk_rowid IS NULL"
            " ORDER BY v.chunk_rowid LIMIT %s",
            (model, batch),
        ).fetchall()
        dimension = 0
        with conn.cursor().copy("COPY knn_chunks (chunk_rowid, model, embedding) FROM STDIN") as copy:
            for rowid, blob in rows:
                values = np.frombuffer(bytes(blob), dtype="<f4")
                dimension = len(values)
                copy.write_row((rowid, model, "[" + ",".join(map(repr, values.tolist())) + "]"))
        return len(rows), dimension

    def dimension(self, conn: Any, model: str) -> int:
        row = conn.execute(
            "SELECT octet_length(vector) / 4 FROM chunk_vectors WHERE model = %s LIMIT 1", (model,)
        ).fetchone()
        return int(row[0]) if row else 0

    def create_table(self, conn: Any) -> None:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS knn_chunks ("
            " chunk_rowid BIGINT PRIMARY KEY REFERENCES chunks (rowid) ON DELETE CASCADE,"
            f" model TEXT NOT NULL, embedding {self._type()} NOT NULL)"
        )

    def pending(self, conn: Any, model: str) -> tuple[int, int]:
        """(vectors of `model` not yet copied, copies of them): whether a copy is large."""
        self.create_table(conn)
        row = conn.execute(
            "SELECT (SELECT count(*) FROM chunk_vectors v WHERE v.model = %s AND NOT EXISTS"
            " (SELECT 1 FROM knn_chunks k WHERE k.chunk_rowid = v.chunk_rowid)),"
            " (SELECT count(*) FROM knn_chunks WHERE model = %s)",
            (model, model),
        ).fetchone()
        return int(row[0]), int(row[1])

    def state(self, conn: Any, model: str) -> bool | None:
        """None: no index of `model`; True: a usable one; False: one a build left invalid
        (interrupted, or still being built CONCURRENTLY)."""
        row = conn.execute(
            "SELECT x.indisvalid FROM pg_class c JOIN pg_index x ON x.indexrelid = c.oid"
            " WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
            (self._index_name(model),),
        ).fetchone()
        return None if row is None else bool(row[0])

    def drop(self, conn: Any, model: str) -> None:
        """Drop `model`'s index without blocking readers or writers (outside a transaction)."""
        from psycopg import sql

        conn.execute(
            sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(self._index_name(model)))
        )

    def build(self, conn: Any, model: str, dimension: int) -> None:
        """Make `model`'s HNSW index if it has none (outside a transaction: CONCURRENTLY,
        so writers go on while it is built). One builder per index at a time: another
        process already building it is left to finish (searches scan until it has)."""
        from psycopg import sql

        name = self._index_name(model)
        key = ("generalagent-knn", f"{conn.execute('SELECT current_schema()').fetchone()[0]}.{name}")
        if not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s), hashtext(%s))", key).fetchone()[0]:
            return
        try:
            state = self.state(conn, model)
            if state:
                return
            if state is False:  # a build that was interrupted: its invalid index is dropped
                self.drop(conn, model)
            vectors = conn.execute("SELECT count(*) FROM knn_chunks WHERE model = %s", (model,)).fetchone()[0]
            conn.execute(
                "SELECT set_config('maintenance_work_mem', %s, false)",
                (f"{build_memory_kb(int(vectors), dimension, _setting_kb(conn))}kB",),
            )
            conn.execute(
                sql.SQL(
                    "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON knn_chunks"
                    " USING hnsw ((embedding::{}) {}) WHERE model = {}"
                ).format(
                    sql.Identifier(name),
                    sql.SQL(self._type(dimension)),
                    sql.SQL(f"{self._schema_name}.vector_cosine_ops"),
                    sql.Literal(model),
                )
            )
        finally:
            conn.execute("RESET maintenance_work_mem")
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s), hashtext(%s))", key)

    def indexed(self, conn: Any, model: str) -> bool:
        """Whether `model`'s vectors have a usable index (a pass has settled them)."""
        return bool(self.state(conn, model))

    def nearest_sql(self, model: str, dimension: int) -> Any:
        """The statement of a search (a query vector's text, then the limit)."""
        from psycopg import sql

        cast = sql.SQL(self._type(dimension))
        distance = sql.SQL("OPERATOR({}.<=>)").format(sql.Identifier(self.schema))
        return sql.SQL(
            "SELECT chunk_rowid, 1 - ((embedding::{cast}) {distance} %s::{cast}) FROM knn_chunks"
            " WHERE model = {model} ORDER BY (embedding::{cast}) {distance} %s::{cast} LIMIT %s"
        ).format(cast=cast, distance=distance, model=sql.Literal(model))

    def nearest(self, conn: Any, model: str, blob: bytes, limit: int) -> list[tuple[int, float]]:
        """The index's `limit` nearest. HNSW returns at most ef_search rows: the breadth is
        the setting, or `limit` when more are asked (pgvector's cap is 1,000)."""
        import numpy as np

        values = np.frombuffer(bytes(blob), dtype="<f4")
        text = "[" + ",".join(map(repr, values.tolist())) + "]"
        with conn.transaction():
            conn.execute(
                "SELECT set_config('hnsw.ef_search', %s, true)",
                (str(min(max(self.ef_search, limit), 1_000)),),
            )
            rows = conn.execute(self.nearest_sql(model, len(values)), (text, text, limit)).fetchall()
        return [(int(rowid), float(similarity)) for rowid, similarity in rows]


# An HNSW build is fast while its graph fits in maintenance_work_mem, and many times slower
# once it spills (pgvector says so in a notice). Per vector the graph holds the value and
# about 2 × m neighbours at level 0 (m 16): ~dimension × 4 + 1 KB, a quarter more for the
# upper levels and allocation. Capped so a build cannot take the server's memory: past the
# cap it spills, slower but bounded.
BUILD_MEMORY_CAP_KB = 1024 * 1024


def build_memory_kb(vectors: int, dimension: int, current_kb: int) -> int:
    """maintenance_work_mem (kB) for building an index of `vectors` of `dimension`: enough
    for the graph, never below the server's own setting, at most BUILD_MEMORY_CAP_KB."""
    wanted = vectors * (dimension * 4 + 1024) * 5 // 4 // 1024 + 1024
    return max(current_kb, min(wanted, BUILD_MEMORY_CAP_KB))


def _setting_kb(conn: Any) -> int:
    row = conn.execute(
        "SELECT setting::bigint * CASE unit WHEN 'kB' THEN 1 WHEN 'MB' THEN 1024 WHEN 'GB' THEN 1048576"
        " ELSE 1 END FROM pg_settings WHERE name = 'maintenance_work_mem'"
    ).fetchone()
    return int(row[0]) if row else 65_536


@contextmanager
def reported() -> Iterator[None]:
    """A lost or refused connection as QueryError (one of lookup.INDEX_ERRORS, which the
    tools and `kb` report as a message); the database's other errors pass unchanged."""
    import psycopg

    try:
        yield
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        raise query_error(
            N_(
                "The search database failed ({problem}). "
                "Check that it is running and that SEARCH_DATABASE_URL names it."
            ),
            problem=str(exc).strip() or type(exc).__name__,
        ) from None


def marks(statement: str) -> str:
    """A statement written with SQLite's `?` marks, with psycopg's: the knowledge base's
    statements (knowledge/store.py, fields.py) hold no literal '?' or '%'."""
    return statement.replace("%", "%%").replace("?", "%s")


class _Row(tuple[Any, ...]):
    """A row read by name or by number, as sqlite3.Row (`dict(row)` works too)."""

    names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self.names.index(key))
        return tuple.__getitem__(self, key)

    def keys(self) -> tuple[str, ...]:
        return self.names


def _rows(cursor: Any) -> Any:
    names = tuple(column.name for column in cursor.description or ())
    row_class = type("Row", (_Row,), {"names": names})
    return lambda values: row_class(values)


class RowStaging:
    """One document's text and chunks held until the write transaction (store.py's
    DocumentStaging): PostgreSQL has no per-connection temporary file SQLite's Staging can
    fill without a lock, so they wait in memory, and go in with one COPY. A document's
    text and rows are a few times its text in memory while it is written."""

    def __init__(self, store: PostgresSearchStore) -> None:
        self.store = store
        self.chunks = 0
        self.chars = 0
        self._pieces: list[str] = []
        self._rows: list[ChunkRow] = []
        self._segmented: list[tuple[str, str]] = []
        self._vectors: list[bytes] | None = []

    def add(
        self,
        text: str,
        rows: Sequence[ChunkRow],
        segmented: Sequence[tuple[str, str]],
        vectors: Sequence[bytes] | None = None,
    ) -> None:
        self._pieces.append(text)
        self._rows.extend(rows)
        self._segmented.extend(segmented)
        if self._vectors is not None and vectors is not None:
            self._vectors.extend(vectors)
        elif rows:
            self._vectors = None  # a piece without vectors: the document has none
        self.chunks += len(rows)
        self.chars += len(text)

    def flush(self) -> None:
        """Nothing to move: the rows wait in memory until `write_chunks`."""

    def drop_vectors(self) -> None:
        self._vectors = None

    def write_content(self, conn: Any, item_id: str) -> None:
        conn.execute("DELETE FROM document_texts WHERE item_id = ?", (item_id,))
        conn.execute(
            "INSERT INTO document_texts (item_id, content) VALUES (?, ?)", (item_id, "".join(self._pieces))
        )

    def write_chunks(self, conn: Any, item_id: str, vector_model: str = "") -> None:
        vectors = self._vectors if self._vectors and len(self._vectors) == len(self._rows) else None
        self.store.replace_chunks(item_id, self._rows, self._segmented, vectors, vector_model)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pieces, self._rows, self._segmented = [], [], []


class SqlConnection:
    """The part of sqlite3.Connection the knowledge base uses (execute, executemany), on
    the PostgreSQL store's connection: `?` statements, rows read by name or number."""

    def __init__(self, store: PostgresSearchStore) -> None:
        self.store = store

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        with self.store._lock, reported():
            cursor = self.store.conn.cursor(row_factory=_rows)
            return cursor.execute(marks(statement), list(params))

    def executemany(self, statement: str, params: Any) -> Any:
        with self.store._lock, reported():
            cursor = self.store.conn.cursor(row_factory=_rows)
            cursor.executemany(marks(statement), [list(p) for p in params])
            return cursor

    def cursor(self) -> SqlCursor:
        return SqlCursor(self)


class SqlCursor:
    """sqlite3.Cursor's `row_factory = None` (plain tuples) and `execute`, for lookup.py's
    readers that ask for plain rows."""

    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection
        self.row_factory: Any = _rows

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        from psycopg.rows import tuple_row

        store = self.connection.store
        with store._lock, reported():
            cursor = store.conn.cursor(row_factory=_rows if self.row_factory is not None else tuple_row)
            return cursor.execute(marks(statement), list(params))


class _Scope:
    """A search's scope as SQL on `chunks c` (and `items i` when filtered)."""

    def __init__(self, rowid_range: tuple[int, int] | None, item_filter: str, params: list[Any]) -> None:
        self.rowid_range, self.item_filter, self.params = rowid_range, item_filter, params

    def through_gin(self, matches: int | None, factor: int = GIN_FIRST) -> bool:
        """Whether a search of a rowid range whose expression matches at most `matches`
        chunks of the whole store finds them through the GIN index, the range only
        filtering them: when they are few beside the range (a document's rarer words).
        Left to itself the planner walks the range by the primary key (or the table) and
        tests every chunk's tsvector: 30 ms for a 3,200-chunk manual, 3 ms through GIN."""
        if self.rowid_range is None or matches is None:
            return False
        first, last = self.rowid_range
        return matches <= factor * (last - first + 1)

    def sql(self, through_gin: bool = False) -> tuple[str, str, list[Any]]:
        """The joins, conditions and their values; `through_gin`: the range written so no
        index serves it (`rowid + 0`), for a statement run without sequential scans."""
        joins, where, values = "", "", list[Any]()
        if self.rowid_range is not None:
            where += " AND c.rowid + 0 BETWEEN %s AND %s" if through_gin else " AND c.rowid BETWEEN %s AND %s"
            values += list(self.rowid_range)
        if self.item_filter:
            joins = " JOIN items i ON i.id = c.item_id"
            where += f" AND ({self.item_filter})"
            values += self.params
        return joins, where, values


def _at_most(tree: Expression, counts: dict[Phrase, int]) -> int | None:
    """An upper bound on the chunks `tree` matches, from its phrases' chunk counts (None
    when a phrase's count is unknown)."""
    if isinstance(tree, Phrase):
        return counts.get(tree)
    bounds = [_at_most(child, counts) for child in tree.children]
    if any(b is None for b in bounds):
        known = [b for b in bounds if b is not None]
        return min(known) if tree.operator == "AND" and known else None
    return min(bounds) if tree.operator == "AND" else sum(bounds)  # type: ignore[type-var,arg-type]


def _one_word(found: Sequence[Phrase]) -> bool:
    return all(len(phrase.tokens) <= 1 for phrase in found)


def _rare_then_all(first: Expression, second: Expression) -> bool:
    """Whether `first` is "(`second`) AND (...)" (the rare and the common words, then the
    rare alone: `_expressions`), every phrase of it one word."""
    return (
        isinstance(first, Node)
        and first.operator == "AND"
        and len(first.children) == 2
        and first.children[0] == second
        and _one_word(phrases(first))
    )


def _idf(total: int, holding: int) -> float:
    value = math.log((total - holding + 0.5) / (holding + 0.5)) if total else 0.0
    return value if value > 0 else BM25_MIN_IDF


def _holds(tree: Expression, at: dict[str, Sequence[int]]) -> bool:
    """Whether a chunk whose lexemes' positions are `at` matches `tree`."""
    if isinstance(tree, Phrase):
        return any(_phrase_hits(tree, at))
    found = (_holds(child, at) for child in tree.children)
    return all(found) if tree.operator == "AND" else any(found)


def _phrase_hits(phrase: Phrase, at: dict[str, Sequence[int]]) -> list[int]:
    """Per column of COLUMNS, the phrase's occurrences in a chunk (its tokens at consecutive positions)."""
    counts = [0] * len(COLUMNS)
    if len(phrase.tokens) == 1:  # nearly every phrase: its occurrences are its positions
        for column in phrase.columns:
            counts[column] = len(at.get(lexeme(column, phrase.tokens[0]), ()))
        return counts
    for column in phrase.columns:
        lists = [at.get(lexeme(column, token)) for token in phrase.tokens]
        if not all(lists):
            continue
        first, *rest = lists
        following = [set(spots) for spots in rest]  # type: ignore[arg-type]
        counts[column] = sum(
            1 for p in first or () if all(p + n in spots for n, spots in enumerate(following, start=1))
        )
    return counts
