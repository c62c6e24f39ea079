"""The tokens SQLite's FTS5 index makes of a text, for the PostgreSQL index.

indexes.db tokenizes every column with `porter unicode61 remove_diacritics 2` (schema.py).
The PostgreSQL store (postgres_store.py) builds its `tsvector` from these same tokens
instead of letting PostgreSQL's parser cut the text: that parser has a notion of URLs,
versions and e-mail addresses FTS5 lacks ("4.1" is one token there, two here), and the
query builder (query.py) writes its phrases for FTS5's tokens. With the same tokens on both
sides, a query matches the same chunks in either backend, and BM25 computed from their
counts ranks them the same.

Cutting is done here: unicode61 ends a token at any character that is not a letter, a
digit or a private-use character (Unicode categories L*, N*, Co), and with
remove_diacritics it drops combining marks inside a token. Folding and stemming are FTS5's
own: each distinct word goes once through an in-memory FTS5 table of the same tokenizer
and its `fts5vocab` table says what it became. A Python copy of FTS5's Porter stemmer
would drift (Snowball's "porter" stems "possibly" to "possibli", FTS5's to "possibl");
SQLite ships with Python, so this costs no dependency, and words repeat, so nearly every
word is found in the cache. tests/unit/search/test_fts_tokens.py compares the result with
FTS5's own tokens of real text.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable

TOKENIZER = "porter unicode61 remove_diacritics 2"  # as chunks_fts (search/schema.py)
# A letter, digit or private-use character, then more of them or combining marks.
_WORD = re.compile(r"(?:[^\W_]|[\uE000-\uF8FF])(?:[^\W_]|[\uE000-\uF8FF\u0300-\u036F])*")
_MARKS = re.compile(r"[\u0300-\u036F]")
CACHE_WORDS = 200_000  # distinct words remembered (a few MB); the cache starts over past it


class FTS5Tokenizer:
    """FTS5's tokens of texts. One in-memory database and word cache per instance; safe to
    share between threads (stemming holds a lock)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(word, tokenize = '{TOKENIZER}')")
        self._conn.execute("CREATE VIRTUAL TABLE stems USING fts5vocab(words, 'instance')")
        self._cache: dict[str, str] = {}

    def tokens(self, text: str) -> list[str]:
        """The tokens FTS5 indexes for `text`, in order."""
        words = [_MARKS.sub("", word) if not word.isascii() else word for word in _WORD.findall(text)]
        self._learn(words)
        cache = self._cache
        return [cache[word] for word in words]

    def _learn(self, words: Iterable[str]) -> None:
        cache = self._cache
        missing = list({word for word in words if word not in cache})
        if not missing:
            return
        with self._lock:
            if len(cache) + len(missing) > CACHE_WORDS:
                cache.clear()
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany("INSERT INTO words (rowid, word) VALUES (?, ?)", enumerate(missing))
                found = dict(self._conn.execute("SELECT doc, term FROM stems"))
            finally:
                self._conn.execute("ROLLBACK")  # the table is only a stemmer: nothing is kept
            for number, word in enumerate(missing):
                cache[word] = found.get(number, word.lower())

    def close(self) -> None:
        self._conn.close()
