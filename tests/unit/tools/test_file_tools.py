"""read_file, write_file, edit_file, list_workspace_files, find_files inside the workspace."""

from __future__ import annotations

import os
import unicodedata

import pytest

from generalAgent.config.settings import Settings
from tests.support.tools import run_tool, workspace_root


@pytest.fixture
def root(settings: Settings):
    path = workspace_root(settings)
    (path / "uploads" / "notes.md").write_text("".join(f"line {i}\n" for i in range(1, 51)), encoding="utf-8")
    return path


def test_read_file_numbers_lines_and_pages(settings: Settings, root) -> None:
    text, _ = run_tool(settings, "read_file", {"path": "uploads/notes.md", "offset": 10, "limit": 3})
    assert text.splitlines()[0] == "uploads/notes.md: lines 10-12 of 50. Continue with offset=13."
    assert text.splitlines()[1:] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    whole, _ = run_tool(settings, "read_file", {"path": "uploads/notes.md"})
    assert "lines 1-50 of 50" in whole and "Continue" not in whole


def test_read_file_decodes_gb18030(settings: Settings, root) -> None:
    (root / "uploads" / "gbk.txt").write_bytes("营收增长百分之十二".encode("gb18030"))
    text, _ = run_tool(settings, "read_file", {"path": "uploads/gbk.txt"})
    assert "营收增长百分之十二" in text


def test_read_file_refuses_binary_and_explains_missing(settings: Settings, root) -> None:
    (root / "uploads" / "blob.dat").write_bytes(b"\x00\x01\x02" * 100)
    text, _ = run_tool(settings, "read_file", {"path": "uploads/blob.dat"})
    assert text.startswith("Error:") and "binary" in text
    text, _ = run_tool(settings, "read_file", {"path": "uploads/nope.md"})
    assert "does not exist" in text and "list_workspace_files" in text
    text, _ = run_tool(settings, "read_file", {"path": "uploads"})
    assert "is a folder" in text


def test_big_text_is_previewed_not_dumped(settings: Settings, root) -> None:
    big = "".join(f"row {i} " + "x" * 90 + "\n" for i in range(5000))  # ~500 KB
    (root / "uploads" / "big.csv").write_text(big, encoding="utf-8")
    text, _ = run_tool(settings, "read_file", {"path": "uploads/big.csv"})
    assert len(text) < settings.documents.text_preview_chars + 60_000
    assert "of the first 50,000 characters" in text and "search_file" in text


def test_skills_are_readable_but_not_writable(settings: Settings, root) -> None:
    text, _ = run_tool(settings, "read_file", {"path": "skills/pdf/SKILL.md"})
    assert "name: pdf" in text
    text, _ = run_tool(settings, "write_file", {"path": "skills/pdf/SKILL.md", "content": "x"})
    assert "read-only" in text


@pytest.mark.parametrize(
    "path",
    [
        "uploads/new.md",
        "notes.md",
        "/etc/passwd",
        "../escape.md",
        "outputs/../../escape.md",
        "~/x.md",
        "C:/x.md",
    ],
)
def test_write_file_refuses_outside_outputs_and_temp(settings: Settings, root, path: str) -> None:
    text, _ = run_tool(settings, "write_file", {"path": path, "content": "x"})
    assert text.startswith("Error:")
    assert not (root.parent / "escape.md").exists()


