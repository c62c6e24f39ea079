"""Everything a turn reports to a front end, as typed records read once at the boundary.

The turn runner (agent/turns.py) hands a view (its `TurnView`) one `TurnEvent` at a time
and each approval question as an `ApprovalRequest`: the model's text and reasoning as they
stream, the end of a model message, each tool call's start and end, the client's retries,
and the graph's custom events below. Every view (the chat, `-p`, the editor, the Python
API) matches on these types, never on dict keys or a method per kind.

Nodes and tools write plain dicts to LangGraph's stream writer (they cross a LangGraph
Server's wire as JSON): `{"subagent": id, "text": ...}`, `{"compaction": {...}}`,
`{"hook_notice": {...}}`, `{"usage": {...}}`, `{"files_written": [...]}`,
`{"reading": {...}}`, `{"retry": {...}}` (graph/model_retries.py: the model client waits
to retry, in the user's process and on a server alike). The turn runner
(agent/turns.py) turns each into one of these frozen records with `event_from_custom`, so
a view matches on a type instead of reading keys, and one that does not know a kind of
event is found by the type checker, not by a user.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generalAgent.display import Message
from generalAgent.sessions import Usage


@dataclass(frozen=True)
class SubagentProgress:
    """A line of a sub-agent's work (started, a tool call, its answer, done or failed)."""

    source: str  # the sub-agent's context id (subagent-xxxxxxxx)
    text: str
    said: Message | None = None  # the same line as data, to show in the UI language


@dataclass(frozen=True)
class Compaction:
    """A summary of the history being written (started), written (done), skipped or
    failed (plain: the cut goes on without one), cleared, or nothing to do."""

    state: str
    messages: int = 0
    tokens: int | None = None
    reason: str | None = None
    source: str | None = None  # a sub-agent's compaction: its context id

    def as_fields(self) -> dict[str, Any]:
        """The record as the wire carries it (cli/render.py words it from these)."""
        fields: dict[str, Any] = {"state": self.state, "messages": self.messages}
        if self.tokens is not None:
            fields["tokens"] = self.tokens
        if self.reason is not None:
            fields["reason"] = self.reason
        return fields


@dataclass(frozen=True)
class HookNotice:
    """What a hook of the user's said during a turn (a timeout, a failure): one line."""

    template: str  # English, the msgid of the UI's catalog
    # As the hook gave them: a template may format a number ("{seconds:g} s").
    fields: Mapping[str, Any] = field(default_factory=dict)

    def text(self, translate: Callable[[str], str] = str) -> str:
        try:
            return translate(self.template).format(**self.fields)
        except (KeyError, IndexError, ValueError):  # fields that do not fit: the words as they are
            return translate(self.template)


@dataclass(frozen=True)
class UsageReport:
    """Tokens a call outside the main model calls spent: a sub-agent's, a summary's."""

    usage: Usage


@dataclass(frozen=True)
class FilesWritten:
    """A file tool wrote these files (real paths) in the user's folder or the workspace."""

    paths: tuple[Path, ...]


@dataclass(frozen=True)
class ReadingProgress:
    """How far a tool's reading of a large file has got (tools/reading_progress.py)."""

    name: str
    stage: str = ""
    done: int = 0
    total: int = 0


StreamEvent = SubagentProgress | Compaction | HookNotice | UsageReport | FilesWritten | ReadingProgress


@dataclass(frozen=True)
class TextChunk:
    """A piece of the model's answer, as it streams."""

    text: str


@dataclass(frozen=True)
class ReasoningChunk:
    """A piece of what the model thinks (reasoning models), as it streams."""

    text: str


@dataclass(frozen=True)
class MessageEnd:
    """A model message is complete (its tool calls, if any, come next)."""


@dataclass(frozen=True)
class ToolStart:
    """The model called a tool (a call whose arguments were not JSON has them as
    `{"<invalid JSON>": text}`)."""

    call_id: str
    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class ToolEnd:
    """A tool call's answer, as the model gets it; `shown`, a failed call's error in the UI
    language for a person (None: show `content`)."""

    call_id: str
    name: str
    content: str
    is_error: bool
    shown: str | None = None


@dataclass(frozen=True)
class RetryNotice:
    """The model client waits `delay` seconds before retry `number` of `limit`; `status` is
    the failed response's HTTP status (None: no response, a dropped connection)."""

    status: int | None
    delay: float
    number: int
    limit: int


