"""English -> Chinese dictionary query translation (search/english_gloss.py) on the real
CC-CEDICT read backwards and real jieba, and its place in the search (search/lookup.py
and the PostgreSQL store, through the `store` fixture): a lone English question over
Chinese documents also searches the Chinese words the documents use, down-weighted; an
English or a mixed scope is searched as before."""

from __future__ import annotations

import pytest

from generalAgent.search.english_gloss import (
    MAX_CANDIDATES,
    MAX_GLOSS_WORDS,
    MAX_QUESTION_WORDS,
    base_forms,
    chinese_gloss,
    may_gloss_in_chinese,
    reverse_dictionary,
)
from generalAgent.search.lookup import LookupNotes
from generalAgent.search.query import MAX_QUERY_CHARS
from generalAgent.search.segmentation import CJK_RUN
from generalAgent.search.store import SearchStore
from tests.support.search_store import found, put


def test_the_reverse_table_gives_the_chinese_words_of_an_english_word_and_its_forms() -> None:
    table = reverse_dictionary()
    assert table is not None
    assert reverse_dictionary() is table  # built once per process
    assert "卸载" in table.chinese_for("uninstall")
    assert "模块" in table.chinese_for("modules")  # the plural looked up by its base form
    assert "安装" in table.chinese_for("installed")
    assert "下载" in table.chinese_for("download")
    assert table.chinese_for("xelatex") == ()  # a command name is no word of the dictionary
    assert base_forms("stopped")[:1] == ["stopped"] and "stop" in base_forms("stopped")


def test_only_the_chinese_words_the_documents_hold_are_kept() -> None:
    """The dictionary offers several words for "download" and "slow"; the documents decide."""
    held = {"下载", "缓慢", "镜像"}
    keywords = chinese_gloss("the download is too slow", lambda words: [w in held for w in words])
    assert set(keywords.split()) == {"下载", "缓慢"}
    assert chinese_gloss("the download is too slow", lambda words: [False] * len(words)) == ""
    assert chinese_gloss("xelatex fc-cache tlmgr", lambda words: [True] * len(words)) == ""


def test_a_huge_or_hostile_query_stays_bounded() -> None:
    asked: list[list[str]] = []

    def present(words: list[str]) -> list[bool]:
        asked.append(list(words))
        return [True] * len(words)

    hostile = " ".join(["file install download window table page"] * 5_000) + ' "AND" NEAR( * ^'
    keywords = chinese_gloss(hostile, present)
    assert len(asked) <= MAX_QUESTION_WORDS and all(len(words) <= MAX_CANDIDATES for words in asked)
    assert 0 < len(keywords.split()) <= MAX_GLOSS_WORDS
    assert all(CJK_RUN.fullmatch(word) for word in keywords.split())
    assert len(hostile) > MAX_QUERY_CHARS


def test_only_a_lone_english_question_may_be_glossed_in_chinese() -> None:
    assert may_gloss_in_chinese("how do I uninstall TeX Live")
    assert may_gloss_in_chinese(["how do I uninstall TeX Live"])
    assert not may_gloss_in_chinese(["how do I uninstall TeX Live", "怎么卸载 TeX Live"])
    assert not may_gloss_in_chinese("怎么卸载 TeX Live")
    assert not may_gloss_in_chinese("1234 5678")


# A Chinese manual as users have them: Chinese prose quoting commands, paths and options.
CHINESE_MANUAL = [
    "第一章 安装：在 Windows 上运行 install-tl-windows.bat 安装 TeX Live，需要的时间比较长。",
    "在 Windows 上卸载 TeX Live 的方法：运行安装目录中的卸载批处理文件，然后删除剩下的目录。",
    "下载速度太慢的时候，可以把镜像换成国内的镜像站点，例如 mirrors.tuna.tsinghua.edu.cn。",
    "用 tlmgr update --all 升级已经安装的宏包，用 texdoc 打开宏包的说明文档。",
]


