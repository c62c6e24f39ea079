"""Chinese keywords for an English query over Chinese documents: the dictionary gloss reversed.

The other direction of query_translation.py. An English question asked of a Chinese manual
shares only the odd command name or path with it (the English questions of the Chinese
Debian Reference: recall@5 0.48 on keywords, where the vectors alone found 0.64), and those
names made the question look "present" there, so its keyword places kept their seats and
pushed the vectors' answers out. Here CC-CEDICT, the table query_translation.py already
loads, is read backwards: each English word of its short senses ("to install", "(computing)
file") points to the Chinese head words it translates, built once per process on first use
(`reverse_dictionary`). An English question's words are looked up (with their plural and
-ed/-ing forms), and of each word's Chinese words only those the searched chunks hold are
kept, at most CHINESE_WORDS_PER_WORD: the dictionary offers 文件, 档案, 卷宗, 锉 for "file",
the documents decide which of them they use. The Chinese words are one more phrasing of
the question, searched beside the user's words with a lower weight exactly as the forward
gloss is (lookup.py: `find_chunks` and the PostgreSQL store), only when the question has no
Chinese and less than half of the scope's prose is English ("the" against 的, counted:
`english_prose_share`; a question's words found there are no such measure, since a Chinese
manual quotes the commands, paths and options an English question names). In such a scope
the question's own rankings also weigh by that English share (`own_words_weighed`), so with
vectors a passage sharing a command name no longer keeps a seat over the vectors' answer.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from generalAgent.search.query import (
    MAX_QUERY_CHARS,
    MatchQuery,
    build_match_query,
    normalise_query,
    word_terms,
)
from generalAgent.search.query_translation import (
    CHINESE_PROBE,
    MAX_SENSE_WORDS,
    Dictionary,
    load_dictionary,
    sense_words,
)
from generalAgent.search.segmentation import CJK_RUN, Segmenter, load_jieba

# Chinese words kept for one English word, among those the searched chunks hold, in the
# table's order (`build_reverse`). Chosen on the tuning halves (bilingual tune / unseen dev,
# en-zh, keywords | with vectors): 1 word 0.36 | 0.56 and 0.636 | 0.727; 2: 0.60 | 0.60 and
# 0.636 | 0.773; 3: 0.68 | 0.72 and 0.636 | 0.773; 4: 0.64 | 0.72 and 0.682 | 0.818 (MRR
# lower than 3's on three of the four). A word's first translation is often not the one a
# manual uses ("file": 文件 and 档案; "mount": 挂载 and 安装).
CHINESE_WORDS_PER_WORD = 3
# The Chinese phrasing's weight, times the share of its words found (all of them: only words
# the scope holds are kept). Below the forward gloss's (ranking.GLOSS_WEIGHT, 0.25): at 0.25
# and 0.5 on the tuning halves (words 3, en-zh with vectors) 0.72 and 0.68 | 0.773 and
# 0.636; at 0.15 0.72 | 0.818, keywords alike or better; at 0.1 0.68 | 0.773.
CHINESE_GLOSS_WEIGHT = 0.15
# Chinese words the reverse table keeps for one English word, best first: "set" has 200+
# entries whose short senses name it; past a few dozen they are idioms and rare characters.
# The table holds traditional and simplified forms alike (the forward table does not say
# which is which), so about half of them are another script's spelling of the other half.
MAX_CANDIDATES = 24
# Candidates counted as checked against the searched chunks for a whole question, at most, in
# the order they are tried (the first CHINESE_WORDS_PER_WORD found of each word end its turn).
# The checks themselves are one query an English word (its candidates at once), so a
# question costs at most MAX_QUESTION_WORDS small queries of MAX_CANDIDATES terms on any backend.
MAX_CHECKED = 80
# Words in the whole gloss, at most.
MAX_GLOSS_WORDS = 24
# English's commonest word: its chunks, against those of Chinese's (CHINESE_PROBE), say how
# much of the scope's prose is English (`english_prose_share`).
ENGLISH_PROBE = "the"
# The gloss is searched only when less of the scope's prose than this is English: a mixed
# folder, half of whose chunks are English, answers an English question in its own words.
MAX_ENGLISH_PROSE = 0.5
# Chunks counted for each probe, at most: enough to tell a Chinese manual from an English one.
PROBE_CAP = 200
# English words of a question, at most, looked up.
MAX_QUESTION_WORDS = 24

_ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# Senses that name no thing to translate back (query_translation.py skips the same).
_SKIPPED_SENSE = re.compile(
    r"^(?:CL:|(?:old |archaic |Japanese |erhua )?variant of|surname |abbr\. |see |used in |"
    r"also written|also pr\.|Taiwan pr\.|classifier for|\(classifier|pr\. |one of |"
    r"(?:old )?name of |\((?:Tw|dialect|literary|old|archaic)\))",
)
# English words that carry no meaning of their own as a question's word, beyond query.py's
# stopwords: question words and auxiliaries a user types ("how do I ...", "can I ...").
_QUESTION_WORDS = """a an and are as at be been but by can do does for from how i in is it of on or that the
    this to was what when where which who why with you your my me we our there their its it's
    should would could will shall may might must has have had not no any some so just only
    want need get make let use using used way s sb sth one something someone very also"""
_QUESTION_STOPWORDS = frozenset(_QUESTION_WORDS.split())


@dataclass(frozen=True)
class ReverseDictionary:
    # An English word (lower case) -> the Chinese words whose short senses name it, best
    # first (`build_reverse` says in what order).
    words: Mapping[str, tuple[str, ...]]

    def chinese_for(self, word: str) -> tuple[str, ...]:
        """The Chinese words for `word`: its base form's first ("packages" -> "package",
        "installed" -> "install": the dictionary's senses are written in base forms, and an
        inflected form's own entries are the odd idiom), then its own; () when it has none."""
        forms = base_forms(word)
        found = [c for form in [*forms[1:], forms[0]] for c in self.words.get(form, ())]
        return tuple(dict.fromkeys(found))


