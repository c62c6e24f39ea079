"""Dictionary query translation (search/query_translation.py) on real jieba and the real
CC-CEDICT, and its place in the search (search/lookup.py, both backends): a lone Chinese
question over English documents also searches its English gloss, down-weighted; a question
in the documents' own language is searched as before."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from generalAgent.search.lookup import LookupNotes
from generalAgent.search.query import MAX_QUERY_CHARS
from generalAgent.search.query_translation import (
    CANDIDATES_PER_WORD,
    MAX_GLOSS_WORDS,
    gloss,
    gloss_candidates,
    load_dictionary,
    parse_dictionary,
)
from generalAgent.search.store import SearchStore
from tests.support.search_store import found, put


def test_the_dictionary_ships_with_the_install_and_is_loaded_once() -> None:
    table = load_dictionary()
    assert table is not None
    assert len(table.senses) > 100_000  # CC-CEDICT: ~122k entries, simplified and traditional forms
    assert load_dictionary() is table  # one immutable table per process, shared read-only


def test_every_sense_of_a_word_gives_a_candidate_and_function_words_none() -> None:
    candidates = gloss_candidates("怎么查看已加载的内核模块")
    words = [c for group in candidates for c in group]
    # "(computing) kernel" before "core (of a fruit)"; a sense of several words is a phrase,
    # then its words; every sense of 查看 ("look over", "examine", "check up", ...).
    assert {"kernel", "module", "load", "look over", "examine"} <= set(words)
    assert words.index("kernel") < words.index("core")
    assert all(len(group) <= CANDIDATES_PER_WORD for group in candidates)
    # 怎么 (how), 已 (already, to stop), 的: they say how the question is asked, not what.
    assert not {"how", "already", "stop", "then"} & set(words)
    # jieba cuts "控制台下" as "控制" "台下"; the dictionary's longest word "控制台" is asked too.
    assert "console" in [c for group in gloss_candidates("控制台下怎么更换键盘布局") for c in group]
    # Without a scope to ask, the first two candidates of each word, in the dictionary's order.
    assert gloss("字体") == "calligraphic style typeface"


def test_a_word_jieba_keeps_whole_is_looked_up_by_its_longest_entries() -> None:
    """jieba cuts "断开连接" as one word, which CC-CEDICT lacks; "断开" and "连接" are there."""
    table = load_dictionary()
    assert table is not None
    assert "断开连接" not in table.senses
    assert table.longest_words("断开连接") == ["断开", "连接"]
    assert [group[:2] for group in gloss_candidates("断开连接")] == [("break", "sever"), ("link", "join")]


def test_senses_that_name_nothing_give_no_word() -> None:
    table = parse_dictionary(
        [
            "# a comment\n",
            "測試 测试 [ce4 shi4] /to test (machinery etc)/CL:次[ci4]/variant of 測驗|测验[ce4 yan4]/\n",
            "王 王 [Wang2] /surname Wang/king/\n",
            "broken line without senses\n",
            "長 长 [chang2] /" + "x" * 3_000 + "/\n",  # over-long: skipped
        ]
    )
    assert table.translations("测试") == ["test"]
    assert table.translations("測試") == ["test"]  # the traditional form too
    assert table.translations("王") == ["king"]
    assert "长" not in table.senses
    assert gloss("王", table) == "king"


def test_a_query_without_chinese_is_not_glossed() -> None:
    assert gloss("list the loaded kernel modules") == ""
    assert gloss("   ") == ""


def test_a_huge_or_hostile_query_stays_bounded() -> None:
    hostile = "内核模块" * 200_000 + '" OR * NEAR( \x00' + "字体" * 100_000
    start = time.perf_counter()
    words = gloss(hostile).split()
    assert time.perf_counter() - start < 2.0
    assert 0 < len(words) <= MAX_GLOSS_WORDS
    assert all(w.isascii() and '"' not in w for w in words)
    assert len(hostile) > MAX_QUERY_CHARS


ENGLISH_MANUAL = [
    "Chapter 3. The system initialization and the boot loader configuration.",
    "lsmod shows which loadable kernel modules are currently loaded.",
    "fc-list lists the fonts installed on the system, with their styles.",
    "The umask sets the default permissions of newly created files.",
]


def test_a_chinese_question_finds_the_english_passage_through_its_gloss(store: SearchStore) -> None:
    """No word of the question is in the manual: keywords alone found nothing at all."""
    rowids = put(store, "manual", ENGLISH_MANUAL)
    put(store, "other", ["Mail delivery agents and the local spool directory."])
    hits = store.find_chunks("列出已加载的内核模块", 5)
    assert hits and hits[0].rowid == rowids[1]
    # As the search tools and the command line send it: a list of one phrasing.
    assert [hit.rowid for hit in store.find_chunks(["列出已加载的内核模块"], 5)][:1] == [rowids[1]]
    assert store.find_chunks("列出系统安装的字体", 5)[0].rowid == rowids[2]


def test_a_question_whose_words_are_there_is_searched_as_given(store: SearchStore) -> None:
    """Half its words found ("tar"): no gloss, so nothing only the gloss's words ("file
    away", for 归档) would find is added to what the user's own words find."""
    put(store, "tar", ["tar reference: options and examples"])
    put(store, "filing", ["File away the old reports and place them in the archive room."])
    assert found(store, "tar 归档") == ["tar"]


