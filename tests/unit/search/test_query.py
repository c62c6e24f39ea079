"""Query building: every word quoted and column-filtered; nothing the user types is syntax."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.search.query import MAX_QUERY_CHARS, build_match_query, quote
from generalAgent.search.segmentation import Segmenter

JIEBA = Segmenter("jieba")


def test_latin_words_are_quoted_phrases_on_the_raw_column():
    match = build_match_query("multi-agent 4.1", JIEBA)
    assert match.all_terms == '{text title} : "multi-agent" AND {text title} : "4.1"'
    assert match.any_terms == '{text title} : "multi-agent" OR {text title} : "4.1"'


def test_plain_bm25s_terms_are_the_words_the_index_holds_one_by_one():
    """The tuned query's phrase "在 沙" and long word "文件系统" (or its parts together) become
    the words text_jieba stores, each a term of its own; stopwords are left out as in the
    tuned query, and a query whose words are the same keeps one set of terms."""
    match = build_match_query("在沙盒里运行 shell", JIEBA)
    assert '{text_jieba title} : "在 沙"' in match.terms
    assert match.plain.terms == tuple(
        f'{{{columns}}} : "{word}"'
        for columns, word in [
            ("text_jieba title", "沙"),
            ("text_jieba title", "盒里"),
            ("text_jieba title", "运行"),
            ("text title", "shell"),
        ]
    )
    assert match.plain.any_terms == " OR ".join(match.plain.terms)
    words = build_match_query("文件系统", JIEBA).plain.terms
    assert words == tuple(f'{{text_jieba title}} : "{w}"' for w in ("文件", "系统", "文件系统"))
    english = build_match_query("rotate the logs", JIEBA)
    assert english.plain is english and english.plain_terms == ()


def test_chinese_is_segmented_onto_the_jieba_column():
    match = build_match_query("营收增长", JIEBA)
    # jieba's dictionary has no 营收: its characters must be adjacent, as in the document
    assert match.all_terms == '{text_jieba title} : "营 收" AND {text_jieba title} : "增长"'
    # The scan of the last resort: the run, its words, their characters; 3 of 4 at least.
    assert match.substrings == ("营收增长", "营收", "增长", "营", "收", "增", "长")
    assert match.scan_floor == 3


def test_the_scan_of_the_last_resort_finds_a_passage_that_words_the_question_otherwise(tmp_path):
    """A question whose jieba words are none of the page's ("行距 设成 两倍" of a page on
    "双倍 … 行间距"): the section holding most of its characters is found, and those sharing
    a character or two are not (unseen zh dev half: no FTS5 term matched, nothing was found)."""
    from generalAgent.config.settings import load_settings
    from generalAgent.documents.search import search_document

    faq = tmp_path / "faq.md"
    faq.write_text(
        "# 缩进\n\n如何使首段段首也缩进？使用 indentfirst 宏包。\n\n"
        "# 行间距\n\n如何设置双倍或者更大的行间距？使用命令 baselinestretch 设为倍数。\n\n"
        "# 字库\n\n两种类型的矢量字库会不会发生冲突？\n",
        encoding="utf-8",
    )
    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    found = search_document(settings.paths.indexes_db, settings.documents, faq, "怎么把行距设成两倍")
    assert [result.place for result in found.results] == ["§ 行间距"]


def test_long_chinese_words_also_match_their_parts():
    match = build_match_query("客户满意度调查", JIEBA)
    assert '{text_jieba title} : "客户"' in match.all_terms


def test_mixed_queries_combine_both_columns():
    match = build_match_query("Q3营收 baseline", JIEBA)
    assert '{text title} : "Q3"' in match.all_terms
    assert '{text_jieba title} : "营 收"' in match.all_terms
    assert '{text title} : "baseline"' in match.all_terms


def test_stopwords_are_dropped_unless_nothing_else_is_left():
    assert build_match_query("what is the baseline", JIEBA).all_terms == '{text title} : "baseline"'
    assert build_match_query("the", JIEBA).all_terms == '{text title} : "the"'


def test_quotes_are_doubled_and_operators_are_words():
    assert quote('say "hi"') == '"say ""hi"""'
    match = build_match_query('NEAR(a b) OR "x" AND y*', JIEBA)
    words = ['"NEAR(a"', '"b"', '"x"', '"y"']
    assert match.all_terms == " AND ".join(f"{{text title}} : {w}" for w in words)


def test_nothing_searchable():
    for query in ["", "   ", "***", "(:^)", "🙂🙂", "\x00\x01"]:
        assert build_match_query(query, JIEBA).empty


def test_unigram_segmenter_makes_character_phrases():
    match = build_match_query("营收", Segmenter("unigram"))
    assert match.all_terms == '{text_jieba title} : "营 收"'


def test_long_queries_are_cut():
    match = build_match_query("word " * 10_000, JIEBA)
    assert match.all_terms == '{text title} : "word"'
    assert len("x" * 20_000) > MAX_QUERY_CHARS


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, text_jieba, title,"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute("INSERT INTO chunks_fts VALUES ('baseline 4.1 multi-agent NEAR AND', '营收 增长', 'r')")
    return conn


@settings(max_examples=400, deadline=None)
@given(query=st.text(max_size=300))
def test_any_unicode_query_is_valid_fts5(fts: sqlite3.Connection, query: str):
    match = build_match_query(query, JIEBA)
    for expression in (match.all_terms, match.any_terms):
        if expression:
            fts.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (expression,))


@settings(max_examples=200, deadline=None)
@given(
    query=st.lists(
        st.sampled_from(
            [
                '"',
                "AND",
                "OR",
                "NOT",
                "NEAR",
                "*",
                ":",
                "^",
                "(",
                ")",
                "{",
                "}",
                "-",
                "+",
                "营收",
                "baseline",
                "🙂",
                "\x00",
                "'",
                ";",
                "\\",
            ]
        ),
        max_size=30,
    ).map(" ".join)
)
def test_fts5_syntax_characters_never_break_the_query(fts: sqlite3.Connection, query: str):
    match = build_match_query(query, JIEBA)
    for expression in (match.all_terms, match.any_terms):
        if expression:
            fts.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (expression,))
