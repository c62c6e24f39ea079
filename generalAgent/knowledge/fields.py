"""What a knowledge item may hold: titles, contents, names and tags as the store accepts
them (trimmed, bounded, refused with a message that says what would work), and the SQL
condition that filters items by domain, category and tags.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from generalAgent.display import N_, Message
from generalAgent.search.schema import DOCUMENTS_DOMAIN
from generalAgent.search.store import TERMINAL, Viewer

MAX_TITLE_CHARS = 500
MAX_TAGS = 50


class KnowledgeError(Exception):
    """A request the store refuses; the message says why and what would work.

    Raised with an N_-marked template and its fields: `str(exc)` is the English (what the
    model reads), `said` the same sentence as data the terminal shows in its language."""

    def __init__(self, template: str, /, **fields: object) -> None:
        self.said = Message(template, {name: str(value) for name, value in fields.items()})
        super().__init__(self.said.english())


def item_filter(
    domain: str | None,
    category: str | None,
    tags: Iterable[str] | None,
    alias: str = "i",
    session_files: str | None = None,
    viewer: Viewer = TERMINAL,
    space: str | None = None,
) -> tuple[str, list[Any]]:
    """SQL condition on items (`alias`) for the filters, and its parameters. Indexed files
    under `session_files` (a folder, the sessions' workspaces) are left out: a file attached
    in one session is that session's document, not the knowledge base (kb add adds it).

    A `viewer` other than the terminal's sees only its own private items and its teams'
    (search/store.py); `space` keeps one of those spaces ('' = the private one). The
    terminal's condition is left out of the SQL, so a search of the whole base keeps
    sqlite-vec's KNN index (which takes no condition): the store drops any item not the
    viewer's when it reads the hits' items (`KnowledgeStore.get_items`)."""
    where: list[str] = []
    params: list[Any] = []
    if viewer != TERMINAL:
        condition, values = viewer.where(alias, "?")
        where.append(condition)
        params.extend(values)
    if space is not None:
        where.append(f"{alias}.space = ?")
        params.append(space)
    if session_files:
        where.append(f"NOT ({alias}.domain = ? AND substr(coalesce({alias}.source_path, ''), 1, ?) = ?)")
        params.extend([DOCUMENTS_DOMAIN, len(session_files), session_files])
    if domain:
        where.append(f"{alias}.domain = ?")
        params.append(domain)
    if category:
        where.append(f"{alias}.category = ?")
        params.append(category)
    wanted = clean_tags(tags or [])
    if wanted:
        marks = ",".join("?" * len(wanted))
        where.append(
            f"EXISTS (SELECT 1 FROM item_tags t WHERE t.item_id = {alias}.id AND t.tag IN ({marks}))"
        )
        params.extend(wanted)
    return " AND ".join(where), params


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Tags trimmed, de-duplicated and sorted; a single comma-separated string is split."""
    if isinstance(tags, str):
        tags = tags.split(",")
    cleaned = sorted({t.strip() for t in tags if isinstance(t, str) and t.strip()})
    if len(cleaned) > MAX_TAGS:
        raise KnowledgeError(
            N_("Too many tags ({count}); use at most {limit}."), count=len(cleaned), limit=MAX_TAGS
        )
    return cleaned


def clean_title(title: str) -> str:
    title = " ".join(str(title or "").split())
    if not title:
        raise KnowledgeError(N_("A knowledge item needs a title (a few words saying what it is)."))
    if len(title) > MAX_TITLE_CHARS:
        raise KnowledgeError(N_("The title is too long; keep it under {limit} chars."), limit=MAX_TITLE_CHARS)
    return title


def clean_content(content: str) -> str:
    content = str(content or "")
    if not content.strip():
        raise KnowledgeError(N_("The content is empty; give the text to remember."))
    return content


def clean_name(name: str, what: str) -> str:
    name = " ".join(str(name or "").split())
    if not name:
        raise KnowledgeError(N_("The {what} is empty; use e.g. 'general'."), what=what)
    return name
