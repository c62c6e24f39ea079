"""User text -> FTS5 MATCH expressions. FTS5 syntax is never user input.

Every word reaches MATCH inside double quotes (a quote in it doubled) and behind a column
filter, so `AND`, `NEAR`, `*`, `:`, `^`, parentheses and stray quotes are plain text. Latin
words go to the raw `text` column, where the Porter stemmer lets "baselines" find
"baseline" and a quoted "4.1" or "multi-agent" is a phrase of adjacent tokens; Chinese goes
to the segmented `text_jieba` column; both also look in `title` (the document's and the
section's name). Both kinds are combined in one expression, so a mixed
query is ranked by one bm25.

Two expressions are built: any term (OR), the lookup itself, bm25 putting the chunks with
the rarest and most terms first (lookup.py ranks it, pruned to the rarer terms' chunks on a
large index, and re-ranks the best, ranking.py); and all terms (AND), which is the
expression when there is a single term. The terms are also kept one by one, for the
pruning. The Chinese runs are
kept as plain substrings for the last resort, a scan, so a 1-character word that jieba
never cuts out on its own ("表" inside "表格") is still found; with them the run's words and
their characters, so a question whose words the document writes otherwise ("行距 设成 两倍"
of a page on "双倍 … 行间距", where no jieba word of the one is a word of the other) still
finds the chunks holding most of its characters (see `scan_floor`).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from generalAgent.search.segmentation import CJK_RUN, Segmenter, Term

# Longer queries are cut: past a few hundred characters extra words only slow the search.
MAX_QUERY_CHARS = 1_000
# Phrasings of one question searched at once (a list query): the user's words, a rendering
# in the document's language, a synonym or two. Each costs one lookup.
MAX_PHRASINGS = 5
MAX_TERMS = 32
# The scan of the last resort looks for at most this many substrings (runs, words, characters).
MAX_SCAN_SUBSTRINGS = 24
# A chunk the scan finds must hold at least this share of the query's characters (each
# substring found counts its length): fewer is a chunk sharing a common character or two,
# not the passage (unseen zh dev half: the one question no FTS5 term matched).
SCAN_SHARE = 0.6
# Latin words are looked up in the passage and in its title; Chinese words likewise.
RAW_COLUMNS = "text title"
SEGMENTED_COLUMNS = "text_jieba title"

# Words that say nothing about what to find. Dropped from a query unless nothing else is left.
_ENGLISH_STOPWORDS = """a an and are as at be been but by can do does for from how i in is it of on
or that the this to was what when where which who why with you your"""
_CHINESE_STOPWORDS = """的 了 在 是 我 有 和 就 不 都 一 这 也 很 到 说 要 去 你 会 着
把 那 吗 呢 吧 啊 如何 怎么 什么 哪些 为什么 是否 请问
怎样 哪个 一个 如果 可以 能 与 及 或 中 上 下 从 对 将 被 以 为 之 所 等 并 而 其 或者 以及 时 后 里
内 给 让 向 于 由 自 个 些"""
STOPWORDS = frozenset(_ENGLISH_STOPWORDS.split() + _CHINESE_STOPWORDS.split())


@dataclass(frozen=True)
class MatchQuery:
    all_terms: str  # every term must match ('' when the query has no searchable word)
    any_terms: str  # at least one term ('' when there is only one term)
    # For the scan of the last resort: the Chinese runs, then their words and characters
    # (stopwords left out), each counting its length where a chunk holds it.
    substrings: tuple[str, ...]
    terms: tuple[str, ...] = ()  # the expression of each term, as joined in the two above
    scan_floor: int = 1  # what a chunk the scan finds must hold at least (in characters)
    # The terms of plain BM25's ranking, when they differ from `terms`: the query as a bag
    # of the index's own words (`plain_query` says why); () when they are the same.
    plain_terms: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.all_terms and not self.substrings

    @property
    def plain(self) -> MatchQuery:
        """The query plain BM25 ranks by: itself, or its `plain_terms` ORed."""
        if not self.plain_terms:
            return self
        terms = self.plain_terms
        return MatchQuery(
            all_terms=" AND ".join(terms),
            any_terms=" OR ".join(terms) if len(terms) > 1 else "",
            substrings=(),
            terms=terms,
        )


def normalise_query(query: str) -> str:
    """NFKC (full-width letters and digits become ASCII), no lone surrogates, bounded length."""
    text = query.encode("utf-8", "ignore").decode("utf-8") if isinstance(query, str) else ""
    text = unicodedata.normalize("NFKC", text)[:MAX_QUERY_CHARS]
    # Control and format characters (NUL ends an FTS5 string early) become spaces.
    return "".join(ch if ch.isprintable() else " " for ch in text)


def phrasings(query: str | Sequence[str]) -> list[str]:
    """The non-blank phrasings of a query given as one string or a list of alternatives,
    duplicates dropped, at most MAX_PHRASINGS (the first ones); [] when none is left."""
    given = [query] if isinstance(query, str) else list(query)
    kept = [q for q in given if isinstance(q, str) and q.strip()]
    return list(dict.fromkeys(kept))[:MAX_PHRASINGS]


def build_match_query(query: str, segmenter: Segmenter) -> MatchQuery:
    text = normalise_query(query)
    terms: list[tuple[str, bool]] = []  # (FTS5 expression, is a stopword)
    runs: list[str] = []
    words: list[str] = []  # the runs' words that are not stopwords, for the scan
    position = 0
    for match in CJK_RUN.finditer(text):
        terms.extend(_latin(text[position : match.start()]))
        run = match.group()
        runs.append(run)
        for term in segmenter.query_terms(run):
            word = term[0][0].replace(" ", "")
            stop = len(term) == 1 and len(term[0]) == 1 and word in STOPWORDS
            terms.append((_term_expression(SEGMENTED_COLUMNS, term), stop))
            if not stop and word not in STOPWORDS:
                words.append(word)
        position = match.end()
    terms.extend(_latin(text[position:]))

    kept = [expression for expression, stop in terms if not stop]
    unique = list(dict.fromkeys(kept or [expression for expression, _ in terms]))[:MAX_TERMS]
    substrings, floor = scan_substrings(runs, words)
    plain = plain_query(text, segmenter)
    return MatchQuery(
        all_terms=" AND ".join(unique),
        any_terms=" OR ".join(unique) if len(unique) > 1 else "",
        substrings=substrings,
        terms=tuple(unique),
        scan_floor=floor,
        plain_terms=plain if plain and plain != tuple(unique) else (),
    )


def word_terms(word: str, segmenter: Segmenter) -> tuple[str, ...]:
    """The MATCH terms of one Chinese word, as `build_match_query` has them when it is not a
    stopword: for checking many dictionary words at once (english_gloss.py) without the
    plain ranking's and the scan's parts a whole query needs."""
    return tuple(
        dict.fromkeys(_term_expression(SEGMENTED_COLUMNS, term) for term in segmenter.query_terms(word))
    )


def plain_query(text: str, segmenter: Segmenter) -> tuple[str, ...]:
    """The terms of plain BM25: every Latin word as the tuned query has it, every word the
    index holds for the Chinese runs (jieba's search mode, as `text_jieba` is cut) on its own.

    The tuned query keeps a Chinese run's words as jieba's precise mode cuts them and joins
    single characters into a phrase ("在沙盒里" -> "在 沙", "盒里"), which must then occur
    adjacent; where the document cuts the same characters otherwise ("沙盒" alone, "沙" "盒")
    no term matches and plain BM25 over the very same words finds the page the tuned query
    cannot (the bilingual set's tuning half: bm25s 2nd, ours past 10th). As a bag of the
    index's own words the plain ranking is the textbook one the fusion seats (ranking.py)."""
    terms: list[tuple[str, bool]] = []
    position = 0
    for match in CJK_RUN.finditer(text):
        terms.extend(_latin(text[position : match.start()]))
        for word in segmenter.plain_words(match.group()):
            terms.append((_term_expression(SEGMENTED_COLUMNS, ((word,),)), word in STOPWORDS))
        position = match.end()
    terms.extend(_latin(text[position:]))
    kept = [expression for expression, stop in terms if not stop]
    return tuple(dict.fromkeys(kept or [expression for expression, _ in terms]))[:MAX_TERMS]


def scan_substrings(runs: Sequence[str], words: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """What the scan of the last resort looks for (the runs, then the words of two or more
    characters, then the words' characters; at most MAX_SCAN_SUBSTRINGS) and the least a
    chunk must hold (SCAN_SHARE of the characters, at least 1). A run found whole holds
    every character, so it always passes; words that are all stopwords leave the runs alone."""
    characters = list(dict.fromkeys(ch for word in words for ch in word if CJK_RUN.fullmatch(ch)))
    longer = [word for word in words if len(word) > 1]
    found = list(dict.fromkeys([*runs, *longer, *characters]))[:MAX_SCAN_SUBSTRINGS]
    floor = max(1, math.ceil(SCAN_SHARE * len(characters)))
    return tuple(found), floor


def _latin(segment: str) -> list[tuple[str, bool]]:
    found = []
    for raw in segment.split():
        word = _trim(raw)
        if word:
            expression = _term_expression(RAW_COLUMNS, ((word,),))
            found.append((expression, word.lower() in STOPWORDS))
    return found


def _trim(word: str) -> str:
    """The word without leading/trailing punctuation; '' if it has no letter or digit.

    Inner punctuation stays: FTS5 splits "4.1" or "multi-agent" into tokens that must then
    be adjacent, which is exactly the phrase the user typed.
    """
    start, end = 0, len(word)
    while start < end and not word[start].isalnum():
        start += 1
    while end > start and not word[end - 1].isalnum():
        end -= 1
    return word[start:end]


def quote(word: str) -> str:
    """`word` as an FTS5 string: double quotes around it, inner double quotes doubled."""
    return '"' + word.replace('"', '""') + '"'


def _term_expression(columns: str, term: Term) -> str:
    alternatives = [" AND ".join(f"{{{columns}}} : {quote(w)}" for w in group) for group in term]
    if len(alternatives) == 1 and len(term[0]) == 1:
        return alternatives[0]
    return "(" + " OR ".join(f"({a})" for a in alternatives) + ")"
