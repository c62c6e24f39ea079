"""DOCX and PPTX from real files: headings, paragraphs, tables, slides and their notes."""

from __future__ import annotations

from pathlib import Path

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import extract_document
from tests.support.documents import (
    make_docx,
    make_pptx,
)


def test_docx_headings_paragraphs_and_tables(tmp_path: Path, settings: Settings):
    path = make_docx(
        tmp_path / "plan.docx",
        "Quarterly plan",
        ["Revenue grew in every region.", "客户满意度调查已经完成。"],
        [["Region", "Revenue"], ["North", "120"], ["South", "95"]],
    )
    text = extract_document(path, settings.documents).text
    assert text.startswith("# Quarterly plan")
    assert "客户满意度调查已经完成。" in text
    assert "Region | Revenue\nNorth | 120\nSouth | 95" in text


def test_pptx_slides_with_titles_and_notes(tmp_path: Path, settings: Settings):
    path = make_pptx(
        tmp_path / "deck.pptx",
        [("Roadmap", "Ship search in May", "Mention the budget"), ("路线图", "五月发布", "")],
    )
    blocks = extract_document(path, settings.documents).blocks
    assert [(b.page, b.heading) for b in blocks] == [(1, "Roadmap"), (2, "路线图")]
    assert "Ship search in May" in blocks[0].text
    assert "Notes: Mention the budget" in blocks[0].text
