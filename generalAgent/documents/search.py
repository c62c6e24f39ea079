"""Searching one file, as `search_file` and `generalagent search` do it: index on first use,
find the best places (one hit per page or section), show each with the other matching
chunks of its place and its neighbours as context, fit the content budget, and render.
Every hit names its place (page, slide, sheet and rows, or section) so answers can cite it,
and `check_citation` tells whether a quoted sentence really occurs at a cited place.

`search_document` returns a plain dict (the CLI prints it with --json); `render_search`
turns it into the text the model reads. Every failure a user can cause comes back as
`SearchFailure` with a message that says what to do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from generalAgent.config.settings import DocumentSettings
from generalAgent.documents.citations import CitationError, check_quote
from generalAgent.documents.extract import DocumentError, OpenFile, open_plainly
from generalAgent.documents.index import ChunkHit, QueryError, SearchIndex
from generalAgent.search.budgets import ContentBudget, apply_budget
from generalAgent.search.database import DatabaseError, VectorSource, item_rowid_range
from generalAgent.search.embeddings import EmbeddingError
from generalAgent.search.language import is_cjk, language_name, query_language
from generalAgent.search.lookup import chunks_at
from generalAgent.search.query import normalise_query, phrasings
from generalAgent.search.semantic import nearest_chunks

# One chunk before and one after: enough to read a hit in its place, and the neighbours of
# neighbouring hits overlap instead of piling up.
CONTEXT_BEFORE = 1
CONTEXT_AFTER = 1
# Other matching chunks of a hit's page or section shown with it (the budget cuts further).
FOLDED_CONTEXT = 3


class SearchFailure(Exception):
    """The search could not run; the message is for the user (or the model) as it is."""


def search_document(
    db_path: Path,
    settings: DocumentSettings,
    path: Path,
    query: str | Sequence[str],
    max_results: int | None = None,
    *,
    regex: bool = False,
    shown_as: str | None = None,
    vectors: VectorSource | None = None,
    open_file: OpenFile = open_plainly,
    conn: sqlite3.Connection | None = None,
) -> dict[str, Any]:
    """Index `path` if needed and return its best passages for `query`, within budget.

    `query` is one string or several phrasings of one question, fused by rank.
    `vectors` (semantic search on) embeds the query, whose nearest chunks are fused with
    the rest; the chunks themselves are embedded after indexing, in the background
    (search/background_embedding.py), and until then are found by keywords. `open_file` opens the
    file to hash and read it (see `extract.OpenFile`). `conn`, an open connection to
    `db_path`, is used instead of opening one (a tool keeps one: see `IndexDatabase`).
    """
    shown = shown_as or str(path)
    asked = phrasings(query)
    warning = ""
    if not asked:
        raise SearchFailure("Empty query: give the words to look for.")
    if regex and len(asked) > 1:
        raise SearchFailure("A regular expression search takes one pattern: give query as one string.")
    budget = ContentBudget.from_settings(settings)
    wanted = settings.search_max_results_default if max_results is None else int(max_results)
    limit = max(1, min(wanted, budget.matched_chunks))
    try:
        with SearchIndex(db_path, settings, None, open_file, conn=conn) as index:
            document = index.index_file(path)
            semantic: list[list[tuple[int, float]]] = []
            warning = document.warning  # embedding the new chunks failed: keywords only
            if vectors is not None and not regex and not warning:
                try:
                    rowid_range = item_rowid_range(index.conn, document.item_id, document.total_chunks)
                    semantic = nearest_chunks(index.conn, vectors, asked, rowid_range=rowid_range)
                except EmbeddingError as exc:
                    warning = f"Semantic search is off ({exc}); keyword search still works."
            hits = index.search_item(
                document.item_id,
                asked[0] if regex else asked,
                limit,
                regex=regex,
                chunks=document.total_chunks,
                semantic=semantic,
            )
            results = with_context(index, hits)
    except DocumentError as exc:
        raise SearchFailure(f"Cannot search {shown}: {exc}") from None
    except QueryError as exc:
        raise SearchFailure(f"Cannot search {shown}: {exc}.") from None
    except DatabaseError as exc:
        raise SearchFailure(str(exc)) from None
    except sqlite3.Error as exc:  # e.g. still locked after the busy timeout
        raise SearchFailure(f"The search index could not be used ({exc}); try again in a moment.") from None
    budgeted = apply_budget(results, replace(budget, call_chars=budget.result_chars, whole_item_chars=0))
    return {
        "file": shown,
        "file_type": document.file_type,
        "total_chunks": document.total_chunks,
        "language": document.language,
        **({"warning": warning} if warning else {}),
        "query": asked[0] if regex else _shown_query(asked),
        "regex": regex,
        "max_results": limit,
        "capped": wanted > limit,
        "hits": [
            {
                "place": r["matched_chunks"][0]["place"] if r["matched_chunks"] else "",
                "ocr": bool(r["matched_chunks"]) and r["matched_chunks"][0]["ocr"],
                "page": r["matched_chunks"][0]["page"] if r["matched_chunks"] else None,
                "heading": r["matched_chunks"][0]["heading"] if r["matched_chunks"] else "",
                "score": r["score"],
                "chunk_index": r["chunk_index"],
                "item_id": r["item"]["id"],
                "matched_chunks": r["matched_chunks"],
                "context_chunks": r["context_chunks"],
                **({"cut": r["cut"]} if "cut" in r else {}),
            }
            for r in budgeted
        ],
    }


def _shown_query(asked: Sequence[str]) -> str | list[str]:
    """The query as searched: one string, or the list of phrasings."""
    shown = [normalise_query(q) for q in asked]
    return shown[0] if len(shown) == 1 else shown


def language_advice(language: str, query: str | Sequence[str], found: bool) -> str:
    """What to tell the model when the query's script is not the document's: FTS5 matches
    words, so Chinese words never occur in an English text (and the other way round). ""
    when every phrasing is in the document's script, or a phrasing is (it was searched)."""
    if not language:
        return ""
    asked = [query] if isinstance(query, str) else list(query)
    if any(is_cjk(query_language(q)) == is_cjk(language) for q in asked):
        return ""
    name = language_name(language)
    if found:
        return (
            f"Note: the document is in {name} and the query is not, so only words the two share "
            f"(names, commands, numbers) matched. Search again with query as a list: the user's "
            f"words and a {name} rendering of them."
        )
    return (
        f"The document is in {name} and the query is not: words of one script never match a text "
        f"in another. Search again with query as a list: the user's words and a {name} rendering "
        f'of them, e.g. ["<user\'s words>", "<{name} words>"].'
    )


