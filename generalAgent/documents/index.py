"""Indexing files into indexes.db and finding chunks in it (SQLite FTS5 + jieba).

`SearchIndex` is the shell around one database connection: `index_file` extracts, chunks,
segments and writes one document in one transaction; `search` finds a document's chunks
for a query; `find_chunks` is the ranked lookup that knowledge search shares.

The lookup: FTS5 ranks the chunks holding any of the query's terms by BM25 (on a large
index only the chunks holding one of the rarer terms are ranked, with the same scores, see
`_scored`); the best RERANK_POOL of them are re-ranked with what their documents add
(ranking.py), and the text of the returned rows only is read. When no chunk holds any
term, a plain substring scan for the Chinese runs of the query is the last resort (see
query.py for why).
"""

from __future__ import annotations

import bisect
import hashlib
import re
import sqlite3
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from generalAgent.config.settings import DocumentSettings
from generalAgent.documents.chunking import chunk_blocks
from generalAgent.documents.database import (
    BM25,
    DOCUMENTS_DOMAIN,
    ChunkRow,
    IndexDatabase,
    VectorSource,
    item_rowid_range,
    replace_chunks,
    segment_rows,
    transaction,
)
from generalAgent.documents.extract import DocumentError, extract_document
from generalAgent.documents.query import MatchQuery, build_match_query
from generalAgent.documents.ranking import Candidate, name_words, names_document, rerank
from generalAgent.documents.segmentation import Segmenter

HASH_BLOCK = 1 << 20
MAX_REGEX_CHARS = 500
# Chunks FTS5 hands to the re-ranking: enough to see several chunks of each likely document.
# 30 and 50 give the same recall and MRR on bench/retrieval_quality.py; 30 costs ~7% less.
RERANK_POOL = 30
# Chunks an OR query may have FTS5 rank, at most, when some terms are rarer than that (see
# `_scored`): ranking costs ~1 µs per chunk, so this bounds the query's cost whatever the
# size of the index. On bench/retrieval_quality.py recall@5 is the unpruned one's from
# 1,000 up (500: -0.013, 250: -0.06).
CANDIDATE_BUDGET = 1_000

# (stage, chunks done, chunks total): lets the CLI draw a progress bar.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ChunkHit:
    rowid: int
    item_id: str
    chunk_id: str
    chunk_index: int
    page: int | None
    heading: str
    text: str
    start: int
    end: int
    score: float

    def to_result(self) -> dict[str, Any]:
        """The seed's result shape: chunk_id is the chunk's number within its document."""
        return {
            "chunk_id": self.chunk_index,
            "page": self.page,
            "heading": self.heading,
            "text": self.text,
            "score": round(self.score, 4),
        }


@dataclass(frozen=True)
class IndexedDocument:
    file_hash: str
    item_id: str
    name: str
    file_type: str
    total_chunks: int
    total_chars: int
    reused: bool  # True: an index of these bytes existed and was fresh
    seconds: float = 0.0
    warning: str = ""


