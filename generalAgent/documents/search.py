"""Searching one file, as `search_file` and `generalagent search` do it: index on first use,
find the best places (one hit per page or section), show each with the other matching
chunks of its place and its neighbours as context, fit the content budget, and render.
Every hit names its place (page, slide, sheet and rows, or section) so answers can cite it,
and `check_citation` tells whether a quoted sentence really occurs at a cited place.

`search_document` returns a `FileSearch` (the CLI prints it with --json through
`dataclasses.asdict`); `render_search` turns it into the text the model reads. Every failure a user can cause comes back as
`SearchFailure` with a message that says what to do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from generalAgent.config.settings import DocumentSettings
from generalAgent.display import N_, Message, Plural, english_plural, said_of_error
from generalAgent.documents.citations import CitationError, check_quote
from generalAgent.documents.index import ChunkHit, Progress, QueryError, SearchIndex
from generalAgent.documents.reading import DocumentError, OpenFile, open_plainly
from generalAgent.search.budgets import ContentBudget, apply_budget
from generalAgent.search.connection import DatabaseError
from generalAgent.search.embeddings import EmbeddingError
from generalAgent.search.language import is_cjk, language_name, query_language
from generalAgent.search.lookup import LookupNotes, passages_at
from generalAgent.search.query import normalise_query, phrasings
from generalAgent.search.query_rendering import RenderQuery, with_rendering
from generalAgent.search.results import Passage, SearchResult
from generalAgent.search.segmentation import CJK_RUN
from generalAgent.search.storage import VectorSource, content_pieces
from generalAgent.search.store import TERMINAL, SearchStore, Viewer

# One chunk before and one after: enough to read a hit in its place, and the neighbours of
# neighbouring hits overlap instead of piling up.
CONTEXT_BEFORE = 1
CONTEXT_AFTER = 1
# Other matching chunks of a hit's page or section shown with it (the budget cuts further).
FOLDED_CONTEXT = 3


# A search whose document cannot be read: the name as given, then the DocumentError's sentence.
CANNOT_SEARCH = N_("Cannot search {name}: {problem}")
# Passages a person may ask one search for (`generalagent search -n`): the call's content
# budget (MAX_TOTAL_CONTENT_SIZE) decides how many of them keep their text.
MAX_RESULTS_ASKED = 20
# Scores as the model reads them: four decimals tell the fused rank scores apart.
SCORE_DIGITS = 4


class SearchFailure(Exception):
    """The search could not run; the message is for the user (or the model) as it is.

    A document that cannot be read keeps its `DocumentError` (`unreadable`), so the
    terminal can say the whole line in its language (`shown`); `str(exc)` stays English."""

    def __init__(
        self,
        message: str,
        /,
        unreadable: DocumentError | None = None,
        name: str = "",
        said: Message | None = None,
    ) -> None:
        super().__init__(message)
        self.unreadable = unreadable
        self.name = name
        self._said = said

    @property
    def said(self) -> Message | None:
        """The line as data for a tool's answer, when the document could not be read or the
        failure was raised as a Message (`search_failure`)."""
        if self.unreadable is None:
            return self._said
        return Message(CANNOT_SEARCH, {"name": self.name, "problem": self.unreadable.said})

    def shown(self, translate: Callable[[str], str] = str, ngettext: Plural = english_plural) -> str:
        """The message in the language of `translate` and `ngettext` (the terminal's)."""
        if self.unreadable is None:
            return self._said.shown(translate, ngettext) if self._said is not None else str(self)
        return translate(CANNOT_SEARCH).format(
            name=self.name, problem=self.unreadable.shown(translate, ngettext)
        )


EMPTY_QUERY = N_("Empty query: give the words to look for.")
# The index could not be read or written (still locked after the busy timeout, ...).
INDEX_UNUSABLE = N_("The search index could not be used ({problem}); try again in a moment.")


def search_failure(template: str, **fields: str | Message) -> SearchFailure:
    """A SearchFailure whose sentence is kept as data, in English for the model and the
    log, in the UI language for a person (`shown`)."""
    said = Message(template, fields)
    return SearchFailure(said.english(), said=said)


def query_failure(name: str, exc: Exception) -> SearchFailure:
    """ "Cannot search NAME: why" for a query that cannot run (an invalid regular expression)."""
    return search_failure(CANNOT_SEARCH, name=name, problem=said_of_error(exc))


@dataclass(frozen=True, slots=True)
class FileSearch:
    """What a search of one file found: the file's facts and its results, best first,
    one per page or section, each within the content budget."""

    file: str  # as the user or the model named it
    file_type: str
    total_chunks: int
    language: str  # the document's main language ("en", "zh", ...; "" when unknown)
    query: str | list[str]  # as searched: one string, or the phrasings
    regex: bool
    max_results: int  # results asked for, after the budget's cap
    capped: bool  # more were asked for than the budget allows
    results: tuple[SearchResult, ...]
    # Semantic search failed and keyword search answered: the model reads its English, a
    # person its UI language (as KnowledgeSearch's warning).
    warning: Message | None = None
    rendered: str = ""  # the query's rendering in the document's language the search added
    # The English keywords a lone Chinese question was also searched as (the dictionary
    # gloss, search/query_translation.py): "" when none was searched.
    glossed: str = ""
    notes: str = ""  # what reading left out (OCR page limits): said, not a failure
    # Chunks of the document without a vector of the query's model: found by words only
    # (counted only when the search has vectors; the CLI says so in one line).
    unembedded: int = 0


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
    store: SearchStore | None = None,
    viewer: Viewer = TERMINAL,
    whole_call: bool = False,
    progress: Progress | None = None,
    render: RenderQuery | None = None,
) -> FileSearch:
    """Index `path` if needed and return its best passages for `query`, within budget.

    `query` is one string or several phrasings of one question, fused by rank.
    `vectors` (semantic search on) embeds the query, whose nearest chunks are fused with
    the rest; the chunks themselves are embedded after indexing, in the background
    (search/background_embedding.py), and until then are found by keywords. `open_file` opens the
    file to hash and read it (see `reading.OpenFile`). `conn`, an open connection to
    `db_path`, is used instead of opening one (a tool keeps one: see `IndexDatabase`);
    `store`, a team's search store (search/store.py), instead of indexes.db, where
    `viewer` is who indexes the file.

    The model gets at most MAX_MATCHED_CHUNKS passages within one result's budget
    (MAX_RESULT_CONTENT_SIZE); `whole_call` (the CLI) returns up to MAX_RESULTS_ASKED
    within the whole call's budget (MAX_TOTAL_CONTENT_SIZE), which may leave the text of
    the last ones out: each such result says so in `cut`.

    `render` (the chat's model, through the run context) renders a lone query whose script
    is not the document's into the document's language; both are searched
    (search/query_rendering.py).
    """
    shown = shown_as or str(path)
    asked = phrasings(query)
    notes = rendered = ""
    warning: Message | None = None
    unembedded = 0
    if not asked:
        raise search_failure(EMPTY_QUERY)
    if regex and len(asked) > 1:
        raise search_failure(N_("A regular expression search takes one pattern: give query as one string."))
    budget = ContentBudget.from_settings(settings)
    wanted = settings.search_max_results_default if max_results is None else int(max_results)
    limit = max(1, min(wanted, MAX_RESULTS_ASKED if whole_call else budget.matched_chunks))
    try:
        with SearchIndex(db_path, settings, None, open_file, conn=conn, store=store, viewer=viewer) as index:
            document = index.index_file(path, progress=progress)
            semantic: list[list[tuple[int, float]]] = []
            warning = document.warning  # embedding the new chunks failed: keywords only
            notes = document.notes  # what reading left out (OCR page limits): said, not a failure
            if not regex:
                asked, rendered, _ = with_rendering(asked, [document.language], render)
            if vectors is not None and not regex and warning is None:
                try:
                    rowid_range = index.store.item_rowid_range(document.item_id, document.total_chunks)
                    semantic = index.store.nearest_chunks(vectors, asked, rowid_range=rowid_range)
                    unembedded = index.store.unembedded_chunks(vectors.model, rowid_range=rowid_range)
                except EmbeddingError as exc:
                    warning = semantic_off(exc)
            lookup = LookupNotes()
            hits = index.search_item(
                document.item_id,
                asked[0] if regex else asked,
                limit,
                regex=regex,
                chunks=document.total_chunks,
                semantic=semantic,
                notes=lookup,
            )
            results = with_context(index, hits)
    except DocumentError as exc:
        raise SearchFailure(CANNOT_SEARCH.format(name=shown, problem=exc), exc, shown) from None
    except QueryError as exc:
        raise query_failure(shown, exc) from None
    except DatabaseError as exc:
        raise SearchFailure(str(exc)) from None
    except sqlite3.Error as exc:  # e.g. still locked after the busy timeout
        raise search_failure(INDEX_UNUSABLE, problem=str(exc)) from None
    call_chars = budget.call_chars if whole_call else budget.result_chars
    budgeted = apply_budget(results, replace(budget, call_chars=call_chars, whole_item_chars=0))
    return FileSearch(
        file=shown,
        file_type=document.file_type,
        total_chunks=document.total_chunks,
        language=document.language,
        query=asked[0] if regex else _shown_query(asked),
        regex=regex,
        max_results=limit,
        capped=wanted > limit,
        results=tuple(budgeted),
        warning=warning,
        notes=notes,
        rendered=rendered,
        glossed=lookup.glossed,
        unembedded=unembedded,
    )