def base_forms(word: str) -> list[str]:
    """`word` and the forms a dictionary sense may write it in, most likely first."""
    forms = [word]
    if word.endswith("ies") and len(word) > 4:
        forms.append(word[:-3] + "y")
    if word.endswith("es") and len(word) > 3:
        forms.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        forms.append(word[:-1])
    for stemmed in list(forms):
        for suffix in ("ed", "ing"):
            if stemmed.endswith(suffix) and len(stemmed) > len(suffix) + 2:
                stem = stemmed[: -len(suffix)]
                forms += [stem, stem + "e"]
                if len(stem) > 2 and stem[-1] == stem[-2]:
                    forms.append(stem[:-1])  # "stopped" -> "stop"
    return list(dict.fromkeys(forms))


# Bits of a candidate's int that number its Chinese word (the table has ~190k words).
_NUMBER_BITS = 20
_NUMBER_MASK = (1 << _NUMBER_BITS) - 1


def build_reverse(dictionary: Dictionary) -> ReverseDictionary:
    """English word -> Chinese words, from every short sense of every entry, best first:
    words of two or more characters before single ones (a lone character has a dozen
    meanings and is on nearly every Chinese page); then from the shortest sense ("spacing"
    before "line spacing"); then the words of fewest senses (a translation of one thing,
    间距 "gap; spacing", before one of many, 地方 "place; space; part; ..."); then the file's
    order. At most MAX_CANDIDATES a word."""
    # Each candidate is one int (its rank's fields, then its word's number) in a list a word:
    # the table is built from ~400k senses, and a tuple per candidate doubled its peak memory.
    ranked: dict[str, list[int]] = {}
    chinese_words: list[str] = []
    order = 0
    for chinese, senses in dictionary.senses.items():
        if len(chinese) > 4:
            continue
        parts = [p.strip() for sense in senses.split("/") for p in sense.split(";")]
        parts = [p for p in parts if p and not _SKIPPED_SENSE.match(p)]
        number = len(chinese_words)
        chinese_words.append(chinese)
        for part in parts:
            named = sense_words(part)
            if not 0 < len(named) <= MAX_SENSE_WORDS:
                continue
            order += 1
            rank = (((len(chinese) == 1) * 4 + len(named)) << 10 | min(len(parts), 1023)) << 24 | order
            for english in named:
                if english not in _QUESTION_STOPWORDS and len(english) > 1:
                    ranked.setdefault(english, []).append(rank << _NUMBER_BITS | number)
    words: dict[str, tuple[str, ...]] = {}
    for english, candidates in ranked.items():
        candidates.sort()
        best = dict.fromkeys(chinese_words[key & _NUMBER_MASK] for key in candidates)
        words[english] = tuple(best)[:MAX_CANDIDATES]
    return ReverseDictionary(MappingProxyType(words))