TurnEvent = TextChunk | ReasoningChunk | MessageEnd | ToolStart | ToolEnd | RetryNotice | StreamEvent


@dataclass(frozen=True)
class ApprovalRequest:
    """One call the user is asked about (tools/judge.py builds the question): what it is,
    why it asks, the change or the scripts it would run, and `shown`, the digest of all
    that, which the answer is bound to. `number` of `of`: its place among the calls asked
    about at once."""

    call_id: str
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    reason_template: str | None = None  # English, the msgid the terminal words it from
    reason_fields: Mapping[str, Any] = field(default_factory=dict)
    diff: str = ""
    command_args: tuple[str, ...] = ()  # the arguments that are commands (shown whole)
    files: tuple[Mapping[str, Any], ...] = ()  # scripts the command runs: path, size, head, complete
    configuration: bool = False  # a write to the folder's own configuration: asked each time
    shown: str = ""
    number: int = 1
    of: int = 1

    @classmethod
    def from_question(cls, question: Mapping[str, Any], number: int = 1, of: int = 1) -> ApprovalRequest:
        """The record of one question of the graph's approval pause (a dict on the wire)."""
        args = question.get("args")
        fields = question.get("reason_fields")
        template = question.get("reason_template")
        return cls(
            call_id=str(question.get("call_id") or ""),
            tool=str(question.get("tool") or "tool"),
            args=dict(args) if isinstance(args, Mapping) else {},
            reason=str(question.get("reason") or ""),
            reason_template=str(template) if template else None,
            reason_fields=dict(fields) if isinstance(fields, Mapping) else {},
            diff=str(question.get("diff") or ""),
            command_args=tuple(str(a) for a in question.get("command_args") or ()),
            files=tuple(f for f in question.get("files") or () if isinstance(f, Mapping)),
            configuration=bool(question.get("configuration")),
            shown=str(question.get("shown") or ""),
            number=number,
            of=of,
        )

    def as_dict(self) -> dict[str, Any]:
        """The request as the Python API's `approve` and the terminal's question take it."""
        request: dict[str, Any] = {
            "call_id": self.call_id,
            "tool": self.tool,
            "args": dict(self.args),
            "reason": self.reason,
            "reason_fields": dict(self.reason_fields),
            "command_args": list(self.command_args),
            "files": [dict(f) for f in self.files],
            "configuration": self.configuration,
            "shown": self.shown,
            "number": self.number,
            "of": self.of,
        }
        if self.reason_template:
            request["reason_template"] = self.reason_template
        if self.diff:
            request["diff"] = self.diff
        return request


def event_from_custom(data: Any) -> StreamEvent | RetryNotice | None:
    """The typed record of one custom stream event, or None for one this release does not
    know (a newer server's, a malformed one): never an exception."""
    if not isinstance(data, Mapping):
        return None
    source = data.get("subagent")
    if isinstance(data.get("usage"), Mapping):
        return UsageReport(Usage.from_metadata(data["usage"]))
    compaction = data.get("compaction")
    if isinstance(compaction, Mapping):
        return Compaction(
            state=str(compaction.get("state", "")),
            messages=_int(compaction.get("messages")),
            tokens=_int(compaction["tokens"]) if "tokens" in compaction else None,
            reason=str(compaction["reason"]) if compaction.get("reason") is not None else None,
            source=str(source) if source else None,
        )
    if source:
        return SubagentProgress(str(source), str(data.get("text", "")), Message.from_data(data.get("said")))
    notice = data.get("hook_notice")
    if isinstance(notice, Mapping):
        given = notice.get("fields")
        fields: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        return HookNotice(str(notice.get("template", "")), {str(k): v for k, v in fields.items()})
    written = data.get("files_written")
    if isinstance(written, list):
        return FilesWritten(tuple(Path(str(path)) for path in written))
    reading = data.get("reading")
    if isinstance(reading, Mapping):
        done = _int(reading.get("done"))
        total = max(_int(reading.get("total")), done)
        return ReadingProgress(str(reading.get("name", "")), str(reading.get("stage", "")), done, total)
    retry = data.get("retry")
    if isinstance(retry, Mapping):
        status = retry.get("status")
        return RetryNotice(
            status=_int(status) if status is not None else None,
            delay=_seconds(retry.get("delay")),
            number=_int(retry.get("number")),
            limit=_int(retry.get("limit")),
        )
    return None


def _seconds(value: Any) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return 0.0
    return seconds if 0.0 <= seconds < float("inf") else 0.0


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
