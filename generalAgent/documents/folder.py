"""A folder is a corpus: search every document under a folder at once, grouped per document.

`search_folder` (the tool of that name and `generalagent search FOLDER QUERY`) walks the
folder for searchable files, indexes the ones not indexed yet or changed since (a file
whose size and modification time are those recorded is not even read: see
`SearchIndex.index_file`), then runs one ranked lookup over the chunks of all of them
(search/lookup.py) and groups the best places per document, best document first, each
place with its context, under the same content budgets as one file (per chunk, per
result, per call).

Indexing a folder the first time can take long: it stops at a deadline and the search
answers from what is indexed so far, saying how many files are left; the next search
picks up there (and any file changed in between). Hidden files and folders are left out,
and a symbolic link is followed only where it stays inside the folder (folder_walk.py).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from generalAgent.config.settings import DocumentSettings
from generalAgent.display import N_, Message
from generalAgent.documents.folder_walk import walk_folder
from generalAgent.documents.index import QueryError, SearchIndex
from generalAgent.documents.reading import SEARCHABLE_SUFFIXES, DocumentError, OpenFile, open_plainly
from generalAgent.documents.search import (
    EMPTY_QUERY,
    INDEX_UNUSABLE,
    SCORE_DIGITS,
    SearchFailure,
    gloss_line,
    language_advice,
    passage_lines,
    query_failure,
    rendering_line,
    search_failure,
    semantic_off,
    with_context,
)
from generalAgent.search.budgets import ContentBudget, apply_budget
from generalAgent.search.connection import DatabaseError
from generalAgent.search.embeddings import EmbeddingError
from generalAgent.search.language import language_name
from generalAgent.search.lookup import LookupNotes
from generalAgent.search.query import normalise_query, phrasings
from generalAgent.search.query_rendering import RenderQuery, with_rendering
from generalAgent.search.results import SearchResult
from generalAgent.search.storage import VectorSource
from generalAgent.search.store import TERMINAL, SearchStore, Viewer

# Files one folder search considers, at most (the first ones by path): past that, search a
# sub-folder. Checking an unchanged file costs ~0.1 ms, so the check itself stays small.
MAX_FOLDER_FILES = 2_000
# Seconds one search may spend indexing new or changed files before it answers from what
# is indexed; the next search goes on where it stopped.
FOLDER_INDEX_SECONDS = 120.0
# Places one folder search returns at most (the content budget of one call cuts further).
MAX_FOLDER_RESULTS = 20

# (files done, files total, name of the file being read): the CLI draws a progress bar.
FolderProgress = Callable[[int, int, str], None]


@dataclass
class FolderIndexing:
    """What bringing a folder's index up to date did."""

    items: dict[str, Path] = field(default_factory=dict)  # item id -> file
    languages: dict[str, str] = field(default_factory=dict)  # item id -> main language
    file_types: dict[str, str] = field(default_factory=dict)  # item id -> type
    indexed: int = 0
    unchanged: int = 0
    failed: list[tuple[Path, DocumentError]] = field(default_factory=list)
    pending: list[Path] = field(default_factory=list)  # not reached before the deadline
    warning: Message | None = None  # embedding new chunks failed: they are searched by keywords only
    notes: list[str] = field(default_factory=list)  # what reading left out (OCR page limits), per file


@dataclass(frozen=True, slots=True)
class DocumentHits:
    """One document of a folder search and its results (places), best first."""

    file: str
    file_type: str
    language: str
    results: tuple[SearchResult, ...]


@dataclass(frozen=True, slots=True)
class FailedFile:
    file: str
    error: str  # in English, as the model reads it
    # The terminal says it in its language (`unreadable.shown`); left out of --json.
    unreadable: DocumentError | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FolderSearch:
    """What a folder search did and found: documents best first, each with its places."""

    folder: str
    query: str | list[str]
    files: int  # searchable files considered
    more_files: bool  # the folder holds more than MAX_FOLDER_FILES
    indexed: int  # newly indexed by this search
    unchanged: int
    failed: tuple[FailedFile, ...]
    pending: int  # not indexed yet (the indexing deadline passed)
    languages: tuple[str, ...]  # the documents' main languages
    max_results: int
    documents: tuple[DocumentHits, ...]
    # Semantic search is off and keyword search answered: the model reads its English, a
    # person its UI language (as KnowledgeSearch's warning).
    warning: Message | None = None
    notes: str = ""  # what reading left out (OCR page limits), per file
    rendered: str = ""  # the query's rendering in the documents' language the search added
    rendered_language: str = ""  # that language
    # The English keywords a lone Chinese question was also searched as (the dictionary
    # gloss, search/query_translation.py): "" when none was searched.
    glossed: str = ""
    # Chunks of the searched documents without a vector of the query's model: found by
    # words only (counted only when the search has vectors; the CLI says so in one line).
    unembedded: int = 0

    @property
    def searched(self) -> int:
        return self.files - self.pending - len(self.failed)


