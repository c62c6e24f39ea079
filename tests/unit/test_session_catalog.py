"""The session catalog's folders and listing: what -c, /sessions and --resume pick."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from generalAgent.sessions import SessionCatalog, Usage


@pytest.fixture
def catalog(tmp_path: Path):
    opened = SessionCatalog(tmp_path / "sessions.db")
    yield opened
    opened.close()


def test_unlisted_sessions_are_resumable_but_not_listed(catalog: SessionCatalog, tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    catalog.open_session("chat-1", "a chat", here)
    catalog.record_turn("chat-1", "a chat", Usage())
    catalog.open_session("script-1", "a -p run", here, listed=False)
    catalog.record_turn("script-1", "a -p run", Usage(model_calls=1))
    catalog.open_session("elsewhere-1", "elsewhere", there)
    catalog.record_turn("elsewhere-1", "elsewhere", Usage())

    assert [s.id for s in catalog.recent()] == ["elsewhere-1", "chat-1"]
    assert [s.id for s in catalog.recent(unlisted=True)] == ["elsewhere-1", "script-1", "chat-1"]
    assert catalog.latest(folder=here).id == "chat-1"
    assert catalog.latest(folder=here, unlisted=True).id == "script-1"  # what -c continues
    assert catalog.latest(folder=tmp_path) is None
    assert catalog.resolve("last").id == "elsewhere-1"
    assert catalog.resolve("script").id == "script-1"  # an id resumes it, listed or not
    assert catalog.get("script-1").folder == str(here)


def test_opening_an_unlisted_session_listed_lists_it(catalog: SessionCatalog, tmp_path: Path) -> None:
    catalog.open_session("script-1", "a -p run", tmp_path, listed=False)
    catalog.record_turn("script-1", "a -p run", Usage())
    catalog.open_session("script-1", "a -p run", tmp_path, listed=False)
    assert catalog.recent() == []
    assert catalog.resolve("last").id == "script-1"  # --resume continues it, listed or not
    catalog.open_session("script-1", "a -p run", tmp_path / "elsewhere")  # resumed in the chat, or --save
    assert [s.id for s in catalog.recent()] == ["script-1"]
    assert catalog.get("script-1").folder == str(tmp_path)  # still where it was started


def test_an_editor_sessions_mode_is_kept_until_the_editor_changes_it(
    catalog: SessionCatalog, tmp_path: Path
) -> None:
    catalog.set_approval_mode("editor-1", "read-only")  # no message sent yet: no row made
    assert catalog.get("editor-1") is None
    catalog.open_session("editor-1", "hi", tmp_path, approval_mode="read-only")  # its first turn
    assert catalog.get("editor-1").approval_mode == "read-only"
    catalog.open_session("editor-1", "hi", tmp_path)  # continued in the terminal, which has no modes
    catalog.record_turn("editor-1", "hi", Usage())
    assert catalog.get("editor-1").approval_mode == "read-only"
    catalog.set_approval_mode("editor-1", "accept-edits")  # switched in the editor
    assert catalog.get("editor-1").approval_mode == "accept-edits"
    catalog.open_session("editor-1", "hi", tmp_path, approval_mode="ask")
    assert catalog.get("editor-1").approval_mode == "ask"
    catalog.open_session("chat-1", "hi", tmp_path)
    assert catalog.get("chat-1").approval_mode is None


def test_sessions_opened_in_one_minute_get_different_ids() -> None:
    """An editor or a program opens many sessions a minute; an id shared by two is one
    workspace and one history for both. 1,000 in one minute: with two random bytes two
    of them shared an id almost always (and 200 about one time in three)."""
    minute = datetime(2026, 11, 29, 8, 25, tzinfo=UTC)
    ids = [SessionCatalog.new_id(minute) for _ in range(1000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"20261129-0825-[0-9a-f]{8}", session_id) for session_id in ids)