def compute_file_hash(path: Path) -> str:
    """MD5 of the file's bytes (identity for dedup, not security)."""
    md5 = hashlib.md5(usedforsecurity=False)
    with Path(path).open("rb") as handle:
        while block := handle.read(HASH_BLOCK):
            md5.update(block)
    return md5.hexdigest()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class SearchIndex(IndexDatabase):
    """The documents part of indexes.db. Use as a context manager, or call `close()`."""

    def __init__(
        self,
        db_path: Path,
        settings: DocumentSettings,
        vectors: VectorSource | None = None,
    ) -> None:
        super().__init__(db_path, settings)
        self.vector_source = vectors

    # -- state of one file ------------------------------------------------------------
    def document(self, file_hash: str) -> sqlite3.Row | None:
        self.conn.row_factory = sqlite3.Row
        try:
            return self.conn.execute("SELECT * FROM documents WHERE file_hash = ?", (file_hash,)).fetchone()
        finally:
            self.conn.row_factory = None

    def is_fresh(self, path: Path, file_hash: str | None = None) -> bool:
        """Indexed with the current segmenter within INDEX_STALE_THRESHOLD_HOURS."""
        record = self.document(file_hash or compute_file_hash(path))
        if record is None or record["segmenter"] != self.segmenter.name:
            return False
        age = datetime.now(UTC) - datetime.fromisoformat(record["indexed_at"])
        return age < timedelta(hours=self.settings.index_stale_threshold_hours)

    # -- writing ----------------------------------------------------------------------
    def index_file(
        self, path: Path, *, force: bool = False, progress: Progress | None = None
    ) -> IndexedDocument:
        """Index `path` unless these bytes are already indexed and fresh.

        A different version previously indexed from the same path is removed in the same
        transaction. Raises `DocumentError` for files that cannot be read.
        """
        began = time.perf_counter()
        path = Path(path).resolve()
        try:
            file_hash = compute_file_hash(path)
        except FileNotFoundError:
            raise DocumentError(f"{path.name} does not exist; check the path.") from None
        except IsADirectoryError:
            raise DocumentError(f"{path.name} is a folder; give a file inside it.") from None
        except OSError as exc:
            raise DocumentError(f"{path.name} cannot be read: {exc.strerror}.") from None
        record = self.document(file_hash)
        if record is not None and not force and self.is_fresh(path, file_hash):
            with transaction(self.conn):
                self._remember_path(path, file_hash)
            return IndexedDocument(
                file_hash,
                record["item_id"],
                record["file_name"],
                record["file_type"],
                record["total_chunks"],
                0,
                reused=True,
                seconds=time.perf_counter() - began,
            )

        extracted = extract_document(path, self.settings)
        content, chunks = chunk_blocks(extracted.blocks, self.chunking)
        item_id = record["item_id"] if record is not None else uuid.uuid4().hex
        rows = [
            ChunkRow(uuid.uuid4().hex, c.index, c.text, c.start, c.end, c.page, c.heading) for c in chunks
        ]
        total = len(rows)
        segmented = segment_rows(
            rows,
            self.segmenter,
            extracted.name,
            (lambda n: progress("segment", n, total)) if progress else None,
        )
        vectors, warning = self._vectors(rows, progress)
        stamp = now_iso()
        with transaction(self.conn) as conn:
            # Another process may have indexed the same bytes since the lookup above; write
            # into its item, or its chunks and a second, unreferenced item would both stay.
            current = conn.execute(
                "SELECT item_id FROM documents WHERE file_hash = ?", (file_hash,)
            ).fetchone()
            if current is not None:
                item_id = current[0]
            conn.execute(
                "INSERT INTO items (id, domain, category, title, content, source, source_path,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'file', ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET content = excluded.content,"
                " source_path = excluded.source_path, updated_at = excluded.updated_at",
                (
                    item_id,
                    DOCUMENTS_DOMAIN,
                    extracted.file_type,
                    extracted.name,
                    content,
                    str(path),
                    stamp,
                    stamp,
                ),
            )
            replace_chunks(
                conn,
                item_id,
                rows,
                segmented,
                vectors,
                self.vector_source.model if self.vector_source else "",
            )
            conn.execute(
                "INSERT INTO documents (file_hash, item_id, file_name, file_type, file_size,"
                " indexed_at, total_chunks, segmenter) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(file_hash) DO UPDATE SET indexed_at = excluded.indexed_at,"
                " total_chunks = excluded.total_chunks, segmenter = excluded.segmenter",
                (
                    file_hash,
                    item_id,
                    extracted.name,
                    extracted.file_type,
                    path.stat().st_size,
                    stamp,
                    total,
                    self.segmenter.name,
                ),
            )
            self._remember_path(path, file_hash)
        if progress:
            progress("write", total, total)
        return IndexedDocument(
            file_hash,
            item_id,
            extracted.name,
            extracted.file_type,
            total,
            len(content),
            reused=False,
            seconds=time.perf_counter() - began,
            warning=warning,
        )

    def _vectors(self, rows: Sequence[ChunkRow], progress: Progress | None) -> tuple[list[bytes] | None, str]:
        if self.vector_source is None or not rows:
            return None, ""
        from generalAgent.knowledge.embeddings import EmbeddingError

        total = len(rows)
        try:
            vectors = self.vector_source.vectors(
                [r.text for r in rows],
                (lambda n: progress("embed", n, total)) if progress else None,
            )
        except EmbeddingError as exc:
            return None, f"Embeddings failed, indexed for keyword search only: {exc}"
        return vectors, ""

    def _remember_path(self, path: Path, file_hash: str) -> None:
        """Point `path` at `file_hash`; drop the version it pointed at if nothing else does."""
        previous = self.conn.execute(
            "SELECT file_hash FROM document_paths WHERE path = ?", (str(path),)
        ).fetchone()
        self.conn.execute(
            "INSERT INTO document_paths (path, file_hash) VALUES (?, ?)"
            " ON CONFLICT(path) DO UPDATE SET file_hash = excluded.file_hash",
            (str(path), file_hash),
        )
        if previous and previous[0] != file_hash:
            self._drop_unreferenced(previous[0])

    def _drop_unreferenced(self, file_hash: str) -> bool:
        still_used = self.conn.execute(
            "SELECT 1 FROM document_paths WHERE file_hash = ? LIMIT 1", (file_hash,)
        ).fetchone()
        if still_used:
            return False
        return self._delete_document(file_hash)

    def _delete_document(self, file_hash: str) -> bool:
        cursor = self.conn.execute(
            "DELETE FROM items WHERE id = (SELECT item_id FROM documents WHERE file_hash = ?)",
            (file_hash,),
        )
        return cursor.rowcount > 0

    # -- maintenance ------------------------------------------------------------------
    def cleanup_for_file(self, path: Path, keep_hash: str) -> int:
        """Remove the index of an older version of the file at `path` (not `keep_hash`).

        A version that another path still shows is kept for that path.
        """
        path = Path(path).resolve()
        with transaction(self.conn) as conn:
            row = conn.execute("SELECT file_hash FROM document_paths WHERE path = ?", (str(path),)).fetchone()
            if row is None or row[0] == keep_hash:
                return 0
            conn.execute("DELETE FROM document_paths WHERE path = ?", (str(path),))
            return int(self._drop_unreferenced(row[0]))

    def cleanup_old(self, days: int = 30) -> int:
        """Delete documents indexed more than `days` days ago; returns how many."""
        cutoff = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
        with transaction(self.conn) as conn:
            hashes = [
                r[0] for r in conn.execute("SELECT file_hash FROM documents WHERE indexed_at <= ?", (cutoff,))
            ]
            for file_hash in hashes:
                self._delete_document(file_hash)
        if hashes:
            self.conn.execute("VACUUM")  # give the space back to the disk
        return len(hashes)

    def stats(self) -> dict[str, Any]:
        files, chunks, size = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(total_chunks), 0), COALESCE(SUM(file_size), 0) FROM documents"
        ).fetchone()
        items = self.conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
        db_size = sum(p.stat().st_size for p in (self.db_path, Path(f"{self.db_path}-wal")) if p.exists())
        return {
            "total_files": files,
            "total_chunks": chunks,
            "total_size_bytes": size,
            "knowledge_items": items - files,
            "db_path": str(self.db_path),
            "db_size_bytes": db_size,
        }

    # -- reading ----------------------------------------------------------------------
    def search(self, path: Path, query: str, max_results: int = 5, *, regex: bool = False) -> list[ChunkHit]:
        """Best chunks of the already indexed file at `path`; [] if it is not indexed."""
        record = self.document(compute_file_hash(Path(path)))
        if record is None:
            return []
        return self.search_item(record["item_id"], query, max_results, regex=regex)

    def search_item(
        self, item_id: str, query: str, max_results: int = 5, *, regex: bool = False
    ) -> list[ChunkHit]:
        """Best chunks of one indexed document (or any item) by its id."""
        if regex:
            return regex_chunks(self.conn, item_id, query, max_results)
        return find_chunks(
            self.conn,
            query,
            self.segmenter,
            max_results,
            rowid_range=item_rowid_range(self.conn, item_id),
        )

    def neighbours(self, item_id: str, chunk_index: int, before: int = 1, after: int = 1) -> list[ChunkHit]:
        return chunk_window(self.conn, item_id, chunk_index - before, chunk_index + after)


