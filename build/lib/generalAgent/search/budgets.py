"""Content budgets: how much text one search may put into the model's context.

Pure functions over `SearchResult`s (search/results.py). A search first decides *which* results and chunks
answer the query and in what order; the budget then decides *how much of each* is shown.
It never drops, adds or reorders a result, so filters and ranking are the same with and
without it (property-tested). Space is handed out in passes, most useful text first:

1. the matched chunks of every result, best result first (each chunk cut to its limit);
2. the item's own content: whole when the item is short, else a preview;
3. the neighbouring context chunks.

A result that lost anything says so in `cut`, with the call that reads on. Sizes count the
characters of text: the item's content and every passage's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from generalAgent.config.settings import DocumentSettings
from generalAgent.search.results import Passage, SearchResult

TRUNCATION_MARK = " …"


@dataclass(frozen=True)
class ContentBudget:
    """The limits of one search's content; built from DocumentSettings, the one source of
    their defaults (MAX_CHUNK_CONTENT_SIZE, MAX_MATCHED_CHUNKS, ... in docs/configuration.md)."""

    chunk_chars: int
    matched_chunks: int
    context_chunks: int
    result_chars: int
    call_chars: int
    preview_chars: int
    whole_item_chars: int

    @classmethod
    def from_settings(cls, settings: DocumentSettings) -> ContentBudget:
        return cls(
            chunk_chars=settings.max_chunk_content_size,
            matched_chunks=settings.max_matched_chunks,
            context_chunks=settings.max_context_chunks,
            result_chars=settings.max_result_content_size,
            call_chars=settings.max_total_content_size,
            preview_chars=settings.content_preview_chars,
            whole_item_chars=settings.whole_item_max_chars,
        )


def clip(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to at most `limit` characters (mark included); whether it was cut."""
    if len(text) <= limit:
        return text, False
    if limit <= len(TRUNCATION_MARK):
        return "", True
    return text[: limit - len(TRUNCATION_MARK)] + TRUNCATION_MARK, True


def content_size(result: SearchResult) -> int:
    """Characters of content in one result: the item's content plus every passage's text."""
    return len(result.content) + sum(len(p.text) for p in (*result.matched, *result.context))


class _Allowance:
    """Characters left for one result and for the whole call."""

    def __init__(self, budget: ContentBudget, results: int) -> None:
        self.call = budget.call_chars
        self.per_result = [budget.result_chars] * results

    def take(self, index: int, wanted: int) -> int:
        granted = max(0, min(wanted, self.call, self.per_result[index]))
        self.call -= granted
        self.per_result[index] -= granted
        return granted

    def give_back(self, index: int, unused: int) -> None:
        self.call += unused
        self.per_result[index] += unused


def apply_budget(results: Sequence[SearchResult], budget: ContentBudget) -> list[SearchResult]:
    """The `results` cut to fit `budget`, in the same order (new values; the results are
    frozen, so the originals stay whole)."""
    allowance = _Allowance(budget, len(results))
    notes: list[list[str]] = [[] for _ in results]
    matched: list[list[Passage]] = []
    contents: list[str] = []
    contexts: list[list[Passage]] = []

    for i, result in enumerate(results):  # pass 1: the matched passages
        chunks = list(result.matched)
        if len(chunks) > budget.matched_chunks:
            notes[i].append(f"{budget.matched_chunks} of {len(chunks)} matched chunks shown")
            chunks = chunks[: budget.matched_chunks]
        matched.append(_fit_chunks(chunks, i, allowance, budget, notes[i], "matched"))

    for i, result in enumerate(results):  # pass 2: the item's content
        content = result.content
        wanted = len(content) if len(content) < budget.whole_item_chars else budget.preview_chars
        granted = allowance.take(i, min(wanted, len(content)))
        shown, _ = clip(content, granted)
        allowance.give_back(i, granted - len(shown))
        if len(shown) < len(content):
            notes[i].append(f"content: {len(shown):,} of {len(content):,} characters shown")
        contents.append(shown)

    for i, result in enumerate(results):  # pass 3: the context passages
        chunks = list(result.context)
        if len(chunks) > budget.context_chunks:
            notes[i].append(f"{budget.context_chunks} of {len(chunks)} context chunks shown")
            chunks = chunks[: budget.context_chunks]
        contexts.append(_fit_chunks(chunks, i, allowance, budget, notes[i], "context"))

    shaped = []
    for i, result in enumerate(results):
        if not notes[i]:  # nothing was cut: the result as it was (no copy)
            shaped.append(result)
            continue
        fitted = replace(result, matched=tuple(matched[i]), content=contents[i], context=tuple(contexts[i]))
        shaped.append(replace(fitted, cut="; ".join(notes[i]) + "; " + read_on_hint(fitted)))
    return shaped


def _fit_chunks(
    chunks: list[Passage],
    index: int,
    allowance: _Allowance,
    budget: ContentBudget,
    notes: list[str],
    kind: str,
) -> list[Passage]:
    kept: list[Passage] = []
    shortened = dropped = 0
    for n, chunk in enumerate(chunks):
        text = chunk.text
        granted = allowance.take(index, min(len(text), budget.chunk_chars))
        shown, cut = clip(text, granted)
        allowance.give_back(index, granted - len(shown))
        if text and not shown:
            # The rest go too, even one small enough for what is left: the chunks shown
            # must stay the best ones, a prefix of the ranked list.
            dropped = len(chunks) - n
            break
        if cut:
            chunk = replace(chunk, text=shown, truncated=True)
            shortened += 1
        kept.append(chunk)
    if shortened:
        notes.append(f"{shortened} {kind} chunk(s) shortened")
    if dropped:
        notes.append(f"{dropped} {kind} chunk(s) left out (size budget)")
    return kept


def read_on_hint(result: SearchResult) -> str:
    """How to read the rest of a result's item."""
    indexes = [p.chunk_index for p in (*result.matched, *result.context) if p.chunk_index >= 0]
    span = f", chunk_start={min(indexes)}, chunk_end={max(indexes) + 1}" if indexes else ""
    return f"read on with get_knowledge_item(item_id='{result.item_id}'{span})"