def check_citation(
    db_path: Path,
    settings: DocumentSettings,
    path: Path,
    quote: str,
    place: str,
    *,
    shown_as: str | None = None,
    open_file: OpenFile = open_plainly,
) -> dict[str, Any]:
    """Whether `quote` occurs word for word at `place` ("page 12", "§ Installing", ...) of
    the document at `path` (indexed first if needed through `open_file`), and where else
    it occurs."""
    shown = shown_as or str(path)
    if not quote or not quote.strip():
        raise SearchFailure("Empty quote: give the sentence to check.")
    try:
        with SearchIndex(db_path, settings, open_file=open_file) as index:
            document = index.index_file(path)
            check = check_quote(index.conn, document.item_id, quote, place)
    except (DocumentError, CitationError) as exc:
        raise SearchFailure(f"Cannot check the quote in {shown}: {exc}.") from None
    except DatabaseError as exc:
        raise SearchFailure(str(exc)) from None
    except sqlite3.Error as exc:
        raise SearchFailure(f"The search index could not be used ({exc}); try again in a moment.") from None
    return {
        "file": shown,
        "quote": quote,
        "place": check.place,
        "found": check.found,
        "elsewhere": check.elsewhere,
    }


def render_citation(result: dict[str, Any]) -> str:
    """The check as the model reads it: one line that says whether the citation holds."""
    where = f"{result['place']} of {result['file']}"
    if result["found"]:
        return f"Verified: the quote occurs word for word on {where}."
    if result["elsewhere"]:
        return (
            f"Not on {where}: the quote occurs on {', '.join(result['elsewhere'])} instead; cite that place."
        )
    return (
        f"Not found: the quote does not occur on {where} nor anywhere else in the document. "
        "Quote the passage exactly as the search hit shows it, or drop the quotation."
    )