_building = threading.Lock()
# The one reverse table of the process, in a one-entry box (as query_translation.py keeps the
# forward one): immutable once built, shared read-only by every session; None in it when the
# dictionary package is not installed.
_built: list[ReverseDictionary | None] = []


def reverse_dictionary() -> ReverseDictionary | None:
    """The reverse table, built once per process on first use; None without the dictionary."""
    if not _built:
        with _building:
            if not _built:
                forward = load_dictionary()
                _built.append(build_reverse(forward) if forward is not None else None)
    return _built[0]


def may_gloss_in_chinese(query: object) -> bool:
    """True for a lone query with English words and no Chinese: the one kind a Chinese
    phrasing may be added to."""
    lone = _lone(query)
    return lone is not None and not CJK_RUN.search(lone) and _ENGLISH_WORD.search(lone) is not None


def _lone(query: object) -> str | None:
    """The question when `query` is one phrasing of it (a string or a list of one), as
    lookup.lone_query says (not imported: lookup.py imports this module)."""
    if isinstance(query, str):
        return query
    if isinstance(query, Sequence) and len(query) == 1 and isinstance(query[0], str):
        return query[0]
    return None


def question_words(query: str) -> list[str]:
    """The English words of `query` that may carry its meaning, lower case, in order."""
    text = normalise_query(query)[:MAX_QUERY_CHARS]
    found = [w.lower().strip("'-") for w in _ENGLISH_WORD.findall(text)]
    kept = [w for w in found if len(w) > 1 and w not in _QUESTION_STOPWORDS]
    return list(dict.fromkeys(kept))[:MAX_QUESTION_WORDS]


def by_frequency(candidates: Sequence[str], frequency: Callable[[str], int | None] | None) -> list[str]:
    """`candidates` without the words `frequency` (jieba's word counts, when the index is
    cut by jieba) never saw: such a word is never one token of the index either
    (traditional spellings, rare idioms), so checking it would cost a query for nothing."""
    if frequency is None:
        return list(candidates)
    return [c for c in candidates if frequency(c)]


def chinese_gloss(
    query: str,
    present: Callable[[Sequence[str]], list[bool]],
    table: ReverseDictionary | None = None,
    frequency: Callable[[str], int | None] | None = None,
) -> str:
    """The query's Chinese keywords, space-separated, in the query's order ("" when none):
    each English word the dictionary knows gives its first CHINESE_WORDS_PER_WORD Chinese
    words of two characters or more that the searched chunks hold, in the table's order
    (`by_frequency` drops the words jieba never saw). A lone character is no keyword: the
    user reads it among the words searched ("package" -> 包, found in 宏包 where jieba cuts
    it off), and it is on nearly every Chinese page (without them, tuning halves, en-zh:
    bilingual 0.68 / 0.516 against 0.68 / 0.509 on keywords, every other figure the same). `present` says of several words at once which the chunks hold
    (one query an English word); at most MAX_CHECKED candidates count as checked, in order."""
    reverse = table or reverse_dictionary()
    if reverse is None:
        return ""
    chosen: list[str] = []
    checked = 0
    for word in question_words(query):
        offered = by_frequency(reverse.chinese_for(word), frequency)
        fresh = [c for c in offered if len(c) > 1 and c not in chosen]
        candidates = fresh[: MAX_CHECKED - checked]
        found = dict(zip(candidates, present(candidates), strict=True)) if candidates else {}
        kept = 0
        for chinese in candidates:
            if kept >= CHINESE_WORDS_PER_WORD:
                break
            checked += 1
            if found[chinese]:
                chosen.append(chinese)
                kept += 1
        if len(chosen) >= MAX_GLOSS_WORDS or checked >= MAX_CHECKED:
            break
    return " ".join(chosen[:MAX_GLOSS_WORDS])


