"""Reasoning in the terminal: one line by default, in full on request, never mixed into the answer."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from generalAgent.cli.render import TerminalView, format_usage, thinking_summary
from generalAgent.sessions import Usage


def run(mode: str) -> tuple[str, str]:
    """(what the status console shows, what the answer console shows) for one thinking answer."""
    status, answer = io.StringIO(), io.StringIO()
    view = TerminalView(
        Console(file=status, width=200, color_system=None),
        answer_console=Console(file=answer, width=200, color_system=None),
        reasoning=mode,
    )
    for piece in ["先看", "问题。" * 400]:
        view.on_reasoning(piece)
    view.on_text("答案。")
    view.on_message_end()
    view.close()
    return status.getvalue(), answer.getvalue()


def test_collapsed_is_one_line_with_the_size() -> None:
    status, answer = run("collapsed")
    assert status.strip() == "thought · 1.2k chars"  # what stays after the turn is past
    assert answer.strip() == "答案。"


def test_full_shows_the_reasoning_apart_from_the_answer() -> None:
    status, answer = run("full")
    assert status.startswith("先看问题。") and "thinking…" not in status
    assert "问题" not in answer


def test_off_shows_nothing() -> None:
    status, answer = run("off")
    assert status == "" and answer.strip() == "答案。"


@pytest.mark.parametrize(
    ("chars", "line"),
    [(0, "thinking… 0 chars"), (999, "thinking… 999 chars"), (1234, "thinking… 1.2k chars")],
)
def test_summary(chars: int, line: str) -> None:
    assert thinking_summary(chars) == line


def test_usage_line_shows_reasoning_apart() -> None:
    usage = Usage(
        input_tokens=2048, cached_tokens=1536, output_tokens=993, model_calls=1, reasoning_tokens=960
    )
    assert format_usage(usage) == "tokens: in 2,048 · cached 1,536 (75%) · out 993 (960 reasoning)"
    assert "reasoning" not in format_usage(Usage(10, 0, 5, 1))