def semantic_off(exc: EmbeddingError) -> Message:
    """What a search says when the query could not be embedded (keyword search answered)."""
    return Message(
        N_("Semantic search is off ({problem}); keyword search still works."), {"problem": exc.said}
    )


def _notice(result: FileSearch) -> str:
    """The model's note: what reading left out, then why semantic search is off (English)."""
    return " ".join(p for p in (result.notes, result.warning.english() if result.warning else "") if p)


def _shown_query(asked: Sequence[str]) -> str | list[str]:
    """The query as searched: one string, or the list of phrasings."""
    shown = [normalise_query(q) for q in asked]
    return shown[0] if len(shown) == 1 else shown


def language_advice(language: str, query: str | Sequence[str], found: bool, glossed: str = "") -> str:
    """What to tell the model when the query's script is not the document's: FTS5 matches
    words, so Chinese words never occur in an English text (and the other way round). ""
    when every phrasing is in the document's script, or a phrasing is (it was searched).

    `glossed`: the dictionary's keywords the search added (gloss_line names them). The
    passages were then found by those words, not only by words the two scripts share, so
    saying "only shared words matched" would be false and "search again" would send the
    model after an answer it may already have; a rendering of its own still finds more
    than word-by-word keywords (issue 39: 0.92 against 0.72 recall@5), so it is offered for
    when the passages do not answer."""
    if not language:
        return ""
    asked = [query] if isinstance(query, str) else list(query)
    if any(is_cjk(query_language(q)) == is_cjk(language) for q in asked):
        return ""
    name = language_name(language)
    rendering = f"{_article(name)} {name} rendering of them"
    if found and glossed:
        return (
            f"If these passages do not answer the question, search again with query as a list: "
            f"the user's words and {rendering}."
        )
    if found:
        return (
            f"Note: the document is in {name} and the query is not, so only words the two share "
            f"(names, commands, numbers) matched. Search again with query as a list: the user's "
            f"words and {rendering}."
        )
    return (
        f"The document is in {name} and the query is not: words of one script never match a text "
        f"in another. Search again with query as a list: the user's words and {rendering}, "
        f'e.g. ["<user\'s words>", "<{name} words>"].'
    )


