"""#path references and copying files into the session's uploads/."""

from __future__ import annotations

from pathlib import Path

from generalAgent.cli.chat_input import MB, SIZE_LIMITS, find_references, upload
from generalAgent.config.settings import Settings
from generalAgent.tools.environment import ToolEnvironment


def test_references_are_found_and_headings_are_not() -> None:
    text = '## Title\n# Heading\nsummarise #docs/q3.pdf, #"annual report.docx" and #data/*.xlsx. Issue #12'
    assert find_references(text) == ["docs/q3.pdf", "annual report.docx", "data/*.xlsx", "12"]
    assert find_references("读一下 #报告.pdf。") == ["报告.pdf"]
    assert find_references("no refs here # not one") == []


def test_upload_copies_files_folders_and_globs(settings: Settings, tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "docs").mkdir(parents=True)
    (source / "docs" / "a.md").write_text("# a", encoding="utf-8")
    (source / "docs" / "b.txt").write_text("b", encoding="utf-8")
    (source / "q3.csv").write_text("x,y\n1,2\n", encoding="utf-8")
    workspace = ToolEnvironment(settings=settings).workspace_for("s1")
    report = upload(["docs", "*.csv", "missing.pdf", "12"], workspace, cwd=source)
    assert [f["path"] for f in report.files] == ["uploads/a.md", "uploads/b.txt", "uploads/q3.csv"]
    assert report.files[0]["type"] == "markdown" and report.files[2]["size"] == 8
    assert report.problems == ["#missing.pdf: no such file or folder"]
    assert (workspace.root / "uploads" / "q3.csv").read_text(encoding="utf-8") == "x,y\n1,2\n"


def test_same_name_different_content_gets_a_new_name(settings: Settings, tmp_path: Path) -> None:
    workspace = ToolEnvironment(settings=settings).workspace_for("s1")
    first = tmp_path / "one" / "r.txt"
    second = tmp_path / "two" / "r.txt"
    first.parent.mkdir()
    second.parent.mkdir()
    first.write_text("v1", encoding="utf-8")
    second.write_text("v2", encoding="utf-8")
    assert upload([str(first)], workspace, tmp_path).files[0]["path"] == "uploads/r.txt"
    assert upload([str(first)], workspace, tmp_path).files[0]["path"] == "uploads/r.txt"
    assert upload([str(second)], workspace, tmp_path).files[0]["path"] == "uploads/r (2).txt"


def test_size_limit_per_type(settings: Settings, tmp_path: Path) -> None:
    big = tmp_path / "huge.log"
    with big.open("wb") as handle:
        handle.truncate(SIZE_LIMITS["text"] + 1)
    workspace = ToolEnvironment(settings=settings).workspace_for("s1")
    report = upload([str(big)], workspace, tmp_path)
    assert report.files == []
    assert report.problems == [
        f"huge.log: {(SIZE_LIMITS['text'] + 1) / MB:.1f} MB is over the 20 MB limit for text files"
    ]


def test_pdf_pages_are_counted(settings: Settings, tmp_path: Path) -> None:
    import pypdfium2

    pdf = pypdfium2.PdfDocument.new()
    for _ in range(3):
        pdf.new_page(200, 200)
    path = tmp_path / "three.pdf"
    pdf.save(str(path))
    workspace = ToolEnvironment(settings=settings).workspace_for("s1")
    assert upload([str(path)], workspace, tmp_path).files[0]["pages"] == 3


def test_an_attachment_is_described_with_a_human_size_and_its_pages() -> None:
    from generalAgent.display import describe_file

    pdf = {"path": "uploads/2025-Q3.pdf", "type": "pdf", "size": 2_411_725, "pages": 48}
    assert describe_file(pdf) == "uploads/2025-Q3.pdf (pdf, 2.3 MB, 48 pages)"
    deck = {"path": "uploads/plan.pptx", "type": "pptx", "size": 900, "pages": 1}
    assert describe_file(deck) == "uploads/plan.pptx (pptx, 900 B, 1 slide)"
