"""Reads of workspace files open what the path check allowed, even when a symlink is
swapped into the path between the check and the opening."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.tools import workspace as workspace_module
from generalAgent.tools.workspace import Workspace, WorkspaceError
from tests.support.links import (
    SECRET,
    file_swapped_for_a_link,
    folder_swapped_for_a_link,
    folder_with_a_secret,
    swap_after_the_check,
)
from tests.support.tools import run_tool, workspace_root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return folder_with_a_secret(tmp_path)


@pytest.fixture(params=["dir_fd", "by_path"])
def opening(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of opening: relative to a folder descriptor (POSIX) and by path with an
    identity check (Windows, which has no dir_fd)."""
    if request.param == "by_path":
        monkeypatch.setattr(workspace_module, "_FOLDER_RELATIVE", False)
    return str(request.param)


@pytest.mark.parametrize("step", ["resolve", "display"])
def test_a_folder_swapped_for_a_link_is_not_read(
    settings: Settings, outside: Path, monkeypatch: pytest.MonkeyPatch, opening: str, step: str
) -> None:
    root = workspace_root(settings)
    (root / "uploads" / "sub").mkdir()
    (root / "uploads" / "sub" / "notes.md").write_text("inside\n", encoding="utf-8")
    swap_after_the_check(monkeypatch, folder_swapped_for_a_link(root / "uploads" / "sub", outside), step)
    text, _ = run_tool(settings, "read_file", {"path": "uploads/sub/notes.md"})
    assert SECRET not in text
    assert text.startswith("Error: notes.md: the path changed while it was being opened")
    assert "nothing was read" in text


def test_a_file_swapped_for_a_link_is_not_read(
    settings: Settings, outside: Path, monkeypatch: pytest.MonkeyPatch, opening: str
) -> None:
    root = workspace_root(settings)
    (root / "uploads" / "notes.md").write_text("inside\n", encoding="utf-8")
    swap_after_the_check(
        monkeypatch, file_swapped_for_a_link(root / "uploads" / "notes.md", outside / "notes.md")
    )
    text, _ = run_tool(settings, "read_file", {"path": "uploads/notes.md"})
    assert SECRET not in text and "the path changed while it was being opened" in text


def test_edit_file_does_not_copy_a_swapped_in_file_into_the_workspace(
    settings: Settings, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = workspace_root(settings)
    target = root / "outputs" / "notes.md"
    target.write_text("draft\n", encoding="utf-8")
    swap_after_the_check(monkeypatch, file_swapped_for_a_link(target, outside / "notes.md"))
    text, _ = run_tool(
        settings,
        "edit_file",
        {"path": "outputs/notes.md", "old_string": "TOP-SECRET", "new_string": "copied"},
    )
    assert "the path changed while it was being opened" in text
    assert target.is_symlink() and (outside / "notes.md").read_text(encoding="utf-8") == SECRET + "\n"
    assert not any(
        SECRET in p.read_text(encoding="utf-8")
        for p in (root / "outputs").iterdir()
        if p.is_file() and not p.is_symlink()
    )


def test_search_file_does_not_index_a_swapped_in_file(
    settings: Settings, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = workspace_root(settings)
    (root / "uploads" / "sub").mkdir()
    (root / "uploads" / "sub" / "report.txt").write_text("quarterly figures inside\n", encoding="utf-8")
    swap_after_the_check(monkeypatch, folder_swapped_for_a_link(root / "uploads" / "sub", outside))
    text, _ = run_tool(settings, "search_file", {"file_path": "uploads/sub/report.txt", "query": "SECRET"})
    assert SECRET not in text and "the path changed while it was being opened" in text
    if settings.paths.indexes_db.exists():
        assert b"TOP-SECRET" not in settings.paths.indexes_db.read_bytes()


def test_a_link_inside_the_workspace_still_reads(settings: Settings, opening: str) -> None:
    root = workspace_root(settings)
    (root / "uploads" / "notes.md").write_text("the real notes\n", encoding="utf-8")
    (root / "uploads" / "link.md").symlink_to(root / "uploads" / "notes.md")
    (root / "temp" / "linked").symlink_to(root / "uploads", target_is_directory=True)
    for path in ("uploads/link.md", "temp/linked/notes.md"):
        text, _ = run_tool(settings, "read_file", {"path": path})
        assert "the real notes" in text, text
    found, _ = run_tool(settings, "search_file", {"file_path": "temp/linked/notes.md", "query": "notes"})
    assert "the real notes" in found


def test_open_for_reading_refuses_what_is_not_a_regular_file(settings: Settings, tmp_path: Path) -> None:
    workspace = Workspace.for_session(settings.paths.workspaces_dir, "s1")
    fifo = workspace.root / "uploads" / "pipe"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    with pytest.raises(WorkspaceError, match="not a regular file"):
        workspace.open_for_reading(workspace.resolve("uploads/pipe"))
    with pytest.raises(WorkspaceError, match="is a folder"):
        workspace.open_for_reading(workspace.resolve("uploads"))
    (workspace.root / "uploads" / "a.txt").write_bytes(b"bytes")
    with workspace.open_for_reading(workspace.resolve("uploads/a.txt")) as handle:
        assert handle.read() == b"bytes"


def test_a_document_preview_does_not_read_a_swapped_in_document(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import docx

    def write_docx(path: Path, text: str) -> None:
        document = docx.Document()
        document.add_paragraph(text)
        document.save(str(path))

    secret = tmp_path / "secret.docx"
    write_docx(secret, SECRET)
    root = workspace_root(settings)
    write_docx(root / "uploads" / "plan.docx", "the plan inside")
    unswapped, _ = run_tool(settings, "read_file", {"path": "uploads/plan.docx"})
    assert "the plan inside" in unswapped  # documents open from the verified file as before
    swap_after_the_check(monkeypatch, file_swapped_for_a_link(root / "uploads" / "plan.docx", secret))
    text, _ = run_tool(settings, "read_file", {"path": "uploads/plan.docx"})
    assert SECRET not in text and "the path changed while it was being opened" in text
