"""The docx-report skill: Markdown or JSON in, a .docx under outputs/ out (read back)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import docx
import pytest
from docx.oxml.ns import qn
from PIL import Image

from tests.unit.skills.conftest import SKILLS_DIR, RunScript

MAKE_REPORT = "skills/docx-report/scripts/make_report.py"

REPORT_MD = """\
---
title: 2024 年度报告
author: 财务部
---

# 概述

本年度收入**增长 12%**，主要来自
北区和南区。See the [dashboard](https://example.com/board) for *details*.

## Highlights

- 收入增长
- Costs down
  - salaries flat
- New `ERP` system

1. First
2. Second
   1. sub a

Later:

3. three
4. four

| 地区 | Q1 | Q2 |
|:---|---:|:---:|
| 北区 | 10 | 12 |
| 南区 | 7 | 9 |

```
print("你好")
```
"""


def load_model() -> ModuleType:
    path = SKILLS_DIR / "docx-report" / "scripts" / "_report_model.py"
    spec = importlib.util.spec_from_file_location("report_model_under_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def make(run_script: RunScript, workspace: Path, text: str, *args: str, name: str = "r.md"):
    (workspace / "temp" / name).write_text(text, encoding="utf-8")
    return run_script(MAKE_REPORT, f"temp/{name}", "--output", "outputs/report.docx", *args)


def open_report(workspace: Path) -> docx.document.Document:
    return docx.Document(str(workspace / "outputs" / "report.docx"))


def styled(document, style: str) -> list[str]:
    return [p.text for p in document.paragraphs if p.style.name == style]


def num_properties(paragraph) -> tuple[int, int]:
    numbering = paragraph._p.pPr.find(qn("w:numPr"))
    return (
        int(numbering.find(qn("w:numId")).get(qn("w:val"))),
        int(numbering.find(qn("w:ilvl")).get(qn("w:val"))),
    )


@pytest.mark.smoke
def test_markdown_becomes_headings_paragraphs_and_a_table(run_script: RunScript, workspace: Path):
    result = make(run_script, workspace, REPORT_MD)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Wrote outputs/report.docx:")
    assert "1 table" in result.stdout
    document = open_report(workspace)
    assert styled(document, "Title") == ["2024 年度报告"]
    assert styled(document, "Heading 1") == ["概述"]
    assert styled(document, "Heading 2") == ["Highlights"]
    body = next(p for p in document.paragraphs if p.text.startswith("本年度"))
    # Soft-wrapped Chinese lines join without a space; Latin words keep theirs.
    assert body.text == "本年度收入增长 12%，主要来自北区和南区。See the dashboard for details."
    assert [r.text for r in body.runs if r.bold] == ["增长 12%"]
    assert [r.text for r in body.runs if r.italic] == ["details"]
    table = document.tables[0]
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["地区", "Q1", "Q2"],
        ["北区", "10", "12"],
        ["南区", "7", "9"],
    ]
    assert all(run.bold for run in table.rows[0].cells[0].paragraphs[0].runs)
    assert table.rows[1].cells[1].paragraphs[0].alignment == 2  # right, from ---:
    assert table.rows[0]._tr.trPr.find(qn("w:tblHeader")) is not None


def test_links_become_real_hyperlinks(run_script: RunScript, workspace: Path):
    make(run_script, workspace, REPORT_MD)
    document = open_report(workspace)
    targets = [rel.target_ref for rel in document.part.rels.values() if rel.is_external]
    assert "https://example.com/board" in targets
    assert document.element.body.find(".//" + qn("w:hyperlink")) is not None


def test_chinese_text_gets_an_east_asian_font_everywhere(run_script: RunScript, workspace: Path):
    make(run_script, workspace, REPORT_MD, "--cjk-font", "SimSun", "--font", "Arial")
    styles = open_report(workspace).styles.element
    defaults = styles.find(qn("w:docDefaults")).find(".//" + qn("w:rFonts"))
    assert defaults.get(qn("w:eastAsia")) == "SimSun" and defaults.get(qn("w:ascii")) == "Arial"
    all_fonts = list(styles.iter(qn("w:rFonts")))
    # A theme reference would override the named font, so none may remain.
    assert all(font.get(qn("w:eastAsiaTheme")) is None for font in all_fonts)
    assert all(font.get(qn("w:asciiTheme")) is None for font in all_fonts)
    heading = open_report(workspace).styles["Heading 1"].element.rPr.rFonts
    assert heading.get(qn("w:eastAsia")) == "SimSun"
    language = styles.find(qn("w:docDefaults")).find(".//" + qn("w:lang"))
    assert language.get(qn("w:eastAsia")) == "zh-CN"


def test_code_is_monospaced_and_keeps_the_east_asian_font(run_script: RunScript, workspace: Path):
    make(run_script, workspace, REPORT_MD)
    document = open_report(workspace)
    code = next(p for p in document.paragraphs if p.style.name == "Source Code")
    assert code.text == 'print("你好")'
    fonts = document.styles["Source Code"].element.rPr.rFonts
    assert fonts.get(qn("w:ascii")) == "Consolas" and fonts.get(qn("w:eastAsia"))
    inline = next(p for p in document.paragraphs if "ERP" in p.text)
    erp = next(r for r in inline.runs if r.text == "ERP")
    assert erp.font.name == "Consolas"


def test_lists_are_numbered_and_each_numbered_list_restarts(run_script: RunScript, workspace: Path):
    make(run_script, workspace, REPORT_MD)
    document = open_report(workspace)
    items = {p.text: p for p in document.paragraphs if p.style.name == "List Paragraph"}
    bullet_id, level = num_properties(items["收入增长"])
    assert level == 0
    assert num_properties(items["salaries flat"]) == (bullet_id, 1)
    first_list, _ = num_properties(items["First"])
    assert num_properties(items["Second"]) == (first_list, 0)
    assert num_properties(items["sub a"])[1] == 1
    later_list, _ = num_properties(items["three"])
    assert later_list not in (first_list, bullet_id)
    numbering = document.part.numbering_part.element
    instance = next(n for n in numbering.findall(qn("w:num")) if n.get(qn("w:numId")) == str(later_list))
    start = instance.find(qn("w:lvlOverride")).find(qn("w:startOverride"))
    assert start.get(qn("w:val")) == "3"  # "3. three" starts the second list at 3


def test_title_page_and_table_of_contents(run_script: RunScript, workspace: Path):
    result = make(run_script, workspace, REPORT_MD, "--title-page", "--toc", "--date", "2024-12-31")
    assert result.returncode == 0, result.stderr
    assert "table of contents" in result.stdout and "note:" in result.stdout
    document = open_report(workspace)
    paragraphs = document.paragraphs
    assert paragraphs[0].style.name == "Title"
    assert paragraphs[1].text == "财务部 · 2024-12-31"
    assert styled(document, "TOC Heading") == ["目录"]
    instructions = [t.text for t in document.element.body.iter(qn("w:instrText"))]
    assert any('TOC \\o "1-3"' in text for text in instructions)
    settings = document.settings.element
    assert settings.find(qn("w:updateFields")).get(qn("w:val")) == "true"
    breaks = document.element.body.findall(".//" + qn("w:br"))
    assert sum(b.get(qn("w:type")) == "page" for b in breaks) >= 2  # after title page and TOC
    section = document.sections[0]
    assert section.different_first_page_header_footer
    footer_fields = [t.text for t in section.footer._element.iter(qn("w:instrText"))]
    assert footer_fields == [" PAGE "]


def test_title_page_without_a_title_uses_the_first_heading(run_script: RunScript, workspace: Path):
    result = make(run_script, workspace, "# Market study\n\nText.\n", "--title-page")
    assert result.returncode == 0, result.stderr
    document = open_report(workspace)
    assert styled(document, "Title") == ["Market study"]
    assert styled(document, "Heading 1") == []


def test_english_report_has_an_english_contents_heading_and_a4_pages(run_script: RunScript, workspace: Path):
    make(run_script, workspace, "# Scope\n\n## Method\n\nText.\n", "--toc")
    document = open_report(workspace)
    assert styled(document, "TOC Heading") == ["Contents"]
    section = document.sections[0]
    assert round(section.page_width.cm, 1) == 21.0 and round(section.page_height.cm, 1) == 29.7


def test_json_input_builds_the_same_kinds_of_blocks(run_script: RunScript, workspace: Path):
    spec = {
        "title": "Weekly status",
        "toc": False,
        "blocks": [
            {"type": "heading", "level": 1, "text": "Progress"},
            {"type": "paragraph", "text": "All **green** this week."},
            {"type": "bullets", "items": ["done", {"text": "open", "items": ["sub"]}]},
            {"type": "numbered", "items": ["one", "two"]},
            {"type": "table", "header": ["Task", "Owner"], "rows": [["API", "李雷"], ["UI"]]},
            {"type": "page_break"},
            {"type": "markdown", "text": "## Next\n\n- plan"},
        ],
    }
    result = make(run_script, workspace, json.dumps(spec, ensure_ascii=False), name="r.json")
    assert result.returncode == 0, result.stderr
    document = open_report(workspace)
    assert styled(document, "Title") == ["Weekly status"]
    assert styled(document, "Heading 1") == ["Progress"]
    assert styled(document, "Heading 2") == ["Next"]
    assert styled(document, "List Paragraph") == ["done", "open", "sub", "one", "two", "plan"]
    rows = [[c.text for c in row.cells] for row in document.tables[0].rows]
    assert rows == [["Task", "Owner"], ["API", "李雷"], ["UI", ""]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"blocks": [', "not valid JSON"),
        ('{"blocks": [{"type": "heading", "text": "A"}, {"type": "tabel"}]}', "blocks[1]"),
        (
            '{"blocks": [{"type": "table", "header": ["a"], "rows": [["1", "2"]]}]}',
            "blocks[0].rows[0] has 2 cells",
        ),
        ('{"title": "no blocks"}', '"blocks" list'),
    ],
)
def test_bad_json_is_one_line_naming_the_place(
    run_script: RunScript, workspace: Path, text: str, message: str
):
    result = make(run_script, workspace, text, name="bad.json")
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (workspace / "outputs" / "report.docx").exists()


@pytest.mark.parametrize(
    "target",
    ["temp/report.docx", "../report.docx", "/tmp/report.docx", "uploads/r.docx", "outputs"],
)
def test_reports_are_only_written_under_outputs(run_script: RunScript, workspace: Path, target: str):
    (workspace / "temp" / "r.md").write_text("# Hi\n", encoding="utf-8")
    result = run_script(MAKE_REPORT, "temp/r.md", "--output", target)
    assert result.returncode == 2
    assert "outputs/" in result.stderr and "Traceback" not in result.stderr
    assert not (workspace / "temp" / "report.docx").exists()
    assert not (workspace.parent / "report.docx").exists()


def test_output_name_must_end_in_docx(run_script: RunScript, workspace: Path):
    (workspace / "temp" / "r.md").write_text("# Hi\n", encoding="utf-8")
    result = run_script(MAKE_REPORT, "temp/r.md", "--output", "outputs/report.pdf")
    assert result.returncode == 2 and ".docx" in result.stderr


def test_missing_input_and_impossible_title_page(run_script: RunScript, workspace: Path):
    missing = run_script(MAKE_REPORT, "temp/none.md", "-o", "outputs/report.docx")
    assert missing.returncode == 1 and "no such file" in missing.stderr
    untitled = make(run_script, workspace, "Just text.\n", "--title-page")
    assert untitled.returncode == 2 and "--title" in untitled.stderr


def test_markdown_from_stdin(workspace: Path):
    result = subprocess.run(
        [sys.executable, MAKE_REPORT, "-", "-o", "outputs/report.docx"],
        cwd=workspace,
        input="# 标题\n\n正文。\n".encode(),
        capture_output=True,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert styled(open_report(workspace), "Heading 1") == ["标题"]


def test_a_gb18030_file_from_windows_is_read(run_script: RunScript, workspace: Path):
    (workspace / "temp" / "gbk.md").write_bytes("# 销售分析\n\n增长明显。\n".encode("gb18030"))
    result = run_script(MAKE_REPORT, "temp/gbk.md", "-o", "outputs/report.docx")
    assert result.returncode == 0, result.stderr
    assert styled(open_report(workspace), "Heading 1") == ["销售分析"]


def test_images_are_embedded_scaled_to_the_page_with_a_caption(run_script: RunScript, workspace: Path):
    Image.new("RGB", (3000, 1000), "navy").save(workspace / "outputs" / "chart.png")
    result = make(run_script, workspace, "# Chart\n\n![销售趋势](outputs/chart.png)\n")
    assert result.returncode == 0, result.stderr
    assert "1 image" in result.stdout
    document = open_report(workspace)
    (picture,) = document.inline_shapes
    section = document.sections[0]
    assert picture.width <= section.page_width - section.left_margin - section.right_margin
    assert abs(picture.width / picture.height - 3.0) < 0.01
    assert styled(document, "Caption") == ["销售趋势"]


def test_missing_or_outside_images_are_refused(run_script: RunScript, workspace: Path):
    missing = make(run_script, workspace, "![x](outputs/none.png)\n")
    assert missing.returncode == 1 and "no such file" in missing.stderr
    Image.new("RGB", (10, 10)).save(workspace.parent / "secret.png")
    outside = make(run_script, workspace, "![x](../secret.png)\n")
    assert outside.returncode == 1 and "outside the workspace" in outside.stderr


# -- the Markdown reader on its own ---------------------------------------------------


def test_inline_markup_rules():
    model = load_model()
    spans = model.parse_inline(r"a **b *c*** snake_case_name \*not\* ~~old~~ `x*y`")
    looks = [(s.text, s.bold, s.italic, s.strike, s.code) for s in spans]
    assert ("b ", True, False, False, False) in looks
    assert ("c", True, True, False, False) in looks
    assert any("snake_case_name *not* " in text for text, *_ in looks)
    assert ("old", False, False, True, False) in looks
    assert ("x*y", False, False, False, True) in looks


def test_line_joining_respects_chinese_and_hard_breaks():
    model = load_model()
    assert model.join_lines(["中文句子", "继续"]) == "中文句子继续"
    assert model.join_lines(["English", "words"]) == "English words"
    assert model.join_lines(["收入 grew", "快"]) == "收入 grew 快"
    assert model.join_lines(["line one  ", "line two"]) == "line one\nline two"


def test_bullets_then_numbers_are_two_lists():
    model = load_model()
    report = model.parse_markdown("- a\n- b\n1. one\n2. two\n")
    assert [len(b.items) for b in report.blocks] == [2, 2]
    assert [b.items[0].ordered for b in report.blocks] == [False, True]
