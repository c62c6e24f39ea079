"""XLSX sheets from real files: rows grouped under a repeated header, within the chunk size."""

from __future__ import annotations

from pathlib import Path

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import extract_document
from generalAgent.documents.sheets import group_rows
from tests.support.documents import (
    make_xlsx,
)


def test_xlsx_sheets_repeat_the_header_in_every_group(tmp_path: Path, settings: Settings):
    rows = [["Name", "Score"]] + [[f"person{i}", i] for i in range(45)]
    path = make_xlsx(tmp_path / "scores.xlsx", {"Scores": rows, "空表": [["only header"]]})
    document = extract_document(path, settings.documents)
    groups = [b for b in document.blocks if b.heading == "Scores"]
    assert len(groups) == 3  # 20 + 20 + 5 rows
    assert all(g.text.startswith("Name | Score\n") and g.whole for g in groups)
    assert all(g.page == 1 for g in groups)
    assert "person44 | 44" in groups[-1].text
    assert [b.page for b in document.blocks if b.heading == "空表"] == [2]


def test_group_rows_stays_within_the_chunk_size_and_numbers_its_rows(settings: Settings):
    rows = [(1, "h1 | h2")] + [(n, "x" * 150) for n in range(3, 13)]  # row 2 was empty
    groups = list(group_rows(rows, settings.documents))
    assert all(len(text) <= settings.documents.chunk_max_size for text, _, _ in groups)
    assert sum(text.count("x" * 150) for text, _, _ in groups) == 10
    assert groups[0][1] == 3 and groups[-1][2] == 12
    assert all(later[1] == earlier[2] + 1 for earlier, later in zip(groups, groups[1:], strict=False))