def with_context(index: SearchIndex, hits: list[ChunkHit]) -> list[dict[str, Any]]:
    """One budget 'result' per hit: the hit, then the other matching chunks of its place and
    its neighbours, unseen ones only, in document order."""
    hit_indexes = {h.chunk_index for h in hits}
    shown: set[int] = set()
    results = []
    for hit in hits:
        around = index.neighbours(hit.item_id, hit.chunk_index, CONTEXT_BEFORE, CONTEXT_AFTER)
        folded = chunks_at(index.conn, hit.item_id, hit.folded[:FOLDED_CONTEXT])
        by_index = {c.chunk_index: c for c in [*around, *folded]}
        context = [
            chunk_dict(by_index[i]) for i in sorted(by_index) if i not in hit_indexes and i not in shown
        ]
        shown.update(c["chunk_index"] for c in context)
        results.append(
            {
                "item": {"id": hit.item_id, "content": ""},
                "score": round(hit.score, 4),
                "chunk_index": hit.chunk_index,
                "matched_chunks": [chunk_dict(hit)],
                "context_chunks": context,
            }
        )
    return results


def chunk_dict(hit: ChunkHit) -> dict[str, Any]:
    return {
        "chunk_id": hit.chunk_id,
        "chunk_index": hit.chunk_index,
        "place": hit.place,
        "ocr": hit.ocr,
        "page": hit.page,
        "heading": hit.heading,
        "start_position": hit.start,
        "end_position": hit.end,
        "content": hit.text,
        "score": round(hit.score, 4),
    }


def render_search(result: dict[str, Any]) -> str:
    """The search as the model reads it: a header line, then each hit in its context."""
    hits = result["hits"]
    query = result["query"]
    if result["regex"]:
        what = f"regex /{query}/"
    elif isinstance(query, str):
        what = f'"{query}"'
    else:
        what = " or ".join(f'"{q}"' for q in query)
    language = result.get("language", "")
    facts = [result["file_type"], *([f"{language_name(language)} text"] if language else [])]
    where = f"{result['file']} ({', '.join(facts)}, {result['total_chunks']} chunks)"
    advice_on_language = "" if result["regex"] else language_advice(language, query, bool(hits))
    if not hits:
        advice = (
            "Check the pattern, or search with words instead (regex=false)."
            if result["regex"]
            else f"{advice_on_language} Try other words, a synonym or the other language, fewer words, "
            "or regex=true for an exact pattern.".lstrip()
        )
        note = f"Note: {result['warning']}\n" if result.get("warning") else ""
        return f"{note}No passage in {where} matches {what}. {advice}"
    lines = [f"{len(hits)} passage(s) in {where} for {what}, best first:"]
    if result.get("warning"):
        lines.insert(0, f"Note: {result['warning']}")
    if result["capped"]:
        lines[0] += f" (at most {result['max_results']} per search)"
    if advice_on_language:
        lines.append(advice_on_language)
    for number, hit in enumerate(hits, start=1):
        lines.append("")
        lines.append(f"[{number}] {_place(hit)} | score {hit['score']:g}")
        matched = [(c, True) for c in hit["matched_chunks"]]
        context = [(c, False) for c in hit["context_chunks"]]
        ordered = sorted(matched + context, key=lambda pair: pair[0]["chunk_index"])
        for chunk, is_match in ordered:
            label = ">> " if is_match else "   "
            page = f"[{chunk['place']}] " if chunk["place"] and chunk["place"] != hit["place"] else ""
            body = "\n".join(
                (" " * len(label) + line).rstrip() if n else line
                for n, line in enumerate(chunk["content"].split("\n"))
            )
            lines.append(f"{label}{page}{body}")
        if "cut" in hit:
            lines.append(f"   (cut: {hit['cut']})")
    return "\n".join(lines)


def _place(hit: dict[str, Any]) -> str:
    """The hit's place as a citation names it, and the section when the place is a page."""
    parts = [hit["place"]] if hit.get("place") else []
    if hit["heading"] and not hit.get("place", "").startswith(("§", "sheet ")):
        parts.append(f"§ {hit['heading']}")
    if hit.get("ocr"):
        parts.append("text read by OCR")
    parts.append(f"chunk {hit['chunk_index']}")
    return " | ".join(parts)