# -- lookups shared with knowledge search ----------------------------------------------
_HIT_COLUMNS = (
    "c.rowid, c.item_id, c.id, c.chunk_index, c.page, c.heading, f.text, c.start_position, c.end_position"
)


def find_chunks(
    conn: sqlite3.Connection,
    query: str | MatchQuery,
    segmenter: Segmenter,
    limit: int,
    *,
    rowid_range: tuple[int, int] | None = None,
    item_filter: str = "",
    filter_params: Sequence[Any] = (),
) -> list[ChunkHit]:
    """The `limit` best chunks for `query`, best first.

    `rowid_range` confines the search to one item's chunks (they are consecutive);
    `item_filter` is a SQL condition on `items i` (e.g. "i.domain = ?") with its params.
    """
    match = query if isinstance(query, MatchQuery) else build_match_query(query, segmenter)
    if match.empty or limit <= 0:
        return []
    pool = max(limit, RERANK_POOL)
    scored = _scored(conn, match, pool, rowid_range, item_filter, filter_params)
    if scored:
        return load_hits(conn, _reranked(conn, match, scored)[:limit])
    if match.substrings:
        return load_hits(conn, _scan(conn, match.substrings, limit, rowid_range, item_filter, filter_params))
    return []


def _scored(
    conn: sqlite3.Connection,
    match: MatchQuery,
    limit: int,
    rowid_range: tuple[int, int] | None,
    item_filter: str,
    params: Sequence[Any],
) -> list[tuple[int, float]]:
    """(rowid, bm25) of the `limit` best chunks holding any term, best first.

    FTS5 computes bm25 for every chunk holding any term of an OR: a word in thousands of
    chunks ("file", "option", "文件") makes that thousands of computations, although such a
    word adds next to nothing to a chunk's score (its inverse document frequency is near
    zero). So on a large index the candidates are the chunks holding one of the rarest terms
    (see `_rare_and_common`), and their best are found with the plain OR's scores in two
    queries: "(rare) AND (common)" scores the chunks holding both kinds by every term;
    "(rare)" scores the others, which hold no common term, by all they hold. A chunk holding
    both appears in the second too, scored too low, so each keeps its higher score; and a
    chunk the second ranks above one without common terms truly is above it, so none of the
    best is missed. (Writing it as one query, "(rare) AND (rare OR common)", would count the
    rare terms twice: FTS5 scores every phrase of the expression.)
    """
    if not match.any_terms:
        return _match(conn, match.all_terms, limit, rowid_range, item_filter, params)
    if rowid_range is not None:  # one document: few chunks, nothing to save
        return _match(conn, match.any_terms, limit, rowid_range, item_filter, params)
    rare, common = _rare_and_common(conn, match.terms)
    if not rare:
        return []
    if not common:
        return _match(conn, " OR ".join(rare), limit, rowid_range, item_filter, params)
    either = f"({' OR '.join(rare)}) AND ({' OR '.join(common)})"
    best: dict[int, float] = {}
    for expression in (either, " OR ".join(rare)):
        for rowid, score in _match(conn, expression, limit, rowid_range, item_filter, params):
            best[rowid] = max(score, best.get(rowid, score))
    return sorted(best.items(), key=lambda pair: -pair[1])[:limit]


