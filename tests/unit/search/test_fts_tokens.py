"""FTS5's tokens made for the PostgreSQL index equal the ones indexes.db stores, and
query.py's expressions read back into the same phrases and columns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from generalAgent.search.fts_expression import Node, Phrase, parse, phrases, tsquery, union_lexeme
from generalAgent.search.fts_tokens import TOKENIZER, FTS5Tokenizer
from generalAgent.search.query import build_match_query
from generalAgent.search.segmentation import Segmenter

SEEDS = Path("/work/shared/seeds")
MIXED = (
    "Café naïve résumé Ǘ İstanbul ÀÉÎ straße 数据库testing 使用ls命令 4.1 multi-agent x86_64 ½ ① Ⅻ "
    "e\u0301cole possibly reassembly generalization ponies caresses agreed 客户满意度 Ω-3 "
    "ＦＵＬＬ-width \ue000private\ue001 don't path/to/file.txt user@example.com"
)


def fts5_instances(text: str) -> list[str]:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (text,))
    return [row[0] for row in conn.execute("SELECT term FROM v ORDER BY offset")]


def texts() -> list[str]:
    found = [MIXED]
    if SEEDS.is_dir():
        found += [p.read_text(encoding="utf-8", errors="replace")[:30_000] for p in sorted(SEEDS.iterdir())]
    for page in sorted(Path("/usr/share/common-licenses").glob("*"))[:6]:
        if page.is_file():
            found.append(page.read_text(encoding="utf-8", errors="replace")[:30_000])
    return found


@pytest.mark.parametrize("text", texts(), ids=lambda t: t[:20])
def test_the_tokens_are_fts5s_own(text: str) -> None:
    tokenizer = FTS5Tokenizer()
    assert tokenizer.tokens(text) == fts5_instances(text)
    assert tokenizer.tokens(text) == fts5_instances(text)  # and again from the cache


def test_query_expressions_read_back_as_phrases_in_their_columns() -> None:
    tokenize = FTS5Tokenizer().tokens
    match = build_match_query("configure multi-agent 4.1 增长率", Segmenter("jieba"))
    tree = parse(match.any_terms, tokenize)
    assert isinstance(tree, Node) and tree.operator == "OR"
    assert phrases(tree) == [
        Phrase((0, 2), ("configur",)),
        Phrase((0, 2), ("multi", "agent")),
        Phrase((0, 2), ("4", "1")),
        Phrase((1, 2), ("增长率",)),
    ]
    assert tsquery(phrases(tree)[1]) == "(('0multi' <-> '0agent') | ('2multi' <-> '2agent'))"
    assert union_lexeme(phrases(tree)[0]) == "aconfigur"
    assert union_lexeme(phrases(tree)[1]) is None  # two words: counted by their matches
    both = parse(f"({match.terms[0]}) AND ({match.terms[3]} OR {match.terms[1]})", tokenize)
    assert isinstance(both, Node) and both.operator == "AND"
    assert [p.tokens for p in phrases(both)] == [("configur",), ("增长率",), ("multi", "agent")]


@pytest.mark.parametrize("bad", ['{text} : "x" AND', '{nosuch} : "x"', '({text} : "x"', "text : x"])
def test_anything_but_the_query_builders_grammar_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse(bad, FTS5Tokenizer().tokens)


def test_quotes_in_a_word_are_kept_inside_the_phrase() -> None:
    tree = parse('{text title} : "say ""hi"" now"', FTS5Tokenizer().tokens)
    assert tree == Phrase((0, 2), ("sai", "hi", "now"))
