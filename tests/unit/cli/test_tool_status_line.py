"""The per-call line reads the tool message's status, never its wording."""

from __future__ import annotations

import io

from rich.console import Console

from generalAgent.cli.render import TerminalView


def shown(content: str, is_error: bool) -> str:
    out = io.StringIO()
    view = TerminalView(Console(file=out, width=200, color_system=None))
    view.on_tool_call("c1", "read_file", {"path": "notes.md"})
    view.on_tool_result("c1", "read_file", content, is_error)
    return out.getvalue()


def test_a_failed_call_is_marked_with_its_message() -> None:
    line = shown("Error: notes.md does not exist.", is_error=True)
    assert line.startswith("✗ read_file") and "notes.md does not exist" in line


def test_a_successful_result_that_starts_with_error_is_not_a_failure() -> None:
    line = shown("Error handling in chapter 3: retries, timeouts.", is_error=False)
    assert line.startswith("⚙ read_file") and "→ 47 B" in line