def test_an_english_question_finds_the_chinese_passage_through_its_gloss(store: SearchStore) -> None:
    """ "uninstall" is no word of the manual: before, its own words ("TeX", "Live",
    "Windows") ranked the installation passage first and the answer second."""
    rowids = put(store, "manual", CHINESE_MANUAL)
    put(store, "other", ["邮件的本地队列目录保存着还没有投递的邮件。"])
    notes = LookupNotes()
    hits = store.find_chunks(["how do I uninstall TeX Live on Windows"], 5, notes=notes)
    assert hits and hits[0].rowid == rowids[1]
    assert "卸载" in notes.glossed.split() and all(CJK_RUN.fullmatch(w) for w in notes.glossed.split())
    assert store.find_chunks("download speed is too slow", 5)[0].rowid == rowids[2]
    assert store.find_chunks("how to open the documentation of a package", 5)[0].rowid == rowids[3]


def test_with_vectors_command_names_no_longer_push_the_vectors_answer_out(store: SearchStore) -> None:
    """Six passages quote "ls", "file" and "system" in code: an English question sharing
    those words with them kept their keyword places seated in the top five (its words
    looked "there") and the passage the vectors found first fell out."""
    quoted = [f"第 {n} 节的例子：ls -l /etc/file 查看 system 配置，输出如下所示。" for n in range(6)]
    rowids = put(store, "manual", [*quoted, "用 chmod 修改访问权限，用 chown 修改所有者。"])
    answer = rowids[-1]
    nearer = [[(answer, 0.9), (rowids[0], 0.5)]]
    hits = store.find_chunks(["ls file system access rights"], 5, semantic=nearer)
    assert answer in [hit.rowid for hit in hits[:5]]


def test_an_english_or_mixed_scope_is_searched_as_before(store: SearchStore) -> None:
    """English documents, or half English and half Chinese: the English question is searched
    in its own words only (no Chinese passage pulled in by a gloss, nothing said)."""
    put(store, "en", ["To uninstall TeX Live on Windows, run the uninstaller batch file."] * 2)
    notes = LookupNotes()
    assert store.find_chunks(["how do I uninstall TeX Live on Windows"], 5, notes=notes)
    assert notes.glossed == ""
    put(store, "zh", ["在 Windows 上卸载 TeX Live 的方法：运行卸载批处理文件。", "下载的镜像站点很慢。"])
    mixed = LookupNotes()
    assert found(store, ["how do I uninstall TeX Live on Windows"]) == ["en", "zh"]
    store.find_chunks(["how do I uninstall TeX Live on Windows"], 5, notes=mixed)
    assert mixed.glossed == ""


@pytest.mark.parametrize("question", ["how do I uninstall TeX Live on Windows", "uninstall " * 3_000])
def test_with_vectors_the_chinese_gloss_joins_the_keyword_side(store: SearchStore, question: str) -> None:
    rowids = put(store, "manual", CHINESE_MANUAL)
    nearer = [[(rowids[0], 0.9), (rowids[3], 0.8)]]
    hits = store.find_chunks(question, 5, semantic=nearer)
    assert rowids[1] in [hit.rowid for hit in hits[:5]]


def test_the_gloss_names_no_lone_character(store: SearchStore) -> None:
    """The manual says 宏包 ("package" in TeX's sense), which jieba cuts into 宏 and 包: the
    dictionary's 包 for "package" was found there and named to the user among the keywords
    searched, a character on nearly every Chinese page."""
    rowids = put(store, "manual", CHINESE_MANUAL)
    notes = LookupNotes()
    hits = store.find_chunks(["how to open the documentation of a package"], 5, notes=notes)
    assert hits[0].rowid == rowids[3]
    assert "文档" in notes.glossed.split()
    assert all(len(word) > 1 for word in notes.glossed.split()), notes.glossed
