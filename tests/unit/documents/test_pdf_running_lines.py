"""Running heads, footers and page numbers as books and reports print them, left out of
the passages: heads that alternate between odd and even pages, "Page 3 of 8", "- 3 -",
"— 3 —", "3 / 8", "第 3 页 共 8 页", "第3页". (Pinned: all were already left out.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import extract_document
from tests.support.documents import make_pdf

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
PAGES = len(WORDS)

STYLES: dict[str, Callable[[int], tuple[list[str], list[str]]]] = {
    "odd and even heads, dashes": lambda n: (
        ["Annual Report 2024" if n % 2 else "Chapter 2  Rivers and Mills"],
        [f"- {n} -"],
    ),
    "page of pages": lambda n: (["Annual Report 2024"], [f"Page {n} of {PAGES}"]),
    "Chinese heads, 第 n 页 共 m 页": lambda n: (
        ["二〇二四年年度报告" if n % 2 else "第二章 河流与磨坊"],
        [f"第 {n} 页 共 {PAGES} 页"],
    ),
    "第n页": lambda n: (["年度报告"], [f"第{n}页"]),
    "number beside the head, sides alternating": lambda n: (
        [f"{n}    Annual Report 2024" if n % 2 == 0 else f"Chapter 2 Rivers    {n}"],
        [],
    ),
    "n / m": lambda n: ([], [f"{n} / {PAGES}"]),
    "em dashes": lambda n: ([], [f"— {n} —"]),
}


@pytest.mark.parametrize("style", list(STYLES))
def test_running_lines_are_left_out(style: str, tmp_path: Path, settings: Settings):
    pages = []
    for n, word in enumerate(WORDS, start=1):
        head, foot = STYLES[style](n)
        body = [
            f"The river {word} runs past the mill of {word}.",
            f"正文说明{'甲乙丙丁戊己庚辛'[n - 1]}处的河流。",
        ]
        pages.append([*head, *body, *[""] * 30, *foot])
    blocks = extract_document(make_pdf(tmp_path / "report.pdf", pages), settings.documents).blocks
    kept = [line for block in blocks for line in block.text.split("\n") if line.strip()]
    assert len(kept) == PAGES
    assert all(line.startswith("The river ") and line.endswith("处的河流。") for line in kept), kept