def searchable_files(folder: Path, limit: int = MAX_FOLDER_FILES) -> tuple[list[Path], bool]:
    """The searchable files under `folder` (sorted by path, hidden ones left out, never
    through a link that leads out of the folder: the walk of documents/folder_walk.py), at
    most `limit`; and whether there were more."""
    found = walk_folder(folder, include=lambda path: path.suffix.lower() in SEARCHABLE_SUFFIXES, limit=limit)
    return found.files, found.more


def index_folder(
    index: SearchIndex,
    files: Sequence[Path],
    deadline: float,
    progress: FolderProgress | None = None,
) -> FolderIndexing:
    """Bring the index of `files` up to date until `deadline` (time.monotonic())."""
    done = FolderIndexing()
    for number, path in enumerate(files):
        if time.monotonic() > deadline:
            done.pending = list(files[number:])
            break
        if progress is not None:
            progress(number, len(files), path.name)
        try:
            document = index.index_file(path)
        except DocumentError as exc:
            done.failed.append((path, exc))
            continue
        done.items[document.item_id] = path
        done.warning = done.warning or document.warning
        if document.notes:
            done.notes.append(f"{path.name}: {document.notes}")
        done.languages[document.item_id] = document.language
        done.file_types[document.item_id] = document.file_type
        if document.reused:
            done.unchanged += 1
        else:
            done.indexed += 1
    if progress is not None:
        progress(len(files) - len(done.pending), len(files), "")
    return done


@contextmanager
def searching(label: str) -> Iterator[None]:
    """A folder search's failures as one SearchFailure line each: a bad query, a database
    that cannot be used, or one that is busy."""
    try:
        yield
    except QueryError as exc:
        raise query_failure(label, exc) from None
    except DatabaseError as exc:
        raise SearchFailure(str(exc)) from None
    except sqlite3.Error as exc:
        raise search_failure(INDEX_UNUSABLE, problem=str(exc)) from None


def search_folder(
    db_path: Path,
    settings: DocumentSettings,
    folder: Path,
    query: str | Sequence[str],
    max_results: int | None = None,
    *,
    shown_as: Callable[[Path], str] = str,
    vectors: VectorSource | None = None,
    open_file: OpenFile = open_plainly,
    progress: FolderProgress | None = None,
    index_seconds: float = FOLDER_INDEX_SECONDS,
    conn: sqlite3.Connection | None = None,
    render: RenderQuery | None = None,
    store: SearchStore | None = None,
    viewer: Viewer = TERMINAL,
) -> FolderSearch:
    """Index the folder's documents as needed and return the best places for `query` (one
    string or several phrasings) across all of them, grouped per document, within budget.
    `render`: as `search_document`'s, into the commonest language of the documents whose
    script is not the query's."""
    if not phrasings(query):
        raise search_failure(EMPTY_QUERY)
    if not folder.is_dir():
        raise search_failure(
            N_("{folder} is not a folder; give a folder, or search one file."), folder=shown_as(folder)
        )
    files, more = searchable_files(folder)
    return search_files(
        db_path,
        settings,
        files,
        query,
        max_results,
        label=shown_as(folder),
        more_files=more,
        shown_as=shown_as,
        vectors=vectors,
        open_file=open_file,
        progress=progress,
        index_seconds=index_seconds,
        conn=conn,
        render=render,
        store=store,
        viewer=viewer,
    )