def test_write_then_edit(settings: Settings, root) -> None:
    text, _ = run_tool(
        settings,
        "write_file",
        {"path": "outputs/report/summary.md", "content": "# 总结\nrevenue up\nrevenue up\n"},
    )
    assert text == "Wrote outputs/report/summary.md (31 bytes, 3 lines)."
    text, _ = run_tool(
        settings,
        "edit_file",
        {"path": "outputs/report/summary.md", "old_string": "revenue up", "new_string": "营收增长"},
    )
    assert "occurs 2 times" in text
    text, _ = run_tool(
        settings,
        "edit_file",
        {
            "path": "outputs/report/summary.md",
            "old_string": "revenue up",
            "new_string": "营收增长",
            "replace_all": True,
        },
    )
    assert text == "Edited outputs/report/summary.md: 2 replacements."
    assert (root / "outputs" / "report" / "summary.md").read_text(
        encoding="utf-8"
    ) == "# 总结\n营收增长\n营收增长\n"
    text, _ = run_tool(
        settings,
        "edit_file",
        {"path": "outputs/report/summary.md", "old_string": "missing", "new_string": "x"},
    )
    assert "not found" in text
    text, _ = run_tool(settings, "write_file", {"path": "outputs/report/summary.md", "content": "again"})
    assert text.startswith("Replaced")


