"""Re-ranking FTS5's best chunks with what one chunk's bm25 cannot see: its document.

FTS5 scores each chunk on its own. Two facts about the chunk's document then decide
between chunks of similar score (measured with bench/retrieval_quality.py, figures in
docs/benchmarks.md):

- **Document evidence.** A document with several chunks among the best is more likely the
  one the question is about than a document with a single chunk that happens to use the
  same words (passage retrieval's old lesson: combine a passage's score with its
  document's). Each candidate gains DOCUMENT_WEIGHT times the sum of its document's best
  DOCUMENT_CHUNKS candidate scores, so within one document the order is unchanged.
- **The document's name.** A query that names a document ("tar 列出归档内容", "xargs run
  commands in parallel", "员工手册 年假") is about that document. The name is also indexed
  in the `title` column, but there bm25 weighs it by how rare the word is in all text, and
  a name is often an ordinary word ("find", "split", "free"). A named document's chunks
  get NAME_BONUS more.

Both only reorder the candidates FTS5 found; they never add a chunk that matched nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import NamedTuple

from generalAgent.search.segmentation import CJK_CHARACTER, CJK_RUN

# Measured on bench/retrieval_quality.py (docs/benchmarks.md): recall@5 is the same for a
# document weight of 0.2 to 0.5 and for one to three chunks; a name bonus of 0.3 to 1.0
# gives 0.940 to 0.947. Round values from the middle of those ranges, not the best point.
DOCUMENT_WEIGHT = 0.3
DOCUMENT_CHUNKS = 2
NAME_BONUS = 0.5

# A word of a name or a query: a run of Chinese characters, or of other letters and digits.
_WORD = re.compile(rf"{CJK_CHARACTER}+|(?:(?!{CJK_CHARACTER})[^\W_])+")
# File extensions are not part of a document's name: "tar.1.md" is named "tar".
_EXTENSION = re.compile(r"\.[^\W_]{1,4}$")


class Candidate(NamedTuple):
    rowid: int
    item_id: str
    score: float  # bm25, higher is better


def words(text: str) -> tuple[str, ...]:
    """Lower-cased words of `text` in order: Latin/digit runs and Chinese runs apart."""
    return tuple(match.group().lower() for match in _WORD.finditer(text))


@lru_cache(maxsize=4096)  # the same documents come back query after query
def name_words(title: str) -> tuple[str, ...]:
    """The words of a document's name, without its file extensions."""
    name = title.strip()
    while (stripped := _EXTENSION.sub("", name)) != name and stripped:
        name = stripped
    return words(name)


def names_document(query: Sequence[str], name: Sequence[str]) -> bool:
    """True when the name's words occur together, in order, among the query's words.

    A Chinese name may sit inside a longer run of Chinese ("查看员工手册" names
    "员工手册"), since Chinese is written without spaces. One-character and all-digit names
    ("a.txt", "2024.pdf") never count: they would match far too much.
    """
    if not name or sum(map(len, name)) < 2 or all(word.isdigit() for word in name):
        return False
    first, rest = name[0], name[1:]
    if first not in query and CJK_RUN.fullmatch(first) is None:
        return False  # the common case, answered without looping over the query
    return any(
        _same_word(query[start], first)
        and all(_same_word(query[start + i], word) for i, word in enumerate(rest, start=1))
        for start in range(len(query) - len(rest))
    )


def _same_word(query_word: str, name_word: str) -> bool:
    if query_word == name_word:
        return True
    return len(name_word) > 1 and CJK_RUN.fullmatch(name_word) is not None and name_word in query_word


def rerank(candidates: Sequence[Candidate], named: Collection[str]) -> list[tuple[int, float]]:
    """(rowid, score) of every candidate, best first, scored as the module docstring says.

    Ties go to the higher bm25, then to FTS5's order.
    """
    best: dict[str, list[float]] = {}
    for candidate in candidates:
        best.setdefault(candidate.item_id, []).append(candidate.score)
    evidence = {
        item_id: sum(sorted(scores, reverse=True)[:DOCUMENT_CHUNKS]) for item_id, scores in best.items()
    }
    scored = [
        (
            candidate.rowid,
            (candidate.score + DOCUMENT_WEIGHT * evidence[candidate.item_id])
            * (1 + NAME_BONUS * (candidate.item_id in named)),
        )
        for candidate in candidates
    ]
    order = sorted(range(len(scored)), key=lambda i: (-scored[i][1], -candidates[i].score, i))
    return [scored[i] for i in order]
