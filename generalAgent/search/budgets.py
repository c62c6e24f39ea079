"""Content budgets: how much text one search may put into the model's context (seed 000).

Pure functions over result dicts. A search first decides *which* results and chunks
answer the query and in what order; the budget then decides *how much of each* is shown.
It never drops, adds or reorders a result, so filters and ranking are the same with and
without it (property-tested). Space is handed out in passes, most useful text first:

1. the matched chunks of every result, best result first (each chunk cut to its limit);
2. the item's own content: whole when the item is short, else a preview;
3. the neighbouring context chunks.

A result that lost anything says so in `cut`, with the call that reads on. Sizes count the
characters of content fields (item content and chunk content), as the seed defines them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generalAgent.config.settings import DocumentSettings

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


def content_size(result: dict[str, Any]) -> int:
    """Characters of content in one result: item content plus every chunk's content."""
    size = len(result.get("item", {}).get("content", ""))
    for key in ("matched_chunks", "context_chunks"):
        size += sum(len(chunk.get("content", "")) for chunk in result.get(key, []))
    return size


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


def _copy(result: dict[str, Any]) -> dict[str, Any]:
    """A copy of a result that the budget may cut without touching the original: the item
    and every chunk dict are new; their values are strings and numbers, shared. (deepcopy
    did the same at ~2 ms a search, a third of search_file's time beside the lookup.)"""
    shaped = dict(result)
    if isinstance(result.get("item"), dict):
        shaped["item"] = dict(result["item"])
    for key in ("matched_chunks", "context_chunks"):
        if key in result:
            shaped[key] = [dict(chunk) for chunk in result[key]]
    return shaped


def apply_budget(results: list[dict[str, Any]], budget: ContentBudget) -> list[dict[str, Any]]:
    """Copies of knowledge search `results` that fit `budget`, in the same order.

    A result is {"item": {..., "content"}, "score", "matched_chunks": [...],
    "context_chunks": [...]}; chunks are dicts with "content" (and "chunk_index").
    """
    shaped = [_copy(r) for r in results]
    allowance = _Allowance(budget, len(shaped))
    notes: list[list[str]] = [[] for _ in shaped]

    for i, result in enumerate(shaped):  # pass 1: the matched chunks
        matched = result.get("matched_chunks", [])
        if len(matched) > budget.matched_chunks:
            notes[i].append(f"{budget.matched_chunks} of {len(matched)} matched chunks shown")
            result["matched_chunks"] = matched = matched[: budget.matched_chunks]
        _fit_chunks(matched, i, allowance, budget, notes[i], "matched")

    for i, result in enumerate(shaped):  # pass 2: the item's content
        item = result.get("item")
        if item is None:
            continue
        content = item.get("content", "")
        wanted = len(content) if len(content) < budget.whole_item_chars else budget.preview_chars
        granted = allowance.take(i, min(wanted, len(content)))
        shown, _ = clip(content, granted)
        allowance.give_back(i, granted - len(shown))
        if len(shown) < len(content):
            notes[i].append(f"content: {len(shown):,} of {len(content):,} characters shown")
        item["content"] = shown

    for i, result in enumerate(shaped):  # pass 3: the context chunks
        context = result.get("context_chunks", [])
        if len(context) > budget.context_chunks:
            notes[i].append(f"{budget.context_chunks} of {len(context)} context chunks shown")
            result["context_chunks"] = context = context[: budget.context_chunks]
        _fit_chunks(context, i, allowance, budget, notes[i], "context")

    for result, note in zip(shaped, notes, strict=True):
        if note:
            result["cut"] = "; ".join(note) + "; " + read_on_hint(result)
    return shaped


def _fit_chunks(
    chunks: list[dict[str, Any]],
    index: int,
    allowance: _Allowance,
    budget: ContentBudget,
    notes: list[str],
    kind: str,
) -> None:
    kept: list[dict[str, Any]] = []
    shortened = dropped = 0
    for n, chunk in enumerate(chunks):
        text = chunk.get("content", "")
        granted = allowance.take(index, min(len(text), budget.chunk_chars))
        shown, cut = clip(text, granted)
        allowance.give_back(index, granted - len(shown))
        if text and not shown:
            # The rest go too, even one small enough for what is left: the chunks shown
            # must stay the best ones, a prefix of the ranked list.
            dropped = len(chunks) - n
            break
        if cut:
            chunk["content"] = shown
            chunk["truncated"] = True
            shortened += 1
        kept.append(chunk)
    chunks[:] = kept
    if shortened:
        notes.append(f"{shortened} {kind} chunk(s) shortened")
    if dropped:
        notes.append(f"{dropped} {kind} chunk(s) left out (size budget)")


def read_on_hint(result: dict[str, Any]) -> str:
    """How to read the rest of a result's item."""
    item_id = result.get("item", {}).get("id", "?")
    indexes = [
        c["chunk_index"]
        for key in ("matched_chunks", "context_chunks")
        for c in result.get(key, [])
        if "chunk_index" in c
    ]
    span = f", chunk_start={min(indexes)}, chunk_end={max(indexes) + 1}" if indexes else ""
    return f"read on with get_knowledge_item(item_id='{item_id}'{span})"
