"""Search results as a person reads them: places, one snippet each, CLI hints, no dumps."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console

from generalAgent.cli.search_view import render_knowledge_hits, sheet_rows, snippet
from generalAgent.knowledge.items import KnowledgeItem
from generalAgent.knowledge.search import KnowledgeResult, KnowledgeSearch
from generalAgent.search.results import Passage, SearchResult


def shown(renderable) -> str:
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(renderable)
    return out.getvalue()


def test_a_snippet_is_one_line_around_the_words_and_clean_of_control_codes() -> None:
    text = "title page\n" + "filler " * 200 + "the rollback \x1b[2Kscript runs here " + "tail " * 200
    cut = snippet(text, ["rollback"])
    assert "rollback script" in cut and "\n" not in cut and "\x1b" not in cut
    assert len(cut) <= 242 and cut.startswith("…") and cut.endswith("…")


def test_knowledge_hits_show_a_snippet_per_item_and_a_command_to_read_more() -> None:
    long_title_page = "封面 " * 1000 + "回滚 脚本 在 十五 分钟 内 执行"
    page = Passage(
        chunk_id="c", chunk_index=0, text=long_title_page, start=0, end=0, page=12, place="page 12"
    )
    item = KnowledgeItem(
        title="手册.pdf",
        content="",
        domain="documents",
        category="pdf",
        id="65f48cb478514224839dcaa27b97ffdf",
    )
    found = replace(SearchResult.of(item.id, 1.0, (page,)), content=long_title_page)
    result = KnowledgeSearch("回滚 脚本", (KnowledgeResult(item, 30, found),))
    text = shown(render_knowledge_hits(result, "generalagent"))
    assert "手册.pdf" in text and "65f48cb47851" in text and "page 12" in text and "回滚" in text
    assert len(text) < 800  # one snippet, not the title pages
    assert "get_knowledge_item" not in text and "generalagent kb show ID" in text


def test_a_spreadsheet_passage_shows_its_matching_rows_one_per_line() -> None:
    text = "Region | Animal | Count\nnorth | seal | 10\nsouth | walrus | 40\neast | walrus | 90"
    assert sheet_rows(text, ["walrus"]) == ["south | walrus | 40", "east | walrus | 90"]
    assert sheet_rows(text, ["absent"], rows=2) == ["Region | Animal | Count", "north | seal | 10"]
