"""Built-in knowledge: Markdown files under knowledge/<domain>/ imported when they change.

Checked once per process, when the knowledge base is first opened by a tool
(`BuiltinKnowledge`), and by `kb sync`: a session that never reads the knowledge base
never opens the folder (`-p` starts without it). Each file's MD5 is kept in the database (`builtin_sources`), so an
unchanged file costs one hash and nothing is re-indexed; a changed file replaces its item in
place (same id); a deleted file's item is removed. The report says what changed, so the
caller prints one line when something did and nothing otherwise (running twice is a no-op).

A file may start with YAML front matter (title, category, tags); otherwise its first
heading, or its file name, is the title. The folder name is the domain.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from generalAgent.display import N_
from generalAgent.documents.encoding import decode_text
from generalAgent.documents.reading import DocumentError
from generalAgent.knowledge.fields import KnowledgeError, clean_tags
from generalAgent.knowledge.items import KnowledgeItem
from generalAgent.knowledge.store import STORE_ERRORS, KnowledgeStore


@dataclass
class ImportReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "path: reason"
    # The failures that are unreadable files: line -> (path, error), said in the UI's language.
    unreadable: dict[str, tuple[str, DocumentError]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.failed)

    def summary(self, translate: Callable[[str], str] = str) -> str:
        """One line of what changed; `translate` is the terminal's `_` (the words are marked)."""
        parts = [
            translate(what).format(count=len(names))
            for what, names in (
                (N_("{count} added"), self.added),
                (N_("{count} updated"), self.updated),
                (N_("{count} removed"), self.removed),
                (N_("{count} failed"), self.failed),
            )
            if names
        ]
        line = translate(N_("Built-in knowledge: {changes}.")).format(changes=", ".join(parts))
        return line + "".join(f"\n  {self._failure(failure, translate)}" for failure in self.failed)

    def _failure(self, failure: str, translate: Callable[[str], str]) -> str:
        if failure not in self.unreadable:
            return failure
        key, error = self.unreadable[failure]
        return f"{key}: {error.shown(translate)}"


class BuiltinKnowledge:
    """The built-in knowledge folder, imported once per process before the knowledge base
    is first read, and what that import has to tell the user (drained by the front end).

    A failure to import leaves the knowledge base as it was (the user's notes are still
    searched) and becomes a line for the user, as a start-up import's did.
    """

    def __init__(self, knowledge_dir: Path) -> None:
        self.knowledge_dir = knowledge_dir
        self._lock = threading.Lock()  # tools may run in threads: the others wait for it
        self._checked = False
        self._news: list[Callable[[Callable[[str], str]], str]] = []

    def check(self, store: KnowledgeStore) -> None:
        """Import what changed in the folder, the first time only."""
        with self._lock:
            if self._checked:
                return
            self._checked = True
            unusable: tuple[type[Exception], ...] = (*STORE_ERRORS, OSError)
            try:
                report = import_builtin_knowledge(store, self.knowledge_dir)
            except unusable as exc:
                reason = str(exc)
                self._news.append(
                    lambda translate: translate(N_("Built-in knowledge was not imported: {reason}")).format(
                        reason=reason
                    )
                )
                return
            if report.changed:
                self._news.append(report.summary)

    def drain_news(self, translate: Callable[[str], str] = str) -> list[str]:
        """What the import changed or why it failed, each once; `translate` is the terminal's `_`."""
        with self._lock:
            news, self._news = self._news, []
        return [line(translate) for line in news]


def import_builtin_knowledge(store: KnowledgeStore, knowledge_dir: Path) -> ImportReport:
    report = ImportReport()
    known = store.builtin_sources()
    seen: set[str] = set()
    files = sorted(knowledge_dir.glob("*/*.md")) if knowledge_dir.is_dir() else []
    for path in files:
        key = path.relative_to(knowledge_dir).as_posix()
        seen.add(key)
        try:
            data = path.read_bytes()
            digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
            previous = known.get(key)
            if previous is not None and previous[0] == digest:
                continue
            item = parse_page(decode_text(data, path.name), domain=path.parent.name, stem=path.stem)
            item.source, item.source_path = "builtin", key
            store.save_builtin(key, digest, item, previous[1] if previous else None)
        except (OSError, DocumentError, KnowledgeError, yaml.YAMLError) as exc:
            report.failed.append(f"{key}: {exc}")
            if isinstance(exc, DocumentError):
                report.unreadable[report.failed[-1]] = (key, exc)
            continue
        (report.updated if previous else report.added).append(key)
    for key, (_, item_id) in known.items():
        if key not in seen:
            store.delete_knowledge(item_id)
            report.removed.append(key)
    return report


def parse_page(text: str, domain: str, stem: str) -> KnowledgeItem:
    """A knowledge item from a Markdown page with optional YAML front matter."""
    meta: dict[str, Any] = {}
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:
            loaded = yaml.safe_load(text[4:end]) or {}
            if not isinstance(loaded, dict):
                raise KnowledgeError(N_("the front matter must be a mapping (title:, tags:, ...)"))
            meta = loaded
            body = text[end + 4 :].lstrip("\n")
    if not body.strip():
        raise KnowledgeError(N_("the page is empty"))
    fallback = stem.replace("-", " ").replace("_", " ")
    title = str(meta.get("title") or _first_heading(body) or fallback)
    tags = meta.get("tags") or []
    return KnowledgeItem(
        title=title,
        content=body,
        domain=domain,
        category=str(meta.get("category") or ""),
        tags=clean_tags(tags if isinstance(tags, list) else [str(tags)]),
    )


def _first_heading(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
        if line.strip():
            return ""
    return ""
