"""Loading what the gloss needs before the first Chinese question that needs it.

A lone Chinese question over documents that are not Chinese is also searched in its
dictionary gloss (search/query_translation.py), and the first one of a process waits for
CC-CEDICT to be read (1.6–6 s on a loaded machine, docs/benchmarks.md) and for jieba's
dictionary, which cuts the question (about as long; an English folder's indexing never
loads it). The chat started in a trusted folder (where it indexes in the background,
documents/background_indexing.py) with a Chinese UI knows such a question is likely once
the index holds a document of that folder in another language: `GlossWarmup` then loads
both in a thread of its own while the user types. Nothing here changes what is read or
glossed: it calls the search's own loaders a little earlier, once per process (a second
call is free).

Bounded as those loaders are (MAX_DICTIONARY_BYTES; jieba's packaged dictionary);
cancellable before the load begins (`cancel`, when the chat ends); a load under way is not
waited for (a daemon thread: the chat's exit never waits on it) and only ever costs what the
first glossed question would have paid.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

LOGGER = logging.getLogger(__name__)


def foreign_documents_under(db_path: Path, folder: Path) -> bool:
    """Whether indexes.db holds a document seen under `folder` whose main language is
    known and not Chinese (one indexed query; False when there is no index yet)."""
    if not db_path.exists():
        return False
    prefix = str(folder).rstrip(os.sep) + os.sep
    try:
        with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1.0)) as conn:
            row = conn.execute(
                "SELECT 1 FROM document_paths p JOIN documents d ON d.file_hash = p.file_hash"
                " WHERE substr(p.path, 1, ?) = ? AND d.language NOT IN ('', 'zh') LIMIT 1",
                (len(prefix), prefix),
            ).fetchone()
    except sqlite3.Error as exc:  # an old schema, a locked or damaged file: no head start, no harm
        LOGGER.debug("dictionary warm-up skipped: %s", exc)
        return False
    return row is not None


class GlossWarmup:
    """One chat's early load of the gloss's dictionaries, asked for when its folder's index
    may have gained documents in another language (at the start, and after each indexing
    pass). `use_jieba`: USE_JIEBA (without it the gloss never loads jieba)."""

    def __init__(self, db_path: Path, folder: Path, *, use_jieba: bool = True) -> None:
        self.db_path, self.folder, self.use_jieba = db_path, folder, use_jieba
        self._cancelled = threading.Event()
        self._started = threading.Event()  # the load was begun (once per chat is enough)
        self._lock = threading.Lock()

    def request(self) -> threading.Thread | None:
        """Check the index and load the dictionaries in a daemon thread; the thread, or None
        when the load was already begun or the chat has ended."""
        with self._lock:
            if self._started.is_set() or self._cancelled.is_set():
                return None
            thread = threading.Thread(target=self._run, name="gloss-dictionary", daemon=True)
            thread.start()
            return thread

    def cancel(self) -> None:
        """Do not begin a load (one under way finishes on its own, unwaited)."""
        self._cancelled.set()

    @property
    def started(self) -> bool:
        return self._started.is_set()

    def _run(self) -> None:
        if not foreign_documents_under(self.db_path, self.folder):
            return
        with self._lock:
            if self._cancelled.is_set() or self._started.is_set():
                return
            self._started.set()
        from generalAgent.search.query_translation import load_dictionary
        from generalAgent.search.segmentation import load_jieba

        if self.use_jieba:
            load_jieba()
        load_dictionary()
