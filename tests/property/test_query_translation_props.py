"""The dictionary gloss of a query (search/query_translation.py), on real jieba and the real
CC-CEDICT, for any text: bounded, plain English words (nothing FTS5 would read as syntax),
and nothing at all for a text without Chinese."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.search.query_translation import MAX_GLOSS_WORDS, gloss, load_dictionary

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
def test_a_gloss_is_a_bounded_line_of_plain_words(text: str, use_jieba: bool) -> None:
    """With jieba's cut or the dictionary's longest words (USE_JIEBA=false) alike."""
    words = gloss(text, use_jieba=use_jieba).split()
    assert len(words) <= MAX_GLOSS_WORDS
    assert len(set(words)) == len(words)
    for word in words:
        assert _WORD.fullmatch(word.lower()), word
        assert '"' not in word and "\x00" not in word


@settings(max_examples=150, deadline=None)
# Below the CJK radicals (U+2E80 on), which NFKC turns into Chinese characters ("⽚" -> "片").
@given(text=st.text(alphabet=st.characters(max_codepoint=0x2E7F, blacklist_categories=("Cs",)), max_size=200))
def test_a_text_without_chinese_gets_no_gloss(text: str) -> None:
    assert load_dictionary() is not None
    assert gloss(text) == ""