def _rare_and_common(conn: sqlite3.Connection, terms: Sequence[str]) -> tuple[list[str], list[str]]:
    """The terms found in the index, split into the rarest (rarest first, while the chunks
    holding them fit CANDIDATE_BUDGET; at least one) and the rest, each in query order.

    Counting stops at the budget, so telling rare from common costs little; an index with
    no more chunks than the budget is not counted at all (every term counts as rare).
    """
    if (conn.execute("SELECT MAX(rowid) FROM chunks").fetchone()[0] or 0) <= CANDIDATE_BUDGET:
        return list(terms), []  # too few chunks to be worth counting
    cap = CANDIDATE_BUDGET + 1
    counted = ", ".join(
        "(SELECT COUNT(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?))" for _ in terms
    )
    counts = conn.execute(f"SELECT {counted}", [v for term in terms for v in (term, cap)]).fetchone()
    kept = [n for n, count in enumerate(counts) if count > 0]
    rare: set[int] = set()
    total = 0
    for n in sorted(kept, key=lambda n: counts[n]):
        if rare and total + counts[n] > CANDIDATE_BUDGET:
            break
        rare.add(n)
        total += counts[n]
    return [terms[n] for n in kept if n in rare], [terms[n] for n in kept if n not in rare]


def _reranked(
    conn: sqlite3.Connection, match: MatchQuery, scored: Sequence[tuple[int, float]]
) -> list[tuple[int, float]]:
    marks = ",".join("?" * len(scored))
    rows = conn.execute(
        f"SELECT c.rowid, c.item_id, i.title FROM chunks c JOIN items i ON i.id = c.item_id"
        f" WHERE c.rowid IN ({marks})",
        [rowid for rowid, _ in scored],
    ).fetchall()
    items = {rowid: item_id for rowid, item_id, _ in rows}
    titles = {item_id: title for _, item_id, title in rows}
    named = {item_id for item_id, title in titles.items() if names_document(match.words, name_words(title))}
    candidates = [Candidate(rowid, items[rowid], score) for rowid, score in scored if rowid in items]
    return rerank(candidates, named)