def test_the_gloss_never_outranks_the_users_own_words_where_they_match(store: SearchStore) -> None:
    """A third of the words found (the name 飞书 in an English page): the gloss is searched
    too (the passage on compressing files is found through "compress", "file away"), and
    weighs less than the user's own words: their passage stays first."""
    named = put(store, "named", ["Messages from 飞书 (Feishu) arrive in the team inbox."])
    compress = put(store, "compress", ["Compress files: compression with gzip; file away old logs."])
    hits = [hit.rowid for hit in store.find_chunks("飞书 归档 压缩", 10)]
    assert hits[:2] == [named[0], compress[0]]


def test_a_question_in_the_documents_language_is_searched_as_before(store: SearchStore) -> None:
    """Chinese documents, a Chinese question: the same places as the same question given as
    a list of two phrasings (never glossed: the model's own), whether its words are all there, written otherwise
    (the scan finds them) or mostly absent ("多栏" found, "布局", "指令" not): an English
    passage in the same index holding the gloss's words ("layout", "command") is not
    pulled in."""
    put(store, "zh", ["如何设置双倍或者更大的行间距？使用命令设为倍数。", "分栏排版：把文档排成多栏的方法。"])
    put(store, "en", ["Typesetting a document in several columns: the column layout command of multicol."])
    for question in ("怎么把行距设成两倍", "如何把文档排成多栏", "多栏布局用什么指令"):
        alone = [hit.rowid for hit in store.find_chunks(question, 10)]
        listed = [hit.rowid for hit in store.find_chunks([question, question], 10)]
        assert alone == listed, question
    assert found(store, "多栏布局用什么指令") == ["zh"]


@pytest.mark.parametrize("question", ["列出已加载的内核模块", "内核" * 5_000])
def test_with_vectors_the_gloss_joins_the_keyword_side(store: SearchStore, question: str) -> None:
    """With vectors ranking another chunk first, the gloss's passage is still among the
    first five (the fusion holds both)."""
    rowids = put(store, "manual", ENGLISH_MANUAL)
    nearer = [[(rowids[0], 0.9), (rowids[3], 0.8)]]
    hits = store.find_chunks(question, 5, semantic=nearer)
    assert rowids[1] in [hit.rowid for hit in hits[:5]]


def test_with_vectors_the_glosss_first_place_keeps_a_seat_in_the_top_five(store: SearchStore) -> None:
    """The vectors rank seven other pages of the manual first and the lsmod page nowhere
    (as multilingual-e5 ranked it 36th for this question on the Debian Reference): the
    gloss's first place, the page that answers, is still among the first five."""
    others = [f"Chapter {n}: notes on the package archive and its mirrors, part {n}." for n in range(7)]
    rowids = put(store, "manual", [*others, ENGLISH_MANUAL[1]])
    nearer = [[(rowid, 0.9 - n / 100) for n, rowid in enumerate(rowids[:7])]]
    keywords = store.find_chunks("列出已加载的内核模块", 5)
    assert keywords[0].rowid == rowids[7]
    hits = store.find_chunks("列出已加载的内核模块", 5, semantic=nearer)
    assert rowids[7] in [hit.rowid for hit in hits[:5]]
    assert [hit.rowid for hit in hits[:4]] == rowids[:4]  # the vectors still lead


