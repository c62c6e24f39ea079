"""What `-p` reports to a script: the turn as JSON events, and the result as one JSON object.

`--output-format json` prints `result_object` once, at the end; `stream-json` prints one
event per line as the turn goes (`start`, `reasoning`, `text`, `tool_call`, `approval`,
`tool_result`, `retry`, `subagent`, `compaction`) and the same result object last, with
`"type": "result"`. The field names are a public interface (docs/usage.md): add, never
rename. Everything here is data for a program, so it stays English and untranslated.

`ScriptView` sits between the turn and the terminal view: it forwards every call to the
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

from generalAgent.agent.events import Compaction, FilesWritten, HookNotice, StreamEvent, SubagentProgress
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

    def on_reasoning(self, text: str) -> None:
        self.inner.on_reasoning(text)
        self.emit({"type": "reasoning", "text": text})

    def on_text(self, text: str) -> None:
        self.inner.on_text(text)
        self.emit({"type": "text", "text": text})

    def on_message_end(self) -> None:
        self.inner.on_message_end()

    def on_tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self.inner.on_tool_call(call_id, name, args)
        self.record.tool_calls.append(ToolCallRecord(call_id, name, dict(args)))
        self.emit({"type": "tool_call", "id": call_id, "name": name, "args": args})

    def on_tool_result(
        self, call_id: str, name: str, content: str, is_error: bool, shown: str | None = None
    ) -> None:
        self.inner.on_tool_result(call_id, name, content, is_error, shown)
        call = self.record.call(call_id)
        if call is not None and call.status == "running":
            call.status = "error" if is_error else "ok"
        self.emit(
            {"type": "tool_result", "id": call_id, "name": name, "ok": not is_error, "content": content}
        )

    def on_custom(self, event: StreamEvent) -> None:
        self.inner.on_custom(event)
        if isinstance(event, SubagentProgress):
            self.emit({"type": "subagent", "name": event.source, "text": event.text})
        elif isinstance(event, Compaction):
            source = {"subagent": event.source} if event.source else {}
            self.emit({**event.as_fields(), **source, "type": "compaction"})
        elif isinstance(event, HookNotice):
            self.emit({"type": "hook_notice", "text": event.text(), "template": event.template})
        elif isinstance(event, FilesWritten):
            self.emit({"type": "files_written", "paths": [str(path) for path in event.paths]})

    def on_retry(self, status: int | None, delay: float, number: int, limit: int) -> None:
        self.inner.on_retry(status, delay, number, limit)
        self.emit({"type": "retry", "status": status, "delay": delay, "attempt": number, "of": limit})

    def approve(self, request: dict[str, Any]) -> str:
        from generalAgent.tools.approval import NO, YES

        tool = str(request.get("tool", ""))
        call = self.record.call(str(request.get("call_id", "")))
        if self.approve_all:
            self.announce_approved(request)
            self.emit(
                {"type": "approval", "id": request.get("call_id"), "tool": tool, "decision": "approved"}
            )
            return YES
        answer = self.inner.approve(request)  # nobody to ask: it refuses, and says so on stderr
        if answer == NO:
            self.record.refused.append(tool)
            if call is not None:
                call.status = "refused"
        decision = "refused" if answer == NO else "approved"
        self.emit({"type": "approval", "id": request.get("call_id"), "tool": tool, "decision": decision})
        return answer

    def close(self) -> None:
        self.inner.close()


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