def search_files(
    db_path: Path,
    settings: DocumentSettings,
    files: Sequence[Path],
    query: str | Sequence[str],
    max_results: int | None = None,
    *,
    label: str,
    more_files: bool = False,
    shown_as: Callable[[Path], str] = str,
    vectors: VectorSource | None = None,
    open_file: OpenFile = open_plainly,
    progress: FolderProgress | None = None,
    index_seconds: float = FOLDER_INDEX_SECONDS,
    conn: sqlite3.Connection | None = None,
    render: RenderQuery | None = None,
    store: SearchStore | None = None,
    viewer: Viewer = TERMINAL,
) -> FolderSearch:
    """Like `search_folder` for the given `files` (a folder's, or those a glob names),
    shown under `label`."""
    asked = phrasings(query)
    if not asked:
        raise search_failure(EMPTY_QUERY)
    more = more_files
    budget = ContentBudget.from_settings(settings)
    wanted = settings.search_max_results_default * 2 if max_results is None else int(max_results)
    limit = max(1, min(wanted, MAX_FOLDER_RESULTS))
    warning: Message | None = None
    # Chunks are embedded after indexing, in the background (search/background_embedding.py).
    with (
        searching(label),
        SearchIndex(db_path, settings, None, open_file, conn=conn, store=store, viewer=viewer) as index,
    ):
        indexing = index_folder(index, files, time.monotonic() + index_seconds, progress)
        items = list(indexing.items)
        asked, rendered, rendered_language = with_rendering(asked, indexing.languages.values(), render)
        semantic: list[list[tuple[int, float]]] = []
        warning = indexing.warning
        unembedded = 0
        if vectors is not None and items and warning is None:
            try:
                semantic = index.store.nearest_chunks(vectors, asked, item_ids=items)
                unembedded = index.store.unembedded_chunks(vectors.model, item_ids=items)
            except EmbeddingError as exc:
                warning = semantic_off(exc)
        lookup = LookupNotes()
        hits = (
            index.store.find_chunks(
                asked,
                limit,
                item_filter=f"i.id IN ({','.join('?' * len(items))})",
                filter_params=items,
                semantic=semantic,
                notes=lookup,
            )
            if items
            else []
        )
        results = with_context(index, hits)
    grouped: dict[str, list[SearchResult]] = {}
    for result in apply_budget(results, budget):
        grouped.setdefault(result.item_id, []).append(result)
    shown_query = [normalise_query(q) for q in asked]
    return FolderSearch(
        folder=label,
        query=shown_query[0] if len(shown_query) == 1 else shown_query,
        files=len(files),
        more_files=more,
        indexed=indexing.indexed,
        unchanged=indexing.unchanged,
        failed=tuple(FailedFile(shown_as(path), str(error), error) for path, error in indexing.failed),
        pending=len(indexing.pending),
        languages=tuple(sorted({language for language in indexing.languages.values() if language})),
        max_results=limit,
        documents=tuple(
            DocumentHits(
                file=shown_as(indexing.items[item_id]),
                file_type=indexing.file_types[item_id],
                language=indexing.languages[item_id],
                results=tuple(found),
            )
            for item_id, found in grouped.items()
        ),
        warning=warning,
        notes=" ".join(indexing.notes),
        rendered=rendered,
        rendered_language=rendered_language,
        glossed=lookup.glossed,
        unembedded=unembedded,
    )


