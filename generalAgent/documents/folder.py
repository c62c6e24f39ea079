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
picks up there (and any file changed in between). Hidden files and folders and symbolic
links are not followed: the folder's own files only.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generalAgent.config.settings import DocumentSettings
from generalAgent.documents.extract import SEARCHABLE_SUFFIXES, DocumentError, OpenFile, open_plainly
from generalAgent.documents.index import QueryError, SearchIndex
from generalAgent.documents.search import SearchFailure, language_advice, with_context
from generalAgent.search.budgets import ContentBudget, apply_budget
from generalAgent.search.database import DatabaseError, VectorSource
from generalAgent.search.embeddings import EmbeddingError
from generalAgent.search.language import language_name
from generalAgent.search.lookup import find_chunks
from generalAgent.search.query import normalise_query, phrasings
from generalAgent.search.semantic import nearest_chunks

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
    failed: list[tuple[Path, str]] = field(default_factory=list)
    pending: list[Path] = field(default_factory=list)  # not reached before the deadline
    warning: str = ""  # embedding new chunks failed: they are searched by keywords only


def searchable_files(folder: Path, limit: int = MAX_FOLDER_FILES) -> tuple[list[Path], bool]:
    """The searchable files under `folder` (sorted by path, hidden ones and symbolic links
    left out), at most `limit`; and whether there were more."""
    found: list[Path] = []
    for root, folders, files in os.walk(folder, followlinks=False):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            if name.startswith(".") or path.suffix.lower() not in SEARCHABLE_SUFFIXES or path.is_symlink():
                continue
            found.append(path)
            if len(found) > limit:
                return found[:limit], True
    return found, False


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
            done.failed.append((path, str(exc)))
            continue
        done.items[document.item_id] = path
        done.warning = done.warning or document.warning
        done.languages[document.item_id] = document.language
        done.file_types[document.item_id] = document.file_type
        if document.reused:
            done.unchanged += 1
        else:
            done.indexed += 1
    if progress is not None:
        progress(len(files) - len(done.pending), len(files), "")
    return done


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
) -> dict[str, Any]:
    """Index the folder's documents as needed and return the best places for `query` (one
    string or several phrasings) across all of them, grouped per document, within budget."""
    asked = phrasings(query)
    if not asked:
        raise SearchFailure("Empty query: give the words to look for.")
    if not folder.is_dir():
        raise SearchFailure(f"{shown_as(folder)} is not a folder; give a folder, or search one file.")
    budget = ContentBudget.from_settings(settings)
    wanted = settings.search_max_results_default * 2 if max_results is None else int(max_results)
    limit = max(1, min(wanted, MAX_FOLDER_RESULTS))
    files, more = searchable_files(folder)
    warning = ""
    try:
        # Chunks are embedded after indexing, in the background (search/background_embedding.py).
        with SearchIndex(db_path, settings, None, open_file, conn=conn) as index:
            indexing = index_folder(index, files, time.monotonic() + index_seconds, progress)
            items = list(indexing.items)
            semantic: list[list[tuple[int, float]]] = []
            warning = indexing.warning
            if vectors is not None and items and not warning:
                try:
                    semantic = nearest_chunks(index.conn, vectors, asked, item_ids=items)
                except EmbeddingError as exc:
                    warning = f"Semantic search is off ({exc}); keyword search still works."
            hits = (
                find_chunks(
                    index.conn,
                    asked,
                    index.segmenter,
                    limit,
                    item_filter=f"i.id IN ({','.join('?' * len(items))})",
                    filter_params=items,
                    semantic=semantic,
                )
                if items
                else []
            )
            results = with_context(index, hits)
    except QueryError as exc:
        raise SearchFailure(f"Cannot search {shown_as(folder)}: {exc}.") from None
    except DatabaseError as exc:
        raise SearchFailure(str(exc)) from None
    except sqlite3.Error as exc:
        raise SearchFailure(f"The search index could not be used ({exc}); try again in a moment.") from None
    budgeted = apply_budget(results, budget)
    documents: dict[str, dict[str, Any]] = {}
    for result in budgeted:
        item_id = result["item"]["id"]
        document = documents.setdefault(
            item_id,
            {
                "file": shown_as(indexing.items[item_id]),
                "file_type": indexing.file_types[item_id],
                "language": indexing.languages[item_id],
                "hits": [],
            },
        )
        chunk = result["matched_chunks"][0] if result["matched_chunks"] else {}
        document["hits"].append(
            {
                "place": chunk.get("place", ""),
                "page": chunk.get("page"),
                "heading": chunk.get("heading", ""),
                "ocr": bool(chunk.get("ocr")),
                "score": result["score"],
                "chunk_index": result["chunk_index"],
                "matched_chunks": result["matched_chunks"],
                "context_chunks": result["context_chunks"],
                **({"cut": result["cut"]} if "cut" in result else {}),
            }
        )
    shown_query = [normalise_query(q) for q in asked]
    return {
        "folder": shown_as(folder),
        "query": shown_query[0] if len(shown_query) == 1 else shown_query,
        "files": len(files),
        "more_files": more,
        "indexed": indexing.indexed,
        "unchanged": indexing.unchanged,
        "failed": [{"file": shown_as(path), "error": error} for path, error in indexing.failed],
        "pending": len(indexing.pending),
        "languages": sorted({language for language in indexing.languages.values() if language}),
        "max_results": limit,
        "documents": list(documents.values()),
        **({"warning": warning} if warning else {}),
    }