def _scope(
    rowid_range: tuple[int, int] | None, item_filter: str, params: Sequence[Any]
) -> tuple[str, str, list[Any]]:
    joins, where, values = "", [], []
    if rowid_range is not None:
        where.append("chunks_fts.rowid BETWEEN ? AND ?")
        values.extend(rowid_range)
    if item_filter:
        joins = " JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN items i ON i.id = c.item_id"
        where.append(f"({item_filter})")
        values.extend(params)
    return joins, "".join(f" AND {w}" for w in where), values


def _match(
    conn: sqlite3.Connection,
    expression: str,
    limit: int,
    rowid_range: tuple[int, int] | None,
    item_filter: str,
    params: Sequence[Any],
) -> list[tuple[int, float]]:
    joins, where, values = _scope(rowid_range, item_filter, params)
    sql = (
        f"SELECT chunks_fts.rowid, -{BM25} AS score FROM chunks_fts{joins}"
        f" WHERE chunks_fts MATCH ?{where} ORDER BY score DESC LIMIT ?"
    )
    try:
        return conn.execute(sql, [expression, *values, limit]).fetchall()
    except sqlite3.OperationalError as exc:
        # The query builder quotes every word, so this is a bug (or a locked or damaged
        # database), not bad input: callers turn it into a message instead of a traceback.
        raise QueryError(f"the search could not run ({exc})") from None


def _scan(
    conn: sqlite3.Connection,
    substrings: Sequence[str],
    limit: int,
    rowid_range: tuple[int, int] | None,
    item_filter: str,
    params: Sequence[Any],
) -> list[tuple[int, float]]:
    joins, where, values = _scope(rowid_range, item_filter, params)
    present = " + ".join("(instr(chunks_fts.text, ?) > 0)" for _ in substrings)
    sql = (
        f"SELECT chunks_fts.rowid, {present} AS found FROM chunks_fts{joins}"
        f" WHERE found > 0{where} ORDER BY found DESC, chunks_fts.rowid LIMIT ?"
    )
    return conn.execute(sql, [*substrings, *values, limit]).fetchall()