def search_indexed(
    db_path: Path,
    settings: DocumentSettings,
    query: str | Sequence[str],
    max_results: int | None = None,
    *,
    label: str,
    conn: sqlite3.Connection | None = None,
    vectors: VectorSource | None = None,
    store: SearchStore | None = None,
    viewer: Viewer = TERMINAL,
) -> FolderSearch:
    """The best places for `query` across every indexed document, grouped per document,
    within budget; nothing is read or indexed (each document is shown by the path it was
    last indexed from). `vectors`: as `search_files`'. In a team's store, the documents
    `viewer` sees."""
    asked = phrasings(query)
    if not asked:
        raise search_failure(EMPTY_QUERY)
    budget = ContentBudget.from_settings(settings)
    wanted = settings.search_max_results_default * 2 if max_results is None else int(max_results)
    limit = max(1, min(wanted, MAX_FOLDER_RESULTS))
    with searching(label), SearchIndex(db_path, settings, conn=conn, store=store, viewer=viewer) as index:
        documents = {
            row[0]: tuple(row[1:])
            for row in index.db.execute(
                "SELECT d.item_id, COALESCE((SELECT MAX(p.path) FROM document_paths p"
                " WHERE p.file_hash = d.file_hash), d.file_name), d.file_type, d.language FROM documents d"
            )
        }
        semantic: list[list[tuple[int, float]]] = []
        unembedded = 0
        warning: Message | None = None
        if vectors is not None and documents:
            try:
                semantic = index.store.nearest_chunks(vectors, asked, item_ids=list(documents))
                unembedded = index.store.unembedded_chunks(vectors.model, item_ids=list(documents))
            except EmbeddingError as exc:
                warning = semantic_off(exc)
        seen, params = viewer.where("i", "?")
        lookup = LookupNotes()
        hits = index.store.find_chunks(
            asked,
            limit,
            item_filter=f"i.domain = ? AND {seen}",
            filter_params=["documents", *params],
            semantic=semantic,
            notes=lookup,
        )
        results = with_context(index, hits)
    grouped: dict[str, list[SearchResult]] = {}
    for result in apply_budget(results, budget):
        if result.item_id in documents:
            grouped.setdefault(result.item_id, []).append(result)
    shown_query = [normalise_query(q) for q in asked]
    return FolderSearch(
        folder=label,
        query=shown_query[0] if len(shown_query) == 1 else shown_query,
        files=len(documents),
        more_files=False,
        indexed=0,
        unchanged=len(documents),
        failed=(),
        pending=0,
        languages=tuple(sorted({language for _, _, language in documents.values() if language})),
        max_results=limit,
        documents=tuple(
            DocumentHits(
                file=documents[item_id][0],
                file_type=documents[item_id][1],
                language=documents[item_id][2],
                results=tuple(found),
            )
            for item_id, found in grouped.items()
        ),
        warning=warning,
        glossed=lookup.glossed,
        unembedded=unembedded,
    )


def render_folder_search(result: FolderSearch) -> str:
    """The folder search as the model reads it: what was searched, then each document with
    its places (best document first), each place with its context."""
    query = result.query
    what = f'"{query}"' if isinstance(query, str) else " or ".join(f'"{q}"' for q in query)
    languages = ", ".join(language_name(code) for code in result.languages) or "unknown"
    head = f"{result.searched} document(s) searched in {result.folder} (languages: {languages})"
    notes = []
    if result.indexed:
        notes.append(f"{result.indexed} newly indexed")
    if result.pending:
        notes.append(
            f"{result.pending} not indexed yet (indexing stops after a while; search again to go on)"
        )
    if result.failed:
        notes.append(f"{len(result.failed)} unreadable: " + "; ".join(f.error for f in result.failed[:3]))
    if result.more_files:
        notes.append(f"only the first {result.files} files are searched; search a sub-folder for the rest")
    if notes:
        head += " — " + ", ".join(notes)
    notice = " ".join(p for p in (result.notes, result.warning.english() if result.warning else "") if p)
    if notice:
        head = f"Note: {notice}\n{head}"
    documents = result.documents
    if not documents:
        advice = _folder_language_advice(result, found=False)
        return (
            f"{head}.\nNo passage matches {what}. "
            + (advice + " " if advice else "")
            + "Try other words, a synonym or the other language, or fewer words."
        )
    places = sum(len(d.results) for d in documents)
    lines = [f"{head}.", f"{places} passage(s) in {len(documents)} document(s) for {what}, best first:"]
    if result.rendered:
        lines.append(rendering_line(result.rendered, result.rendered_language))
    if result.glossed:
        lines.append(gloss_line(result.glossed))
    advice = _folder_language_advice(result, found=True)
    if advice:  # after the gloss line, which it refers to (a rendering never has one)
        lines.append(advice)
    number = 0
    for document in documents:
        language = f", {language_name(document.language)} text" if document.language else ""
        lines += ["", f"## {document.file} ({document.file_type}{language})"]
        for hit in document.results:
            number += 1
            place = hit.place or f"chunk {hit.chunk_index}"
            lines.append(f"[{number}] {place} | score {round(hit.score, SCORE_DIGITS):g}")
            lines += passage_lines(hit)
    return "\n".join(lines)


def _folder_language_advice(result: FolderSearch, found: bool) -> str:
    """Advice on the query's language when every document of the folder is in one language
    and no phrasing is in its script (see documents/search.py `language_advice`)."""
    if len(result.languages) != 1:
        return ""
    return (
        language_advice(result.languages[0], result.query, found, result.glossed)
        .replace("the document is", "the documents are")
        .replace("The document is", "The documents are")
    )
