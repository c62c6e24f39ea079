"""encodable_text: any str comes out UTF-8-encodable, idempotently, and text that already
encodes is left exactly as it was (so the prompt cache sees the same bytes)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from generalAgent.graph.encodable_text import encodable_text, encodable_value

surrogates = st.integers(0xD800, 0xDFFF).map(chr)
# Every code point, with surrogates (st.text() leaves them out by default) drawn often.
any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()) | surrogates)
encodable = st.text(alphabet=st.characters(exclude_categories=("Cs",)))


@given(any_text)
def test_any_text_comes_out_encodable(text: str) -> None:
    encodable_text(text).encode("utf-8")


@given(any_text)
def test_making_text_encodable_is_idempotent(text: str) -> None:
    once = encodable_text(text)
    assert encodable_text(once) == once


@given(any_text)
def test_only_surrogates_change_one_for_one(text: str) -> None:
    fixed = encodable_text(text)
    assert len(fixed) == len(text)
    for before, after in zip(text, fixed, strict=True):
        assert after == (before if not 0xD800 <= ord(before) <= 0xDFFF else "\ufffd")


@given(encodable)
def test_encodable_text_is_unchanged(text: str) -> None:
    assert encodable_text(text) is text


@given(st.lists(st.tuples(encodable, surrogates, encodable), min_size=1))
def test_text_with_a_surrogate_always_changes(pieces: list[tuple[str, str, str]]) -> None:
    text = "".join(a + s + b for a, s, b in pieces)
    assert encodable_text(text) != text


@given(
    st.recursive(any_text, lambda inner: st.lists(inner) | st.dictionaries(encodable, inner), max_leaves=20)
)
def test_nested_values_come_out_encodable(value: object) -> None:
    json.dumps(encodable_value(value), ensure_ascii=False).encode("utf-8")
