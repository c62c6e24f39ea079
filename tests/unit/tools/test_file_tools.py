"""read_file, write_file, edit_file, list_workspace_files, find_files inside the workspace."""

from __future__ import annotations

import os

import pytest

from generalAgent.config.settings import Settings
from tests.support.tools import run_tool


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


@pytest.mark.parametrize("tool", ["read_file", "write_file"])
def test_a_path_with_a_lone_surrogate_is_refused_with_a_clear_error(
    settings: Settings, root, tool: str
) -> None:
    args = (
        {"path": "outputs/a\ud800.txt", "content": "x"}
        if tool == "write_file"
        else {"path": "uploads/a\ud800.txt"}
    )
    text, _ = run_tool(settings, tool, args)
    assert text.startswith(
        "Error: 'outputs/a\\ud800.txt'" if tool == "write_file" else "Error: 'uploads/a\\ud800.txt'"
    )
    assert "no file name can hold" in text and "UnicodeEncodeError" not in text
    assert not list((root / "outputs").iterdir())