def test_symlink_out_of_the_workspace_is_refused(settings: Settings, root, tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret", encoding="utf-8")
    os.symlink(secret, root / "uploads" / "link.txt")
    text, _ = run_tool(settings, "read_file", {"path": "uploads/link.txt"})
    assert "outside the workspace" in text and "top secret" not in text
    os.symlink(tmp_path, root / "outputs" / "door")
    text, _ = run_tool(settings, "write_file", {"path": "outputs/door/x.txt", "content": "x"})
    assert "outside the workspace" in text
    assert not (tmp_path / "x.txt").exists()


def test_list_and_find(settings: Settings, root) -> None:
    (root / "uploads" / "docs").mkdir()
    (root / "uploads" / "docs" / "a.pdf").write_bytes(b"%PDF-1.4")
    (root / "uploads" / ".hidden.pdf").write_bytes(b"x")
    text, _ = run_tool(settings, "list_workspace_files", {})
    assert (
        "uploads/" in text and "notes.md" in text and "skills/  (read-only" in text and ".hidden" not in text
    )
    text, _ = run_tool(settings, "find_files", {"pattern": "**/*.pdf"})
    assert text.splitlines() == ["uploads/docs/a.pdf  (8 bytes)"]
    text, _ = run_tool(settings, "find_files", {"pattern": "../*"})
    assert text.startswith("Error:")
    text, _ = run_tool(settings, "find_files", {"pattern": "*.xlsx", "path": "uploads"})
    assert text.startswith("No files match")


def test_todo_write_updates_state_and_rejects_two_in_progress(settings: Settings) -> None:
    items = [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]
    text, state = run_tool(settings, "todo_write", {"todos": items})
    assert "keep exactly one in_progress" in text and not state.get("todos")
    items = [{"content": "read", "status": "in_progress", "priority": "high"}, {"content": "write"}]
    text, state = run_tool(settings, "todo_write", {"todos": items})
    assert text == "Todo list saved: 2 items, 0 completed."
    assert state["todos"] == [
        {"content": "read", "status": "in_progress", "priority": "high"},
        {"content": "write", "status": "pending", "priority": "medium"},
    ]
    text, _ = run_tool(settings, "todo_read", {}, state={"todos": state["todos"]})
    assert text == "1. [in_progress] (high) read\n2. [pending] (medium) write"


def test_read_file_previews_documents_and_explains_unreadable_ones(settings: Settings, root) -> None:
    import docx
    import pypdfium2

    document = docx.Document()
    document.add_heading("季度报告", level=1)
    document.add_paragraph("营收增长 12%，主要来自企业客户。")
    document.save(root / "uploads" / "report.docx")
    text, _ = run_tool(settings, "read_file", {"path": "uploads/report.docx"})
    assert text.startswith("uploads/report.docx (preview; search_file")
    assert "营收增长 12%" in text

    blank = pypdfium2.PdfDocument.new()
    blank.new_page(200, 200)
    blank.save(str(root / "uploads" / "scan.pdf"))
    text, _ = run_tool(settings, "read_file", {"path": "uploads/scan.pdf"})
    assert text.startswith("Error: scan.pdf has no text layer (scanned?)")


def test_an_unencodable_character_fails_the_write_and_the_file_survives(settings: Settings, root) -> None:
    """A lone surrogate truncated the file to 0 bytes; now nothing is touched."""
    target = root / "outputs" / "report.md"
    target.write_text("# Report\nthe original\n", encoding="utf-8")
    text, _ = run_tool(settings, "write_file", {"path": "outputs/report.md", "content": "new \ud800 text"})
    assert text.startswith("Error:") and "cannot be written as UTF-8" in text
    edited, _ = run_tool(
        settings, "edit_file", {"path": "outputs/report.md", "old_string": "original", "new_string": "\udfff"}
    )
    assert edited.startswith("Error:")
    assert target.read_text(encoding="utf-8") == "# Report\nthe original\n"
    assert [p.name for p in target.parent.iterdir()] == ["report.md"]  # no temporary file left


@pytest.mark.parametrize(
    "name",
    ["报告（2024）.txt", unicodedata.normalize("NFD", "café.txt"), "ｆｕｌｌ　ｗｉｄｔｈ.txt"],
)
def test_files_are_opened_by_the_name_they_have(settings: Settings, root, name: str) -> None:
    (root / "uploads" / name).write_text("営業 figures\n", encoding="utf-8")
    listed, _ = run_tool(settings, "list_workspace_files", {"path": "uploads"})
    assert name in listed
    text, _ = run_tool(settings, "read_file", {"path": f"uploads/{name}"})
    assert "営業 figures" in text, text
    composed = unicodedata.normalize("NFKC", name)  # as a model may write it back
    again, _ = run_tool(settings, "read_file", {"path": f"uploads/{composed}"})
    assert "営業 figures" in again, again


@pytest.mark.parametrize(
    ("encoding", "text"),
    [
        ("utf-16", "Quarterly revenue 营收增长 12%\n"),  # with a byte-order mark
        ("utf-16-le", "Quarterly revenue grew twelve percent this year.\n" * 3),
        ("big5", "第三季度營收同比增長百分之十二，主要來自企業客戶，客戶滿意度提升。\n" * 3),
        ("shift_jis", "第3四半期の売上高は前年同期比12%増加しました。主に企業顧客によるものです。\n" * 3),
        ("gb18030", "第三季度营收同比增长百分之十二，主要来自企业客户。\n"),
    ],
)
def test_text_in_other_encodings_reads_as_written(settings: Settings, root, encoding: str, text: str) -> None:
    (root / "uploads" / "notes.txt").write_bytes(text.encode(encoding))
    shown, _ = run_tool(settings, "read_file", {"path": "uploads/notes.txt"})
    assert text.splitlines()[0].lstrip("\ufeff") in shown, shown


def test_a_dangling_link_does_not_break_the_listing(settings: Settings, root) -> None:
    (root / "temp" / "gone").symlink_to(root / "temp" / "deleted.txt")
    (root / "temp" / "kept.txt").write_text("x", encoding="utf-8")
    listed, _ = run_tool(settings, "list_workspace_files", {"path": "temp"})
    assert "gone  (a broken link)" in listed and "kept.txt  (1 bytes)" in listed


def test_a_folder_swapped_for_a_link_between_check_and_write_cannot_redirect_it(
    settings: Settings, root, tmp_path
) -> None:
    """The race of issue 11: resolve a path, then a folder on it becomes a symlink to
    outside before the write. The write refuses; nothing appears outside."""
    from generalAgent.tools.workspace import Workspace, WorkspaceError

    workspace = Workspace(root)
    real = workspace.resolve("outputs/drafts/plan.md", for_writing=True)
    real.parent.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    real.parent.rmdir()
    real.parent.symlink_to(outside, target_is_directory=True)
    with pytest.raises((WorkspaceError, OSError)):
        workspace.write_text(real, "planted")
    assert list(outside.iterdir()) == []
