"""search_file driven through LangGraph's ToolNode, so the runtime (workspace) is injected."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from tests.support.documents import make_figure_pdf, make_image_pdf, make_pdf, make_scanned_pdf
from tests.support.search_file import run_search_file, upload


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    pages = [
        ["Chapter one introduces the product."],
        ["第二章：营收增长百分之二十，客户满意度提升。", "The baseline grew in 2024."],
        ["Chapter three closes the report."],
    ]
    return make_pdf(tmp_path / "report.pdf", pages)


def test_finds_passages_with_page_score_and_context(settings: Settings, pdf: Path):
    path = upload(settings, pdf)
    text = run_search_file(settings, file_path=path, query="营收增长")
    assert text.startswith(f"1 passage(s) in {path} (pdf, Chinese text, 3 chunks)")
    assert "[1] page 2 | chunk 1 | score" in text
    assert ">> 第二章：营收增长百分之二十" in text
    assert "[page 1] Chapter one" in text and "[page 3] Chapter three" in text  # context


def test_says_plainly_when_nothing_matches(settings: Settings, pdf: Path):
    text = run_search_file(settings, file_path=upload(settings, pdf), query="zebra")
    assert text.startswith("No passage in uploads/report.pdf")
    assert "Try other words" in text


def test_regex_mode(settings: Settings, pdf: Path):
    text = run_search_file(settings, file_path=upload(settings, pdf), query=r"grew in \d{4}", regex=True)
    assert ">> " in text and "2024" in text
    bad = run_search_file(settings, file_path=upload(settings, pdf), query="([", regex=True)
    assert bad.startswith("Error: Cannot search uploads/report.pdf: invalid regular expression")


@pytest.mark.parametrize(
    ("file_path", "expected"),
    [
        ("../../etc/passwd", "would leave the workspace"),
        ("/etc/passwd", "absolute paths are outside the workspace"),
        ("uploads/missing.pdf", "is not a file in the workspace"),
        ("", "Empty path"),
    ],
)
def test_paths_outside_or_missing(settings: Settings, file_path: str, expected: str):
    text = run_search_file(settings, file_path=file_path, query="x")
    assert text.startswith("Error:") and expected in text


def test_unreadable_document_is_explained(settings: Settings, tmp_path: Path):
    path = upload(settings, make_scanned_pdf(tmp_path / "scan.pdf"))
    text = run_search_file(settings, file_path=path, query="anything")
    assert text == (
        "Error: Cannot search uploads/scan.pdf: scan.pdf has no text layer (scanned?) "
        "and no text was recognised in it."
    )


def test_a_scanned_pdf_is_searchable_and_its_hits_say_ocr(settings: Settings, tmp_path: Path):
    # One word a line: the OCR model may drop the spaces between English words.
    path = upload(settings, make_image_pdf(tmp_path / "scan.pdf", ["Invoice", "4711", "Paid in March"]))
    text = run_search_file(settings, file_path=path, query="invoice 4711")
    assert "[1] page 1 | text read by OCR | chunk 0" in text
    assert "4711" in text


def test_a_hit_on_a_figure_page_says_to_view_the_page(settings: Settings, tmp_path: Path):
    path = upload(settings, make_figure_pdf(tmp_path / "report.pdf", "Figure 2: Revenue by region, 2024"))
    text = run_search_file(settings, file_path=path, query="revenue by region")
    assert "[1] page 2 | the page is mostly a figure: view it with view_page (page 2) | chunk" in text
    plain = run_search_file(settings, file_path=path, query="introduction customers")
    assert "[1] page 1 | chunk" in plain and "mostly a figure" not in plain.split("[2]")[0]


def test_empty_query(settings: Settings, pdf: Path):
    assert run_search_file(settings, file_path=upload(settings, pdf), query="  ").startswith(
        "Error: Empty query"
    )


def test_output_stays_within_the_content_budget(data_dir: Path, tmp_path: Path):
    settings = load_settings(
        env_file=None,
        paths={"data_dir": data_dir},
        documents={
            "chunk_max_size": 4_000,
            "chunk_overlap": 0,
            "max_chunk_content_size": 1_500,
            "max_result_content_size": 4_000,
        },
    )
    big = tmp_path / "big.md"
    big.write_text("\n\n".join(("needle " + "filler " * 560) for _ in range(8)), encoding="utf-8")
    text = run_search_file(settings, file_path=upload(settings, big), query="needle", max_results=50)
    assert "(at most 5 per search)" in text
    body = "\n".join(
        line
        for line in text.splitlines()
        if line.startswith((">> ", "   ")) and not line.startswith("   (cut:")
    )
    assert len(body) <= 4_000 + 200  # content budget plus the indentation of the rendering
    assert "cut:" in text and "get_knowledge_item" in text


def test_a_quote_is_verified_on_its_page(settings: Settings, pdf: Path):
    path = upload(settings, pdf)
    text = run_search_file(settings, file_path=path, query="The  baseline grew\nin 2024.", check_place="p. 2")
    assert text == "Verified: the quote occurs word for word on page 2 of uploads/report.pdf."
    chinese = run_search_file(
        settings, file_path=path, query="营收增长百分之二十，客户满意度", check_place="第2页"
    )
    assert chinese.startswith("Verified:")


def test_a_quote_on_another_page_is_pointed_there(settings: Settings, pdf: Path):
    text = run_search_file(
        settings, file_path=upload(settings, pdf), query="Chapter three closes the report", check_place="1"
    )
    assert text == (
        "Not on page 1 of uploads/report.pdf: the quote occurs on page 3 instead; cite that place."
    )


def test_an_invented_quote_is_refused(settings: Settings, pdf: Path):
    text = run_search_file(
        settings, file_path=upload(settings, pdf), query="Revenue fell by half in 2024", check_place="page 2"
    )
    assert text.startswith("Not found: the quote does not occur on page 2 of uploads/report.pdf")


@pytest.mark.parametrize(
    ("place", "expected"),
    [
        ("page 9", "there is no page 9 in this document; it has 1 to 3"),
        ("§ Pricing", "no page or section '§ Pricing' in this document"),
    ],
)
def test_a_place_that_does_not_exist_is_explained(settings: Settings, pdf: Path, place: str, expected: str):
    text = run_search_file(
        settings, file_path=upload(settings, pdf), query="The baseline grew", check_place=place
    )
    assert text.startswith("Error: Cannot check the quote in uploads/report.pdf:") and expected in text


@pytest.fixture
def english_manual(tmp_path: Path) -> Path:
    path = tmp_path / "manual.md"
    sections = [
        "# Logs\n\nThe journal keeps the messages of the system. Show the log since the last boot "
        "with journalctl -b; add --user for the services of the current user.",
        "# Editor\n\nChange the default editor with update-alternatives --config editor.",
        "# Time zone\n\nReconfigure the time zone of the system with dpkg-reconfigure tzdata.",
    ]
    path.write_text("\n\n".join(sections) + "\n", encoding="utf-8")
    return path


def test_a_chinese_query_that_misses_an_english_document_says_to_ask_in_english(
    settings: Settings, english_manual: Path
):
    path = upload(settings, english_manual)
    # Nothing in the manual is about penguins, in any language: the dictionary gloss
    # (penguin feather …) finds nothing either. ("上次启动以来的日志" is now found by it.)
    text = run_search_file(settings, file_path=path, query="企鹅羽毛的颜色")
    assert text.startswith(f"No passage in {path} (markdown, English text")
    assert "The document is in English and the query is not" in text
    assert "query as a list" in text


def test_a_list_of_phrasings_finds_what_the_english_one_finds(settings: Settings, english_manual: Path):
    path = upload(settings, english_manual)
    english = run_search_file(settings, file_path=path, query="log since the last boot")
    both = run_search_file(settings, file_path=path, query=["上次启动以来的日志", "log since the last boot"])
    assert "[1] § Logs" in english and "[1] § Logs" in both
    assert 'for "上次启动以来的日志" or "log since the last boot"' in both
    assert "Note: the document is in English" not in both  # one phrasing is in its language


def test_a_regex_search_takes_one_pattern(settings: Settings, english_manual: Path):
    path = upload(settings, english_manual)
    text = run_search_file(settings, file_path=path, query=["journal.*boot", "editor"], regex=True)
    assert "takes one pattern" in text


def test_the_model_reads_which_english_keywords_the_dictionary_searched(settings: Settings, tmp_path: Path):
    """A lone Chinese question over an English file is also searched in its dictionary gloss
    (search/query_translation.py), and the model is told the keywords, as it is told a
    rendering the search added; an English question gets no such line."""
    manual = tmp_path / "modules.md"
    manual.write_text(
        "# Kernel modules\n\nUse lsmod to list the kernel modules that are currently loaded.\n",
        encoding="utf-8",
    )
    path = upload(settings, manual)
    text = run_search_file(settings, file_path=path, query="怎么查看已加载的内核模块")
    assert "lsmod" in text
    said = [line for line in text.splitlines() if line.startswith("The query was also searched in English")]
    assert len(said) == 1, text
    assert "kernel" in said[0] and "module" in said[0]
    assert said[0].endswith(
        "(keywords from a Chinese-English dictionary, since the query was not in the documents' language)."
    )
    assert "also searched" not in run_search_file(settings, file_path=path, query="kernel modules")


def test_the_advice_to_ask_again_in_english_is_given_only_where_it_holds(settings: Settings, tmp_path: Path):
    """When the dictionary gloss found the passage, the model is not told that "only words
    the two share matched" (false: the gloss's keywords did) nor sent to search again
    unconditionally: it reads, after the gloss line, to send its own rendering if these
    passages do not answer. A Chinese question found by a shared word alone (no gloss: half
    its words are in the file) still gets the full advice."""
    manual = tmp_path / "modules.md"
    manual.write_text(
        "# Kernel modules\n\nUse lsmod to list the kernel modules that are currently loaded.\n",
        encoding="utf-8",
    )
    path = upload(settings, manual)
    glossed = run_search_file(settings, file_path=path, query="怎么查看已加载的内核模块").splitlines()
    gloss = next(
        n for n, line in enumerate(glossed) if line.startswith("The query was also searched in English")
    )
    assert not any("only words the two share" in line for line in glossed), glossed
    assert glossed[gloss + 1] == (
        "If these passages do not answer the question, search again with query as a list: "
        "the user's words and an English rendering of them."
    )

    shared = run_search_file(settings, file_path=path, query="lsmod 内核")
    assert "also searched in English" not in shared and "lsmod" in shared
    assert (
        "Note: the document is in English and the query is not, so only words the two share "
        "(names, commands, numbers) matched. Search again with query as a list: the user's words "
        "and an English rendering of them."
    ) in shared


def test_the_model_reads_which_chinese_keywords_the_dictionary_searched(settings: Settings, tmp_path: Path):
    """The other direction (search/english_gloss.py): a lone English question over a Chinese
    file is also searched in the Chinese words the file holds for its words, and the model
    is told them."""
    guide = tmp_path / "guide.md"
    guide.write_text(
        "# 安装\n\n在 Windows 上运行安装程序安装 TeX Live，需要的时间比较长。\n\n"
        "# 卸载\n\n在 Windows 上卸载 TeX Live 的方法：运行卸载批处理文件，然后删除剩下的目录。\n",
        encoding="utf-8",
    )
    path = upload(settings, guide)
    text = run_search_file(settings, file_path=path, query="how do I uninstall TeX Live on Windows")
    assert "卸载批处理文件" in text
    said = [line for line in text.splitlines() if line.startswith("The query was also searched in Chinese")]
    assert len(said) == 1 and "卸载" in said[0], text
    assert said[0].endswith(
        "(keywords from an English-Chinese dictionary, since the query was not in the documents' language)."
    )
