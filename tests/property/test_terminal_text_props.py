"""Invariants of the terminal sanitiser: nothing a terminal acts on survives, plain text does."""

from __future__ import annotations

import io
import re

from hypothesis import given
from hypothesis import strategies as st
from rich.table import Table

from generalAgent.cli.terminal_text import terminal_console, terminal_safe, typed_answer, visible_controls

ACTIVE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Text with every kind of control mixed in, and the sequences attackers use.
pieces = st.one_of(
    st.text(),
    st.sampled_from(
        [
            "\x1b[2K",
            "\x1b[1G",
            "\x1b]52;c;ZWNobw==\x07",
            "\x1b]0;title\x1b\\",
            "\x1bP1$r\x1b\\",
            "\x9b2J",
            "\x9d0;t\x9c",
            "\x1b",
            "\x1b]",
            "\r",
            "\r\n",
            "\u202e",
            "\u2066",
            "\x7f",
            "\x00",
        ]
    ),
)
hostile_text = st.lists(pieces, max_size=12).map("".join)
plain_text = st.text(
    st.characters(
        blacklist_categories=("Cc", "Cs"),
        blacklist_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
    )
)


@given(hostile_text)
def test_nothing_a_terminal_acts_on_survives(text: str) -> None:
    cleaned = terminal_safe(text)
    assert not ACTIVE.search(cleaned)
    assert terminal_safe(cleaned) == cleaned


@given(plain_text)
def test_plain_text_newlines_and_tabs_are_kept(text: str) -> None:
    text = f"{text}\n\t{text}"
    assert terminal_safe(text) == text
    assert visible_controls(text) == text


@given(hostile_text)
def test_visible_controls_hides_nothing_and_acts_on_nothing(text: str) -> None:
    shown = visible_controls(text)
    assert not ACTIVE.search(shown)
    # Every character that was acted on is now a mark: nothing was dropped.
    assert len(shown) >= len(text)


def test_the_console_cleans_every_string_it_renders() -> None:
    out = io.StringIO()
    console = terminal_console(file=out, width=80, color_system=None)
    table = Table()
    table.add_column("title")
    table.add_row("report\x1b]52;c;ZWNobw==\x07.pdf")
    console.print(table)
    console.print("[bold]x[/]\x1b[2K\u202eabc")
    assert not ACTIVE.search(out.getvalue())
    assert "report.pdf" in out.getvalue() and "xabc" in out.getvalue()


@given(st.sampled_from(["y", "Y", "yes", "ｙ", "Ｙ", "ＹＥＳ", "是", " ｙ \n"]))
def test_every_way_of_typing_yes_reads_as_the_same_answer(typed: str) -> None:
    """One rule for every question (approval, trust, rewind, sessions and kb delete): an
    input method's full-width letters, case and spaces do not change the answer."""
    assert typed_answer(typed) in {"y", "yes", "是"}
