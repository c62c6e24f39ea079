"""Properties of the pure parts of hooks and custom commands: a plain matcher is exact set
membership (never a pattern), and a command's expansion keeps what was typed, whatever it is."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from generalAgent.cli.custom_commands import CustomCommand
from generalAgent.hooks import matcher_matches

TOOL = st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)


@given(st.lists(TOOL, min_size=1, max_size=4), TOOL)
def test_a_plain_matcher_is_exactly_its_alternatives(names: list[str], tool: str) -> None:
    assert matcher_matches("|".join(names), tool) is (tool in names)


@given(st.text(max_size=200), st.text(max_size=200))
def test_arguments_reach_the_text_whole(before: str, arguments: str) -> None:
    body = before.replace("$", "") + " $ARGUMENTS"
    expanded = CustomCommand("/x", Path("x.md"), body).expand(arguments)
    assert arguments.strip() in expanded


@given(st.text(max_size=200))
def test_a_body_without_placeholders_keeps_the_arguments(arguments: str) -> None:
    expanded = CustomCommand("/x", Path("x.md"), "Summarise this.").expand(arguments)
    assert expanded.startswith("Summarise this.")
    if arguments:
        assert expanded.endswith(arguments)
