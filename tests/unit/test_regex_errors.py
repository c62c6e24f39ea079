"""A regular expression that does not compile is said in the UI's language, position kept,
while the model reads the library's own English, word for word as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import regex

from generalAgent import i18n
from generalAgent.regex_errors import _PHRASES, _QUOTING, regex_error_said

BROKEN = ["(abc", "abc)", "[abc", "*a", r"\q", "a{2,1}", "(?P<>a)", "a**", "(?z)", r"\x1", "[z-a]", "ab\n(cd"]


def compile_error(pattern: str) -> regex.error:
    with pytest.raises(regex.error) as raised:
        regex.compile(pattern, regex.IGNORECASE | regex.MULTILINE | regex.VERSION0)
    return raised.value


@pytest.mark.parametrize("pattern", BROKEN)
def test_the_model_reads_the_librarys_own_words(pattern: str) -> None:
    exc = compile_error(pattern)
    said = regex_error_said(exc)
    assert not isinstance(said, str) and said.english() == str(exc)


@pytest.mark.parametrize("pattern", BROKEN)
def test_a_person_reads_no_english_phrase_and_the_position_stays(pattern: str, chinese: None) -> None:
    exc = compile_error(pattern)
    said = regex_error_said(exc)
    assert not isinstance(said, str)
    shown = said.shown(i18n._, i18n.ngettext)
    assert not re.search(r"[a-z]{3,}", shown.replace(exc.msg.partition("\\")[2], "")), shown
    assert f"位置 {exc.pos}" in shown


def test_a_pattern_of_several_lines_is_placed_by_line_and_column(chinese: None) -> None:
    said = regex_error_said(compile_error("ab\n(cd"))
    assert not isinstance(said, str)
    assert said.english() == "missing ) at position 6 (line 2, column 4)"
    assert said.shown(i18n._, i18n.ngettext) == "缺少 )，位置 6（第 2 行第 4 列）"


def test_a_phrase_the_table_does_not_know_stays_english_with_its_position() -> None:
    said = regex_error_said(regex.error("some newer complaint", "abc", 1))
    assert not isinstance(said, str) and said.english() == "some newer complaint at position 1"


def test_every_phrase_the_installed_library_raises_is_in_the_table() -> None:
    """The library's compile errors are a fixed set written in its source: each one is
    translated (a newer regex adding one fails here, not silently in English)."""
    source = (Path(regex.__file__).parent / "_regex_core.py").read_text(encoding="utf-8")
    phrases = set(re.findall(r'\berror\("((?:[^"\\]|\\.)*)"', source))
    assert len(phrases) > 30
    unknown = []
    for phrase in phrases:
        written = phrase.replace("\\\\", "\\").replace("%s", "x")
        if written not in _PHRASES and not any(p.fullmatch(written) for p, _ in _QUOTING):
            unknown.append(phrase)
    assert unknown == ["recursive regex not supported by Scanner"]  # Scanner is never used


# Python's own `re` (a hook's matcher, hooks.py) words some problems its own way.
RE_BROKEN = [
    "(abc",
    "abc)",
    "[abc",
    "*a",
    r"\q",
    "a{2,1}",
    "(?P<1>a)",
    "a**",
    "(?z)",
    "[z-a]",
    "(?P=x)",
    "(?<",
]


@pytest.mark.parametrize("pattern", RE_BROKEN)
def test_pythons_re_is_said_in_the_ui_language_too(pattern: str, chinese: None) -> None:
    with pytest.raises(re.error) as raised:
        re.compile(pattern)
    said = regex_error_said(raised.value)
    assert not isinstance(said, str) and said.english() == str(raised.value)
    shown = said.shown(i18n._, i18n.ngettext)
    assert not re.search(r"[a-z]{3,}", shown.replace(raised.value.msg.partition("\\")[2], "")), shown
    assert f"位置 {raised.value.pos}" in shown


def test_every_phrase_pythons_re_raises_is_in_the_table() -> None:
    """re/_parser.py's fixed phrases (its `%r`/`%s` parts quoted as found): each translated."""
    source = (Path(re.__file__).parent / "_parser.py").read_text(encoding="utf-8")
    phrases = set(re.findall(r'\berror\(\s*"((?:[^"\\]|\\.)*)"', source))
    assert len(phrases) > 25
    unknown = []
    for phrase in phrases:
        written = phrase.replace("\\\\", "\\").replace("%r", "'x'").replace("%s", "\\x").replace("%d", "1")
        if written not in _PHRASES and not any(p.fullmatch(written) for p, _ in _QUOTING):
            unknown.append(written)
    # Both are the start of a longer message put together at run time (`missing ` + a
    # character, `redefinition of group name ... as group N; was group M`).
    assert sorted(unknown) == ["missing ", "redefinition of group name 'x' as group 1; "]
