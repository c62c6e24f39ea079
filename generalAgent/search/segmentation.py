"""Chinese word segmentation for the index and for queries: jieba, or single characters.

FTS5's unicode61 tokenizer sees a run of Chinese characters as one long token, so Chinese
is segmented before it is stored: the `text_jieba` column holds the chunk's Chinese words
separated by spaces (jieba's search mode, which adds the 2- and 3-character words inside
long ones, so "增长" finds "增长率"). With USE_JIEBA=false each character is its own token
and a query becomes a phrase of characters: slower to rank, never misses, no dictionary.

Only the Chinese runs of a text are segmented: Latin words are already searched in the raw
`text` column, and skipping them keeps indexing of English documents free of jieba's cost.
HMM is off on both sides: the index and the query must cut the same string the same way,
and the dictionary alone is deterministic and about 1.5x faster.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from types import ModuleType

# CJK unified ideographs (with extension A and B..F) and compatibility ideographs.
CJK_CHARACTER = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]"
CJK_RUN = re.compile(CJK_CHARACTER + "+")

# A query term: alternatives, each a group of words that must all occur.
Term = tuple[tuple[str, ...], ...]


def load_jieba() -> ModuleType:
    """jieba, imported on first use and silenced: it logs "Building prefix dict" to stderr,
    which is the user's terminal."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    if not jieba.dt.initialized:
        jieba.initialize()
    return jieba


@dataclass(frozen=True)
class Segmenter:
    name: str  # "jieba" or "unigram"; stored per document so a change of setting re-indexes

    @classmethod
    def from_setting(cls, use_jieba: bool) -> Segmenter:
        return cls("jieba" if use_jieba else "unigram")

    def for_index(self, text: str) -> str:
        """The Chinese words of `text`, space-separated ('' when it has no Chinese)."""
        runs = CJK_RUN.findall(text)
        if not runs:
            return ""
        if self.name == "unigram":
            return " ".join(char for run in runs for char in run)
        jieba = load_jieba()
        return " ".join(w for w in jieba.cut_for_search(" ".join(runs), HMM=False) if w.strip())

    def plain_words(self, run: str) -> list[str]:
        """What plain BM25 looks for of one run of Chinese characters in a query: with jieba
        the words `for_index` stores for it, each on its own; with single characters the run
        as one phrase, as `query_terms` has it (each character alone would find every chunk
        sharing one, "长" for "营收增长")."""
        if self.name == "unigram":
            return [" ".join(run)]
        jieba = load_jieba()
        return [w for w in jieba.cut_for_search(run, HMM=False) if w.strip()]

    def query_terms(self, run: str) -> list[Term]:
        """Terms for one run of Chinese characters in a query."""
        if self.name == "unigram":
            return [((" ".join(run),),)]
        jieba = load_jieba()
        terms: list[Term] = []
        for word in _join_single_characters(jieba.lcut(run, HMM=False)):
            cover = _cover(word, jieba.lcut_for_search(word, HMM=False)) if len(word) > 3 else None
            terms.append(((word,), tuple(cover)) if cover else ((word,),))
        return terms


def _join_single_characters(words: list[str]) -> list[str]:
    """Runs of single characters become one phrase ("营 收"): a word jieba does not know is cut
    into characters, the same way in the document, where they must then be adjacent."""
    joined: list[str] = []
    singles: list[str] = []
    for word in [*words, ""]:
        if len(word) == 1:
            singles.append(word)
            continue
        if singles:
            joined.append(" ".join(singles))
            singles = []
        if word:
            joined.append(word)
    return joined


def _cover(word: str, pieces: list[str]) -> list[str] | None:
    """Shorter dictionary words that spell `word` left to right, or None.

    A long query word ("客户满意度") may be cut into its parts in a document ("客户 满意度");
    matching either the word or all of its parts finds both.
    """
    candidates = {p for p in pieces if p != word and len(p) > 1}
    cover: list[str] = []
    position = 0
    while position < len(word):
        fits = [p for p in candidates if word.startswith(p, position)]
        if not fits:
            return None
        best = max(fits, key=len)
        cover.append(best)
        position += len(best)
    return cover if len(cover) > 1 else None
