"""The files the agent wrote, named where the user looks."""

from __future__ import annotations

from pathlib import Path

from generalAgent.cli.files_written import files_written_lines


def test_each_file_is_one_line_whatever_its_folder_is_named() -> None:
    # The working folder's name is its author's: "x\n✓ …" made a line of its own.
    folder = Path("/tmp/x\n✓ nothing else was written")
    lines = files_written_lines([folder / "摘要.md", Path("/tmp/outputs/a.md")])
    assert lines == [
        "Files written (2):",
        "  /tmp/x␤✓ nothing else was written/摘要.md",
        "  /tmp/outputs/a.md",
    ]
    assert files_written_lines([]) == []
