"""The graph's custom stream events, typed at the boundary (agent/events.py), and every view
handling every kind: the editor shows hook notices and files written, `-p --output-format
stream-json` emits them, the terminal words them."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from generalAgent.agent.events import (
    Compaction,
    FilesWritten,
    HookNotice,
    RetryNotice,
    SubagentProgress,
    UsageReport,
    event_from_custom,
)
from generalAgent.cli.acp.view import AcpView
from generalAgent.cli.render import TerminalView
from generalAgent.cli.script_output import ScriptView
from generalAgent.graph.model_retries import retry_event

NOTICE = {
    "hook_notice": {
        "template": "A hook timed out after {seconds} s: {command}",
        "fields": {"seconds": "5", "command": "lint"},
    }
}


def test_each_kind_of_custom_event_becomes_its_record_and_an_unknown_one_nothing() -> None:
    assert event_from_custom(
        {"subagent": "subagent-1a2b3c4d", "text": "done in 2 step(s)"}
    ) == SubagentProgress("subagent-1a2b3c4d", "done in 2 step(s)")
    compaction = event_from_custom(
        {"subagent": "subagent-1", "compaction": {"state": "done", "messages": 12, "tokens": 300}}
    )
    assert compaction == Compaction("done", 12, 300, None, "subagent-1")
    assert event_from_custom(
        {"compaction": {"state": "plain", "messages": "x", "reason": "off"}}
    ) == Compaction("plain", 0, None, "off")
    usage = event_from_custom({"usage": {"input_tokens": 10, "output_tokens": 2}})
    assert isinstance(usage, UsageReport) and usage.usage.input_tokens == 10
    notice = event_from_custom(NOTICE)
    assert isinstance(notice, HookNotice) and notice.text() == "A hook timed out after 5 s: lint"
    # A number stays a number: hooks.py words a timeout "{seconds:g} s".
    timed_out = event_from_custom(
        {"hook_notice": {"template": "stopped after {seconds:g} s", "fields": {"seconds": 1.0}}}
    )
    assert isinstance(timed_out, HookNotice) and timed_out.text() == "stopped after 1 s"
    assert HookNotice("after {seconds:g} s", {"seconds": "x"}).text() == "after {seconds:g} s"  # never raises
    assert event_from_custom({"files_written": ["/w/a.md"]}) == FilesWritten((Path("/w/a.md"),))
    # The model client's retry, as graph/model_retries.py writes it (locally and on a server).
    assert event_from_custom(retry_event(429, 2.0, 1, 2)) == RetryNotice(429, 2.0, 1, 2)
    assert event_from_custom(retry_event(None, 0.5, 2, 2)) == RetryNotice(None, 0.5, 2, 2)
    assert event_from_custom({"retry": {"delay": "nan", "number": "x"}}) == RetryNotice(None, 0.0, 0, 0)
    for unknown in (
        {"something": "new"},
        "text",
        None,
        {"hook_notice": "not a mapping"},
        {"files_written": "x"},
        {"retry": "soon"},
    ):
        assert event_from_custom(unknown) is None


def test_the_editor_shows_hook_notices_and_files_written(tmp_path: Path) -> None:
    sent: list[Any] = []
    view = AcpView(sent.append, lambda call, options: None, tmp_path)
    view.on_event(
        HookNotice("A hook timed out after {seconds} s: {command}", {"seconds": "5", "command": "lint"})
    )
    view.on_event(FilesWritten((tmp_path / "report.md",)))
    view.on_event(SubagentProgress("subagent-1", "started"))  # seen in the tool call's result
    thoughts = [u.content.text for u in sent if u.session_update == "agent_thought_chunk"]
    assert thoughts == [
        "A hook timed out after 5 s: lint\n",
        f"Files written (1):\n  {tmp_path / 'report.md'}\n",
    ]


def test_stream_json_emits_hook_notices_files_written_and_a_subagents_compaction() -> None:
    emitted: list[dict[str, Any]] = []
    console = Console(file=io.StringIO(), width=120)
    view = ScriptView(TerminalView(console, stream_answer=False), False, emitted.append)
    view.on_event(
        HookNotice("A hook timed out after {seconds} s: {command}", {"seconds": "5", "command": "lint"})
    )
    view.on_event(FilesWritten((Path("/w/outputs/a.md"),)))
    view.on_event(Compaction("done", 12, 300, None, "subagent-1"))
    view.on_event(SubagentProgress("subagent-1", "answer: 42"))
    assert emitted == [
        {
            "type": "hook_notice",
            "text": "A hook timed out after 5 s: lint",
            "template": "A hook timed out after {seconds} s: {command}",
        },
        {"type": "files_written", "paths": ["/w/outputs/a.md"]},
        {"state": "done", "messages": 12, "tokens": 300, "subagent": "subagent-1", "type": "compaction"},
        {"type": "subagent", "name": "subagent-1", "text": "answer: 42"},
    ]
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "A hook timed out after 5 s: lint" in shown and "[subagent-1]" in shown


def test_stream_json_has_a_line_for_every_kind_of_event_a_view_is_given() -> None:
    """Every record a turn hands its view (agent/events.py) has its stream-json line, except
    the end of a model message and the usage the result sums."""
    from generalAgent.agent.events import (
        MessageEnd,
        ReadingProgress,
        ReasoningChunk,
        RetryNotice,
        TextChunk,
        ToolEnd,
        ToolStart,
        UsageReport,
    )
    from generalAgent.cli.script_output import script_event
    from generalAgent.sessions import Usage

    events = [
        TextChunk("答"),
        ReasoningChunk("想"),
        ToolStart("c1", "read_file", {"path": "a.md"}),
        ToolEnd("c1", "read_file", "text", False),
        RetryNotice(429, 2.0, 1, 2),
        SubagentProgress("subagent-1", "started"),
        Compaction("started", 3),
        HookNotice("A hook failed: {command}", {"command": "lint"}),
        FilesWritten((Path("/w/a.md"),)),
        ReadingProgress("big.pdf", "chunks", 10, 40),
    ]
    kinds = [script_event(event)["type"] for event in events]  # type: ignore[index]
    assert kinds == [
        "text",
        "reasoning",
        "tool_call",
        "tool_result",
        "retry",
        "subagent",
        "compaction",
        "hook_notice",
        "files_written",
        "reading",
    ]
    assert script_event(ReadingProgress("big.pdf", "chunks", 10, 40)) == {
        "type": "reading",
        "name": "big.pdf",
        "stage": "chunks",
        "done": 10,
        "total": 40,
    }
    assert script_event(MessageEnd()) is None and script_event(UsageReport(Usage())) is None


def test_a_subagents_progress_line_is_shown_in_the_ui_language() -> None:
    """The line was English ("done in 2 step(s)") in a Chinese terminal; the event now carries
    it as data beside the English that scripts read."""
    from generalAgent import i18n
    from generalAgent.display import Message

    said = Message(("done in {count} step", "done in {count} steps"), {"count": 2})
    event = event_from_custom({"subagent": "subagent-1", "text": said.english(), "said": said.to_data()})
    assert isinstance(event, SubagentProgress) and event.text == "done in 2 steps" and event.said == said
    console = Console(file=io.StringIO(), width=120)
    try:
        i18n.use_language("zh")
        TerminalView(console, stream_answer=False).on_event(event)
    finally:
        i18n.use_language("en")
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "[subagent-1] 用 2 步完成" in shown and "steps" not in shown
