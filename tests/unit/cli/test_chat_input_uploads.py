"""#path references and copying files into the session's uploads/."""

from __future__ import annotations

from pathlib import Path

from generalAgent.agent.chat_input import (
    MB,
    SIZE_LIMITS,
    find_references,
    missing_reference,
    parse_mentions,
    split_paths,
    upload,
)
from generalAgent.config.settings import Settings
from generalAgent.tools.environment import ToolEnvironment


def refs(text: str, cwd: Path) -> list[tuple[str, str | None]]:
    return [(r.typed, r.path) for r in find_references(text, cwd)]


def test_references_are_found_and_headings_are_not(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "q3.pdf").write_bytes(b"%PDF")
    (tmp_path / "annual report.docx").write_bytes(b"PK")
    text = '## Title\n# Heading\nsummarise #docs/q3.pdf, #"annual report.docx" and #data/*.xlsx. Issue #12'
    assert refs(text, tmp_path) == [
        ("docs/q3.pdf", "docs/q3.pdf"),
        ("annual report.docx", "annual report.docx"),
        ("data/*.xlsx", "data/*.xlsx"),
    ]
    assert refs("no refs here # not one", tmp_path) == []


def test_references_inside_chinese_sentences(tmp_path: Path) -> None:
    (tmp_path / "参考手册.pdf").write_bytes(b"%PDF")
    (tmp_path / "报告（2024）.txt").write_text("x", encoding="utf-8")
    found = ("参考手册.pdf", "参考手册.pdf")
    assert refs("总结#参考手册.pdf的内容", tmp_path) == [found]  # no space before #
    assert refs("看看 #参考手册.pdf，里面讲了什么？", tmp_path) == [found]  # full-width comma ends it
    assert refs("读一下 #参考手册.pdf。", tmp_path) == [found]
    assert refs("打开#报告（2024）.txt看看", tmp_path) == [("报告（2024）.txt", "报告（2024）.txt")]


def test_text_that_names_nothing_is_an_error_only_when_meant_as_a_path(tmp_path: Path) -> None:
    assert refs("看看 #手册.pdf，里面讲了什么？", tmp_path) == [("手册.pdf", None)]
    assert refs("read #docs/missing.md please", tmp_path) == [("docs/missing.md", None)]
    for text in ("C# and F#", "issue#12 and #123", "#重要 事项", "see https://x.org/a#b.c", "a@b.c#d.e"):
        assert refs(text, tmp_path) == [], text


def test_upload_copies_files_folders_and_globs(settings: Settings, tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "docs").mkdir(parents=True)
    (source / "docs" / "a.md").write_text("# a", encoding="utf-8")
    (source / "docs" / "b.txt").write_text("b", encoding="utf-8")
    (source / "q3.csv").write_text("x,y\n1,2\n", encoding="utf-8")
    workspace = ToolEnvironment(settings=settings).workspace_for("s1")
    report = upload(["docs", "*.csv", "missing.pdf"], workspace, cwd=source)
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


def test_image_paths_pasted_without_hash_are_found(tmp_path: Path) -> None:
    from generalAgent.agent.chat_input import find_image_paths

    (tmp_path / "shot one.png").write_bytes(b"png")
    (tmp_path / "a.jpg").write_bytes(b"jpg")
    (tmp_path / "notes.txt").write_text("text", encoding="utf-8")
    text = (
        f"看这个 '{tmp_path}/shot one.png' 和 {tmp_path}/a.jpg，还有 {tmp_path}/shot\\ one.png "
        f"{tmp_path}/notes.txt {tmp_path}/missing.png #{tmp_path}/a.jpg"
    )
    assert find_image_paths(text, tmp_path) == [f"{tmp_path}/shot one.png", f"{tmp_path}/a.jpg"]
    assert find_image_paths("see ./a.jpg", tmp_path) == ["./a.jpg"]


def test_a_reference_never_falls_back_to_a_parent_or_a_shorter_name(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "季度报告.docx").write_bytes(b"PK")
    (tmp_path / "report.pdf").write_bytes(b"%PDF")
    assert refs("总结 #docs/季度报告2.docx", tmp_path) == [("docs/季度报告2.docx", None)]
    assert refs("#/nonexist.pdf", tmp_path) == [("/nonexist.pdf", None)]
    assert refs("#report.pdfx", tmp_path) == [("report.pdfx", None)]
    assert refs("read #report.pdf.", tmp_path) == [("report.pdf", "report.pdf")]
    assert missing_reference("docs/季度报告2.docx", tmp_path) == (
        "#docs/季度报告2.docx: no such file or folder (did you mean #docs/季度报告.docx?)"
    )
    assert missing_reference("doc/季度报告.docx", tmp_path).endswith("(did you mean #docs/季度报告.docx?)")
    assert missing_reference("完全不同.txt", tmp_path) == "#完全不同.txt: no such file or folder"


