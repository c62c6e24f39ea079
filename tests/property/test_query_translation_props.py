"""The dictionary gloss of a query (search/query_translation.py), on real jieba and the real
CC-CEDICT, for any text: bounded candidates of plain English words (nothing FTS5 would read
as syntax), nothing at all for a text without Chinese; and, chosen by a real index, only
words the searched chunks hold, within its caps."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.config.settings import DocumentSettings
from generalAgent.search.lookup import LookupNotes
from generalAgent.search.query_translation import (
    CANDIDATES_PER_WORD,
    GLOSS_WORDS_PER_WORD,
    MAX_GLOSS_WORDS,
    MAX_GLOSSED_WORDS,
    choose_gloss,
    gloss,
    gloss_candidates,
    load_dictionary,
    term_expression,
)
from generalAgent.search.store import SqliteSearchStore
from tests.support.search_store import put

# Common Chinese characters (so jieba finds words and the dictionary glosses them), Latin,
# digits, FTS5's syntax characters, controls and surrogate-free odd code points.
CHINESE = st.sampled_from(list("的列出已加载内核模块系统安装字体文件权限设置网络进程用户密码"))
TEXT = st.lists(
    st.one_of(CHINESE, st.characters(blacklist_categories=("Cs",)), st.sampled_from(list('"*:^()-+ \x00'))),
    max_size=300,
).map("".join)
_WORD = re.compile(r"[a-z0-9][a-z0-9'._+-]*")


@settings(max_examples=150, deadline=None)
@given(text=TEXT, use_jieba=st.booleans())
def test_the_candidates_are_bounded_plain_words(text: str, use_jieba: bool) -> None:
    """With jieba's cut or the dictionary's longest words (USE_JIEBA=false) alike."""
    candidates = gloss_candidates(text, use_jieba=use_jieba)
    assert len(candidates) <= 2 * MAX_GLOSSED_WORDS
    for group in candidates:
        assert 0 < len(group) <= CANDIDATES_PER_WORD
        for candidate in group:
            assert all(_WORD.fullmatch(word) for word in candidate.split(" ")), candidate
            assert '"' not in candidate and "\x00" not in candidate
    assert len(gloss(text, use_jieba=use_jieba).split()) <= MAX_GLOSS_WORDS * 4


@settings(max_examples=150, deadline=None)
# Below the CJK radicals (U+2E80 on), which NFKC turns into Chinese characters ("⽚" -> "片").
@given(text=st.text(alphabet=st.characters(max_codepoint=0x2E7F, blacklist_categories=("Cs",)), max_size=200))
def test_a_text_without_chinese_gets_no_gloss(text: str) -> None:
    assert load_dictionary() is not None
    assert gloss(text) == ""


GROUPS = st.lists(
    st.lists(
        st.sampled_from(["a", "b", "c", "d e", "f", "g", "h i", "j"]), min_size=1, max_size=6, unique=True
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(
    groups=GROUPS,
    doclists=st.dictionaries(
        st.sampled_from("abcfgj") | st.just("d e") | st.just("h i"),
        st.frozensets(st.integers(1, 30), max_size=12),
    ),
)
def test_the_choice_keeps_only_held_words_within_its_caps(
    groups: list[list[str]], doclists: dict[str, frozenset[int]]
) -> None:
    chosen, share = choose_gloss(groups, doclists)
    assert all(doclists.get(word) for word in chosen)
    assert len(chosen) == len(set(chosen)) <= MAX_GLOSS_WORDS
    assert len(chosen) <= GLOSS_WORDS_PER_WORD * len(groups)
    assert 0.0 <= share <= 1.0
    assert (share == 0.0) == (not chosen)


QUESTIONS = [
    "断开连接后让终端里的程序继续运行",
    "在命令行里把文本复制到剪贴板",
    "控制台下怎么更换键盘布局",
    "怎么查看已加载的内核模块",
    "校验已安装软件包的文件有没有被修改",
]
# English words of those questions' senses (right and wrong ones), and others.
_VOCABULARY = (
    "program programs run running terminal order sequence procedures copy duplicate clipboard text "
    "command line console control keyboard layout arrangement stage kernel module modules load "
    "loaded core look over check examine install package software file files document modify "
    "alter change replace break connection link the a of to in is"
)
VOCABULARY = _VOCABULARY.split()
SENTENCES = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(
    question=st.sampled_from(QUESTIONS),
    inside=st.lists(SENTENCES, min_size=1, max_size=5),
    outside=st.lists(SENTENCES, min_size=1, max_size=5),
)
def test_the_gloss_never_holds_a_word_absent_from_the_searched_chunks(
    question: str, inside: list[str], outside: list[str]
) -> None:
    """On a real SQLite index with jieba: searching inside one document, whatever the two
    documents say, every glossed word or phrase is in that document's chunks (FTS5 finds
    it there, the other document not counted), at most GLOSS_WORDS_PER_WORD a glossed
    Chinese word and MAX_GLOSS_WORDS in all."""
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteSearchStore(Path(folder) / "indexes.db", DocumentSettings())
        try:
            put(store, "outside", outside)
            rowids = put(store, "inside", inside)
            notes = LookupNotes()
            store.find_chunks([question], 5, rowid_range=(rowids[0], rowids[-1]), notes=notes)
            if not notes.glossed:
                return
            candidates = gloss_candidates(question)
            terms = notes.glossed_terms
            assert " ".join(terms) == notes.glossed
            assert set(terms) <= {c for group in candidates for c in group}
            assert len(terms) <= min(MAX_GLOSS_WORDS, GLOSS_WORDS_PER_WORD * len(candidates))
            for term in terms:
                held = store.conn.execute(
                    "SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ?",
                    [term_expression(term), rowids[0], rowids[-1]],
                ).fetchone()[0]
                assert held, (term, notes.glossed)
        finally:
            store.close()