def render_folder_search(result: dict[str, Any]) -> str:
    """The folder search as the model reads it: what was searched, then each document with
    its places (best document first), each place with its context."""
    query = result["query"]
    what = f'"{query}"' if isinstance(query, str) else " or ".join(f'"{q}"' for q in query)
    languages = ", ".join(language_name(code) for code in result["languages"]) or "unknown"
    searched = result["files"] - result["pending"] - len(result["failed"])
    head = f"{searched} document(s) searched in {result['folder']} (languages: {languages})"
    notes = []
    if result["indexed"]:
        notes.append(f"{result['indexed']} newly indexed")
    if result["pending"]:
        notes.append(
            f"{result['pending']} not indexed yet (indexing stops after a while; search again to go on)"
        )
    if result["failed"]:
        notes.append(
            f"{len(result['failed'])} unreadable: " + "; ".join(f["error"] for f in result["failed"][:3])
        )
    if result["more_files"]:
        notes.append(f"only the first {result['files']} files are searched; search a sub-folder for the rest")
    if notes:
        head += " — " + ", ".join(notes)
    if result.get("warning"):
        head = f"Note: {result['warning']}\n{head}"
    documents = result["documents"]
    if not documents:
        advice = _folder_language_advice(result, found=False)
        return (
            f"{head}.\nNo passage matches {what}. "
            + (advice + " " if advice else "")
            + "Try other words, a synonym or the other language, or fewer words."
        )
    places = sum(len(d["hits"]) for d in documents)
    lines = [f"{head}.", f"{places} passage(s) in {len(documents)} document(s) for {what}, best first:"]
    advice = _folder_language_advice(result, found=True)
    if advice:
        lines.append(advice)
    number = 0
    for document in documents:
        language = f", {language_name(document['language'])} text" if document["language"] else ""
        lines += ["", f"## {document['file']} ({document['file_type']}{language})"]
        for hit in document["hits"]:
            number += 1
            place = hit["place"] or f"chunk {hit['chunk_index']}"
            lines.append(f"[{number}] {place} | score {hit['score']:g}")
            chunks = [(c, True) for c in hit["matched_chunks"]] + [(c, False) for c in hit["context_chunks"]]
            for chunk, is_match in sorted(chunks, key=lambda pair: pair[0]["chunk_index"]):
                label = ">> " if is_match else "   "
                other = f"[{chunk['place']}] " if chunk["place"] and chunk["place"] != hit["place"] else ""
                body = "\n".join(
                    (" " * len(label) + line).rstrip() if n else line
                    for n, line in enumerate(chunk["content"].split("\n"))
                )
                lines.append(f"{label}{other}{body}")
            if "cut" in hit:
                lines.append(f"   (cut: {hit['cut']})")
    return "\n".join(lines)


def _folder_language_advice(result: dict[str, Any], found: bool) -> str:
    """Advice on the query's language when every document of the folder is in one language
    and no phrasing is in its script (see documents/search.py `language_advice`)."""
    if len(result["languages"]) != 1:
        return ""
    return (
        language_advice(result["languages"][0], result["query"], found)
        .replace("the document is", "the documents are")
        .replace("The document is", "The documents are")
    )
