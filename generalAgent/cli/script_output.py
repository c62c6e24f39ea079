"""What `-p` reports to a script: the turn as JSON events, and the result as one JSON object.

`--output-format json` prints `result_object` once, at the end; `stream-json` prints one
event per line as the turn goes (`start`, `reasoning`, `text`, `tool_call`, `approval`,
`tool_result`, `retry`, `subagent`, `compaction`, `hook_notice`, `files_written`,
`reading`: `script_event`, one per kind of agent/events.py's records) and the same result object last, with
`"type": "result"`. The field names are a public interface (docs/usage.md): add, never
rename. Everything here is data for a program, so it stays English and untranslated.

`ScriptView` sits between the turn and the terminal view: it forwards every event to the
view on stderr, remembers the tool calls and the approvals it answered, and emits the events.
Nobody is there to answer an approval: a call runs only with `--approve` (every call) or
when its tool was named in `--allowed-tools` (those never reach the view); any other is
refused, and the run ends with exit status 3 so a script sees what was missing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from generalAgent.agent.events import (
    ApprovalRequest,
    Compaction,
    FilesWritten,
    HookNotice,
    MessageEnd,
    ReadingProgress,
    ReasoningChunk,
    RetryNotice,
    SubagentProgress,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnEvent,
    UsageReport,
)
from generalAgent.sessions import Usage

OutputFormat = Literal["text", "json", "stream-json"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("text", "json", "stream-json")
Event = dict[str, Any]


@dataclass
class ToolCallRecord:
    id: str
    name: str
    args: dict[str, Any]
    status: Literal["running", "ok", "error", "refused"] = "running"


@dataclass
class ScriptRecord:
    """What happened in the turn that a script may want to know."""

    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # tools refused for want of an approval

    def call(self, call_id: str) -> ToolCallRecord | None:
        return next((c for c in reversed(self.tool_calls) if c.id == call_id), None)


class EventWriter:
    """One JSON object per line on `stream`, flushed at once (a reader sees it as it happens)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def __call__(self, event: Event) -> None:
        self.stream.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        self.stream.flush()


class ScriptView:
    """A TurnView for `-p`: forwards to `inner` (the stderr view), records, and emits events."""

    def __init__(
        self,
        inner: Any,
        approve_all: bool,
        emit: Callable[[Event], None] | None = None,
        announce_approved: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """`inner.approve` refuses (and says so) when nobody can answer; `announce_approved`
        says that `--approve` let a call run."""
        self.inner = inner
        self.approve_all = approve_all
        self.emit = emit or (lambda event: None)
        self.announce_approved = announce_approved or (lambda request: None)
        self.record = ScriptRecord()

    def on_event(self, event: TurnEvent) -> None:
        self.inner.on_event(event)
        if isinstance(event, ToolStart):
            self.record.tool_calls.append(ToolCallRecord(event.call_id, event.name, dict(event.args)))
        elif isinstance(event, ToolEnd):
            call = self.record.call(event.call_id)
            if call is not None and call.status == "running":
                call.status = "error" if event.is_error else "ok"
        emitted = script_event(event)
        if emitted is not None:
            self.emit(emitted)

    def approve(self, request: ApprovalRequest) -> str:
        from generalAgent.tools.approval import NO, YES

        tool = request.tool
        call = self.record.call(request.call_id)
        if self.approve_all:
            self.announce_approved(request.as_dict())
            self.emit({"type": "approval", "id": request.call_id, "tool": tool, "decision": "approved"})
            return YES
        answer = self.inner.approve(request)  # nobody to ask: it refuses, and says so on stderr
        if answer == NO:
            self.record.refused.append(tool)
            if call is not None:
                call.status = "refused"
        decision = "refused" if answer == NO else "approved"
        self.emit({"type": "approval", "id": request.call_id, "tool": tool, "decision": decision})
        return answer

    def close(self) -> None:
        self.inner.close()


def script_event(event: TurnEvent) -> Event | None:
    """One event of the turn as its `stream-json` line; None for the end of a model message
    (the next line says what follows) and the usage of calls the result's usage sums."""
    match event:
        case ReasoningChunk(text):
            return {"type": "reasoning", "text": text}
        case TextChunk(text):
            return {"type": "text", "text": text}
        case ToolStart(call_id, name, args):
            return {"type": "tool_call", "id": call_id, "name": name, "args": dict(args)}
        case ToolEnd(call_id, name, content, is_error):
            return {
                "type": "tool_result",
                "id": call_id,
                "name": name,
                "ok": not is_error,
                "content": content,
            }
        case RetryNotice(status, delay, number, limit):
            return {"type": "retry", "status": status, "delay": delay, "attempt": number, "of": limit}
        case SubagentProgress(source, text):
            return {"type": "subagent", "name": source, "text": text}
        case Compaction():
            of_subagent = {"subagent": event.source} if event.source else {}
            return {**event.as_fields(), **of_subagent, "type": "compaction"}
        case HookNotice():
            return {"type": "hook_notice", "text": event.text(), "template": event.template}
        case FilesWritten(paths):
            return {"type": "files_written", "paths": [str(path) for path in paths]}
        case ReadingProgress(name, stage, done, total):
            return {"type": "reading", "name": name, "stage": stage, "done": done, "total": total}
        case MessageEnd() | UsageReport():
            return None
    return None


def usage_object(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "cached_tokens": usage.cached_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "model_calls": usage.model_calls,
    }


def result_object(
    *,
    status: Literal["answered", "failed", "refused", "interrupted", "error"],
    exit_code: int,
    answer: str = "",
    error: str | None = None,
    session_id: str | None = None,
    model: str | None = None,
    usage: Usage | None = None,
    cost: tuple[float, str] | None = None,
    record: ScriptRecord | None = None,
    files_written: Iterable[Path] = (),
    seconds: float | None = None,
) -> Event:
    """The result of a `-p` run: the same object for `json` and as the last `stream-json` line."""
    record = record or ScriptRecord()
    return {
        "type": "result",
        "status": status,
        "exit_code": exit_code,
        "answer": answer,
        "error": error,
        "session_id": session_id,
        "model": model,
        "usage": usage_object(usage or Usage()),
        "cost": {"amount": round(cost[0], 6), "currency": cost[1]} if cost else None,
        "tool_calls": [asdict(call) for call in record.tool_calls],
        "refused_tools": list(dict.fromkeys(record.refused)),
        "files_written": [str(path) for path in files_written],
        "duration_seconds": round(seconds, 3) if seconds is not None else None,
    }