def test_the_store_tells_its_caller_the_keywords_the_gloss_searched(store: SearchStore) -> None:
    """Both backends fill the caller's LookupNotes alike, and only when the gloss was searched."""
    put(store, "manual", ENGLISH_MANUAL)
    notes = LookupNotes()
    assert store.find_chunks(["列出已加载的内核模块"], 5, notes=notes)
    assert {"list", "kernel", "module"} <= set(notes.glossed.split())
    english = LookupNotes()
    assert store.find_chunks(["list the loaded kernel modules"], 5, notes=english)
    assert english.glossed == ""


TERMINAL_MANUAL = [
    "Programs started from a terminal stop when the connection breaks: run them under screen"
    " or tmux and the program continues to run after you disconnect.",
    "The boot loader tries the disks in the order of its boot sequence.",
    "Sort the lines of a file in reverse order.",
    "Change the keyboard layout of the console with dpkg-reconfigure keyboard-configuration.",
    "The control panel of the desktop.",
]


def test_the_gloss_searches_the_words_the_documents_use(store: SearchStore) -> None:
    """Every sense is a candidate, and the searched chunks choose: only words they hold, and
    among a word's senses the one found beside the other words' ("program" with "terminal"
    and "run", not "order" or "sequence", which only meet each other); function words give
    nothing. The dictionary's first senses alone gave "procedures sequence", "move along",
    "off stage", and never "program", "run" or "console"."""
    rowids = put(store, "manual", TERMINAL_MANUAL)
    notes = LookupNotes()
    hits = store.find_chunks(["断开连接后让终端里的程序继续运行"], 5, notes=notes)
    assert hits[0].rowid == rowids[0]
    words = notes.glossed.split()
    assert {"terminal", "program", "continue", "run"} <= set(words)
    assert not {"procedures", "sequence", "order", "move", "along", "let", "after"} & set(words)
    console = LookupNotes()
    hits = store.find_chunks(["控制台下怎么更换键盘布局"], 5, notes=console)
    assert hits[0].rowid == rowids[3]
    assert {"console", "keyboard", "layout", "change"} <= set(console.glossed.split())
    assert not {"stage", "audience", "arrangement", "how"} & set(console.glossed.split())


def test_the_gloss_holds_only_words_of_the_searched_document(store: SearchStore) -> None:
    """Asked inside one document, the candidates are counted there: "program", "run",
    "link" and "join" are in the other document only, so they are not searched here (the
    dictionary's first senses alone searched "link join end ... proceed")."""
    put(store, "elsewhere", ["Run the program in a terminal; link and join the end of the files."])
    inside = put(store, "here", ["The terminal continues after the connection breaks."])
    notes = LookupNotes()
    store.find_chunks(
        ["断开连接后让终端里的程序继续运行"], 5, rowid_range=(inside[0], inside[-1]), notes=notes
    )
    assert {"terminal", "continue"} <= set(notes.glossed.split())
    assert not {"program", "run", "link", "join", "end", "proceed"} & set(notes.glossed.split())


WITHOUT_JIEBA = """
import sys
from pathlib import Path

from generalAgent.config.settings import DocumentSettings
from generalAgent.documents.search import search_document

folder = Path(sys.argv[1])
manual = folder / "modules.md"
manual.write_text(
    "# Kernel modules\\n\\nUse lsmod to list the kernel modules that are currently loaded.\\n", encoding="utf-8"
)
found = search_document(
    folder / "indexes.db", DocumentSettings(use_jieba=False), manual, ["怎么查看已加载的内核模块"]
)
print(found.results[0].hit.text.splitlines()[-1] if found.results and found.results[0].hit else "")
print(found.glossed)
print("jieba" in sys.modules)
"""


def test_without_jieba_the_gloss_cuts_by_the_dictionary_and_never_imports_jieba(tmp_path: Path) -> None:
    """USE_JIEBA=false spares jieba's load: the gloss cuts the question's Chinese by the
    dictionary's longest words instead, and still finds the English passage (a fresh
    process, so no other test's import of jieba counts)."""
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_JIEBA, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    passage, keywords, imported = result.stdout.splitlines()
    assert "lsmod" in passage
    assert {"kernel", "module"} <= set(keywords.split())
    assert imported == "False"


def test_the_dictionarys_longest_words_gloss_as_jieba_does_for_a_plain_question() -> None:
    table = load_dictionary()
    assert table is not None
    assert gloss("列出已加载的内核模块", use_jieba=False) == gloss("列出已加载的内核模块")