def _article(word: str) -> str:
    """ "an" before a language name said with a vowel (English, Italian), else "a"."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def rendering_line(rendered: str, language: str) -> str:
    """What the model reads of a rendering the search added (search/query_rendering.py)."""
    return (
        f'The query was also searched in {language_name(language)} as "{normalise_query(rendered)}" '
        "(rendered by the model, since the query was not in the documents' language)."
    )


def gloss_line(glossed: str) -> str:
    """What the model reads of the dictionary gloss the search added: English keywords of a
    Chinese question (search/query_translation.py) or Chinese ones of an English question
    (search/english_gloss.py)."""
    if CJK_RUN.search(glossed):
        return (
            f'The query was also searched in Chinese as "{glossed}" (keywords from an English-Chinese '
            "dictionary, since the query was not in the documents' language)."
        )
    return (
        f'The query was also searched in English as "{glossed}" (keywords from a Chinese-English '
        "dictionary, since the query was not in the documents' language)."
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
    progress: Progress | None = None,
    store: SearchStore | None = None,
    viewer: Viewer = TERMINAL,
) -> dict[str, Any]:
    """Whether `quote` occurs word for word at `place` ("page 12", "§ Installing", ...) of
    the document at `path` (indexed first if needed through `open_file`), and where else
    it occurs."""
    shown = shown_as or str(path)
    if not quote or not quote.strip():
        raise search_failure(N_("Empty quote: give the sentence to check."))
    try:
        with SearchIndex(db_path, settings, open_file=open_file, store=store, viewer=viewer) as index:
            document = index.index_file(path, progress=progress)
            check = check_quote(index.db, document.item_id, quote, place)
    except (DocumentError, CitationError) as exc:
        raise search_failure(
            N_("Cannot check the quote in {name}: {problem}."), name=shown, problem=said_of_error(exc)
        ) from None
    except DatabaseError as exc:
        raise SearchFailure(str(exc)) from None
    except sqlite3.Error as exc:
        raise search_failure(INDEX_UNUSABLE, problem=str(exc)) from None
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


def with_context(index: SearchIndex, hits: list[ChunkHit]) -> list[SearchResult]:
    """One result per hit: the hit, then the other matching chunks of its place and its
    neighbours as context, unseen ones only, in document order.

    Every context chunk of every hit is read in one query per document (a query per hit
    and kind cost more than the budget and rendering together)."""
    hit_indexes: dict[str, set[int]] = {}
    for hit in hits:
        hit_indexes.setdefault(hit.item_id, set()).add(hit.chunk_index)
    wanted = [
        {
            *range(max(0, hit.chunk_index - CONTEXT_BEFORE), hit.chunk_index + CONTEXT_AFTER + 1),
            *hit.folded[:FOLDED_CONTEXT],
        }
        - hit_indexes[hit.item_id]  # a chunk of another document is not this one's context
        for hit in hits
    ]
    per_item: dict[str, set[int]] = {}
    for hit, indexes in zip(hits, wanted, strict=True):
        per_item.setdefault(hit.item_id, set()).update(indexes)
    found = {
        (item_id, chunk.chunk_index): chunk
        for item_id, indexes in per_item.items()
        for chunk in passages_at(index.db, item_id, sorted(indexes))
    }
    shown: set[tuple[str, int]] = set()
    results = []
    for hit, indexes in zip(hits, wanted, strict=True):
        keys = [(hit.item_id, i) for i in sorted(indexes) if (hit.item_id, i) in found]
        context = tuple(found[key] for key in keys if key not in shown)
        shown.update(keys)
        results.append(SearchResult.of(hit.item_id, hit.score, (hit.passage(),), context))
    return results


def render_search(result: FileSearch) -> str:
    """The search as the model reads it: a header line, then each hit in its context."""
    hits = result.results
    query = result.query
    if result.regex:
        what = f"regex /{query}/"
    elif isinstance(query, str):
        what = f'"{query}"'
    else:
        what = " or ".join(f'"{q}"' for q in query)
    language = result.language
    facts = [result.file_type, *([f"{language_name(language)} text"] if language else [])]
    where = f"{result.file} ({', '.join(facts)}, {result.total_chunks} chunks)"
    advice_on_language = "" if result.regex else language_advice(language, query, bool(hits), result.glossed)
    if not hits:
        advice = (
            "Check the pattern, or search with words instead (regex=false)."
            if result.regex
            else f"{advice_on_language} Try other words, a synonym or the other language, fewer words, "
            "or regex=true for an exact pattern.".lstrip()
        )
        note = f"Note: {notice}\n" if (notice := _notice(result)) else ""
        return f"{note}No passage in {where} matches {what}. {advice}"
    lines = [f"{len(hits)} passage(s) in {where} for {what}, best first:"]
    if notice := _notice(result):
        lines.insert(0, f"Note: {notice}")
    if result.capped:
        lines[0] += f" (at most {result.max_results} per search)"
    if result.rendered:
        lines.append(rendering_line(result.rendered, language))
    if result.glossed:
        lines.append(gloss_line(result.glossed))
    if advice_on_language:  # after the gloss line, which it refers to (a rendering never has one)
        lines.append(advice_on_language)
    for number, hit in enumerate(hits, start=1):
        lines.append("")
        lines.append(f"[{number}] {_place(hit)} | score {round(hit.score, SCORE_DIGITS):g}")
        lines += passage_lines(hit)
    return "\n".join(lines)


def line_numbers(conn: Any, item_id: str, offsets: Sequence[int]) -> dict[int, int]:
    """The line (from 1) of the item's content at each character offset: the place a person
    looks for in a plain text file, which has no pages. Reads the content in pieces, up to
    the last offset only."""
    wanted = sorted(set(offsets))
    pieces = content_pieces(conn, item_id)
    lines: dict[int, int] = {}
    if pieces is None or not wanted:
        return lines
    seen = newlines = 0
    for piece in pieces:
        while wanted and wanted[0] < seen + len(piece):
            lines[wanted[0]] = newlines + piece.count("\n", 0, wanted[0] - seen) + 1
            wanted.pop(0)
        if not wanted:
            break
        newlines += piece.count("\n")
        seen += len(piece)
    for offset in wanted:
        lines[offset] = newlines + 1
    return lines


def passage_lines(hit: SearchResult) -> list[str]:
    """A result's passages in document order, matched ones marked `>>`, each naming its
    place when it is not the result's; then what the budget cut."""
    lines = []
    ordered = sorted([(p, True) for p in hit.matched] + [(p, False) for p in hit.context], key=_in_order)
    for passage, is_match in ordered:
        label = ">> " if is_match else "   "
        other = f"[{passage.place}] " if passage.place and passage.place != hit.place else ""
        body = "\n".join(
            (" " * len(label) + line).rstrip() if n else line
            for n, line in enumerate(passage.text.split("\n"))
        )
        lines.append(f"{label}{other}{body}")
    if hit.cut:
        lines.append(f"   (cut: {hit.cut})")
    return lines


def _in_order(pair: tuple[Passage, bool]) -> int:
    return pair[0].chunk_index


def _place(hit: SearchResult) -> str:
    """The hit's place as a citation names it, and the section when the place is a page."""
    best = hit.hit
    parts = [hit.place] if hit.place else []
    if best is not None and best.heading and not hit.place.startswith(("§", "sheet ")):
        parts.append(f"§ {best.heading}")
    if best is not None and best.ocr:
        parts.append("text read by OCR")
    if best is not None and best.figure and best.page:
        parts.append(f"the page is mostly a figure: view it with view_page (page {best.page})")
    parts.append(f"chunk {hit.chunk_index}")
    return " | ".join(parts)