@dataclass(frozen=True)
class ChineseGloss:
    """The Chinese phrasing of an English question over Chinese documents, and how much of
    the searched chunks' prose is English (`english_prose`, 0..1): the weight the question's
    own words keep, whether or not the dictionary gave a phrasing."""

    keywords: str  # "" when the dictionary gave nothing the chunks hold
    match: MatchQuery | None  # the keywords as searched; None when there are none
    english_prose: float
    weight: float = 0.0  # the phrasing's weight before its share found (CHINESE_GLOSS_WEIGHT)


def english_prose_share(count: Callable[[MatchQuery], int], segmenter: Segmenter) -> float:
    """The share of the searched chunks' prose that is English: chunks holding English's
    commonest word over those holding it or Chinese's (each counted up to the backend's
    cap). A Chinese manual quotes commands, paths and the odd English paragraph, so an
    English question's words are mostly "there" (the Chinese Debian Reference: every word
    of 19 of its 25 tuning questions), but "the" is in 42 of its 1,412 chunks and 的 in
    1,191: 0.03."""
    english = count(build_match_query(ENGLISH_PROBE, segmenter))
    chinese = count(build_match_query(CHINESE_PROBE, segmenter))
    return english / (english + chinese) if english + chinese else 1.0


def chinese_glossed_query(
    query: str | MatchQuery | Sequence[str],
    segmenter: Segmenter,
    present_terms: Callable[[Sequence[str]], list[bool]],
    count: Callable[[MatchQuery], int],
) -> ChineseGloss | None:
    """The Chinese phrasing to search beside a lone English `query` over Chinese documents,
    or None when the scope is not Chinese: less than half the searched chunks' prose is
    Chinese (`english_prose_share`, from `count`, the backend's chunks holding a one-word
    phrasing, capped), so an English or a mixed folder is searched as before. Its keywords
    are "" when the dictionary gives nothing the chunks hold (`present_terms`, the backend's
    word of whether any searched chunk holds each of several MATCH terms)."""
    lone = _lone(query)
    probe = word_terms(CHINESE_PROBE, segmenter)
    if lone is None or not all(present_terms(probe)):
        return None  # no Chinese at all (the one check an English search of English documents pays)
    english_prose = english_prose_share(count, segmenter)
    if english_prose >= MAX_ENGLISH_PROSE:
        return None

    def present(words: Sequence[str]) -> list[bool]:
        """Whether the scope holds every term of each word (a word jieba cuts in two)."""
        each = [word_terms(word, segmenter) for word in words]
        terms = list(dict.fromkeys(term for own in each for term in own))
        held = dict(zip(terms, present_terms(terms), strict=True)) if terms else {}
        return [bool(own) and all(held[term] for term in own) for own in each]

    frequency = load_jieba().dt.FREQ.get if segmenter.name == "jieba" else None
    chinese = chinese_gloss(lone, present, frequency=frequency)
    match = build_match_query(chinese, segmenter) if chinese else None
    if match is None or match.empty:
        return ChineseGloss("", None, english_prose)
    return ChineseGloss(chinese, match, english_prose, CHINESE_GLOSS_WEIGHT)


def own_words_weighed(
    runs: list[tuple[list[tuple[int, float]], list[tuple[int, float]], float]], english_prose: float
) -> None:
    """The question's own rankings (`runs`, lookup.py's) weighed by the scope's English
    prose share, in place: its words found in a Chinese manual's commands and paths are
    not its language being there, and at their full share the keyword places kept their
    seats (ranking.keyword_seats) and pushed the vectors' answers out."""
    runs[:] = [(tuned, plain, weight * english_prose) for tuned, plain, weight in runs]