def test_escaped_quoted_full_width_and_spaced_names(tmp_path: Path) -> None:
    (tmp_path / "my report.pdf").write_bytes(b"%PDF")
    (tmp_path / "销售数据 2025.xlsx").write_bytes(b"PK")
    assert refs("看 #my\\ report.pdf 吧", tmp_path) == [("my\\ report.pdf", "my report.pdf")]
    assert refs(f"#{tmp_path}/my\\ report.pdf", tmp_path) == [
        (f"{tmp_path}/my\\ report.pdf", f"{tmp_path}/my report.pdf")
    ]
    assert refs("＃my\\ report.pdf", tmp_path) == [("my\\ report.pdf", "my report.pdf")]
    [spaced] = find_references("分析 #销售数据 2025.xlsx", tmp_path)
    assert (spaced.path, spaced.spaced) == (None, "销售数据 2025.xlsx")
    assert parse_mentions("＠run_bash_command 列出文件") == ["run_bash_command"]
    assert split_paths('"销售数据 2025.xlsx" my\\ report.pdf', tmp_path) == [
        "销售数据 2025.xlsx",
        "my report.pdf",
    ]
    assert split_paths("销售数据 2025.xlsx", tmp_path) == ["销售数据 2025.xlsx"]
    assert split_paths("a.pdf b.pdf", tmp_path) == ["a.pdf", "b.pdf"]


def test_full_width_punctuation_of_an_input_method_still_names_the_file(tmp_path: Path) -> None:
    # A Chinese input method in full-width mode types `．` and `／`: the reference was
    # dropped without a word, and the turn went out with nothing attached.
    (tmp_path / "季度报告.pdf").write_bytes(b"%PDF")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "q3.pdf").write_bytes(b"%PDF")
    (tmp_path / "报告（2024）.txt").write_text("x", encoding="utf-8")
    assert refs("总结#季度报告．pdf的营收部分", tmp_path) == [("季度报告．pdf", "季度报告.pdf")]
    assert refs("看 #docs／q3．pdf，谢谢", tmp_path) == [("docs／q3．pdf", "docs/q3.pdf")]
    assert refs('#"季度报告．pdf"', tmp_path) == [("季度报告．pdf", "季度报告.pdf")]
    # a name that exists with full-width characters is taken as it is
    assert refs("#报告（2024）.txt", tmp_path) == [("报告（2024）.txt", "报告（2024）.txt")]
    # one that names nothing either way is an error worth showing, with the close name
    assert refs("#季度报表．pdf", tmp_path) == [("季度报表．pdf", None)]
    assert "#季度报告.pdf" in missing_reference("季度报表．pdf", tmp_path)
    # /upload takes them the same way
    assert split_paths("季度报告．pdf docs／q3.pdf", tmp_path) == ["季度报告.pdf", "docs/q3.pdf"]
    assert split_paths("季度报表．pdf", tmp_path) == ["季度报表．pdf"]  # said missing, with the close name


def test_an_attachment_line_counts_pages_in_the_language_of_the_ui() -> None:
    # The 📎 line said "(pdf, 10.0 KB, 15 pages)" in a Chinese UI.
    from generalAgent.display import describe_file
    from generalAgent.i18n import ngettext, use_language

    pdf = {"path": "uploads/季度报告.pdf", "type": "pdf", "size": 10240, "pages": 15}
    book = {"path": "uploads/营收.xlsx", "type": "xlsx", "size": 900, "pages": 1}
    use_language("zh")
    try:
        assert describe_file(pdf, ngettext) == "uploads/季度报告.pdf (pdf, 10.0 KB, 15 页)"
        assert describe_file(book, ngettext) == "uploads/营收.xlsx (xlsx, 900 B, 1 个工作表)"
        assert describe_file(pdf) == "uploads/季度报告.pdf (pdf, 10.0 KB, 15 pages)"  # the model's
    finally:
        use_language("en")