def load_hits(conn: sqlite3.Connection, scored: Sequence[tuple[int, float]]) -> list[ChunkHit]:
    if not scored:
        return []
    marks = ",".join("?" * len(scored))
    rows = conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
        f" WHERE c.rowid IN ({marks})",
        [rowid for rowid, _ in scored],
    ).fetchall()
    by_rowid = {row[0]: row for row in rows}
    return [_hit(by_rowid[rowid], float(score)) for rowid, score in scored if rowid in by_rowid]


def _hit(row: Sequence[Any], score: float) -> ChunkHit:
    return ChunkHit(
        rowid=row[0],
        item_id=row[1],
        chunk_id=row[2],
        chunk_index=row[3],
        page=row[4],
        heading=row[5],
        text=row[6],
        start=row[7],
        end=row[8],
        score=score,
    )


def chunk_window(conn: sqlite3.Connection, item_id: str, first: int, last: int) -> list[ChunkHit]:
    """The item's chunks numbered first..last (clipped to those that exist), in order."""
    rows = conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
        " WHERE c.item_id = ? AND c.chunk_index BETWEEN ? AND ? ORDER BY c.chunk_index",
        (item_id, first, last),
    ).fetchall()
    return [_hit(row, 0.0) for row in rows]


def chunks_at(conn: sqlite3.Connection, item_id: str, indexes: Sequence[int]) -> list[ChunkHit]:
    """The item's chunks with these chunk_index values (those that exist), in order."""
    if not indexes:
        return []
    marks = ",".join("?" * len(indexes))
    rows = conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
        f" WHERE c.item_id = ? AND c.chunk_index IN ({marks}) ORDER BY c.chunk_index",
        (item_id, *indexes),
    ).fetchall()
    return [_hit(row, 0.0) for row in rows]


def regex_chunks(conn: sqlite3.Connection, item_id: str, pattern: str, limit: int) -> list[ChunkHit]:
    """Chunks containing a match of the regular expression `pattern`, in document order."""
    if len(pattern) > MAX_REGEX_CHARS:
        raise QueryError(f"the regular expression is longer than {MAX_REGEX_CHARS} characters")
    try:
        compiled = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    except re.error as exc:
        raise QueryError(f"invalid regular expression ({exc})") from None
    row = conn.execute("SELECT content FROM items WHERE id = ?", (item_id,)).fetchone()
    if row is None:
        return []
    spans = conn.execute(
        "SELECT chunk_index, start_position, end_position FROM chunks WHERE item_id = ? ORDER BY chunk_index",
        (item_id,),
    ).fetchall()
    starts = [start for _, start, _ in spans]
    wanted: dict[int, int] = {}  # chunk_index -> matches in it
    for match in compiled.finditer(row[0]):
        index = _chunk_at(spans, starts, match.start())
        if index is None:
            continue
        if index not in wanted and len(wanted) >= limit:
            break
        wanted[index] = wanted.get(index, 0) + 1
    hits = []
    for index, count in wanted.items():
        hits.extend(replace(h, score=float(count)) for h in chunk_window(conn, item_id, index, index))
    return hits


def _chunk_at(spans: Sequence[tuple[int, int, int]], starts: Sequence[int], offset: int) -> int | None:
    """The first chunk whose span contains `offset`; None between chunks (blank lines).

    Chunks are ordered by start and overlap their predecessor only, so the chunk holding
    `offset` is the last one starting at or before it, or one just before that.
    """
    position = bisect.bisect_right(starts, offset) - 1
    found = None
    for candidate in range(position, max(position - 3, -1), -1):
        index, start, end = spans[candidate]
        if start <= offset < end:
            found = index
    return found


class QueryError(Exception):
    """A query that cannot run (e.g. an invalid regular expression); the message says why."""
