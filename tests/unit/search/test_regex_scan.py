"""The regex scan of an item's content: windows over pieces find what one scan finds."""

from __future__ import annotations

import time

import regex
from hypothesis import given
from hypothesis import strategies as st

from generalAgent.search import regex_scan


@given(
    text=st.lists(st.sampled_from(["a", "b", "x", " ", "\n", "营", "收", "ab", "营收"]), max_size=400).map(
        "".join
    ),
    pattern=st.sampled_from(["ab", "^x", r"\bab\b", "营收", "b$", "(?<=x)a"]),
    piece=st.integers(min_value=1, max_value=40),
)
def test_a_regex_scanned_in_windows_finds_what_a_scan_of_the_whole_text_finds(
    text: str, pattern: str, piece: int
):
    """Matches shorter than the reach past a window, anchors and look-behinds included, are
    found once each, where a scan of the whole string finds them."""
    compiled = regex.compile(pattern, regex.IGNORECASE | regex.MULTILINE | regex.VERSION0)
    chunks = (text[i : i + piece] for i in range(0, len(text), piece))
    saved = regex_scan.REGEX_WINDOW_CHARS, regex_scan.REGEX_REACH_CHARS, regex_scan.REGEX_CONTEXT_CHARS
    regex_scan.REGEX_WINDOW_CHARS, regex_scan.REGEX_REACH_CHARS, regex_scan.REGEX_CONTEXT_CHARS = 16, 4, 2
    try:
        found = list(regex_scan._match_offsets(compiled, chunks, time.monotonic() + 10))
    finally:
        regex_scan.REGEX_WINDOW_CHARS, regex_scan.REGEX_REACH_CHARS, regex_scan.REGEX_CONTEXT_CHARS = saved
    assert found == [m.start() for m in compiled.finditer(text)]
