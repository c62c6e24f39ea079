"""The graph's custom stream events as typed records, read once at the boundary to the front ends.

Nodes and tools write plain dicts to LangGraph's stream writer (they cross a LangGraph
Server's wire as JSON): `{"subagent": id, "text": ...}`, `{"compaction": {...}}`,
`{"hook_notice": {...}}`, `{"usage": {...}}`, `{"files_written": [...]}`,
`{"reading": {...}}`. The turn runner
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


def event_from_custom(data: Any) -> StreamEvent | None:
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
    return None


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
