"""Going back to just before an earlier message of the user's, files too if asked.

The engine of the chat's /rewind (cli/rewind.py, its view: a picker and two questions) and
of the Python API's `Session.rewind` (agent/api.py):

1. The files the agent wrote since then, in the working folder and `outputs/`, are planned
   from their snapshots (snapshots.py): restore, delete (created since), already as they
   were, or conflict (changed by someone else since the agent's last write: never
   overwritten). The caller decides whether they are restored, and separately whether the
   files created since are deleted.
2. The conversation is rewritten as it stood: one new checkpoint (LangGraph's
   `update_state`, a fork of the latest) that removes the message and everything after it.
   Older checkpoints are pruned as sessions go (graph/checkpoints.py), so nothing here
   relies on them: the stored history keeps every message (a cut only moves where the
   request starts), and what else the dropped turns changed is taken back from it: the
   summary of a cut made at or after that point is dropped (the next request sends the
   history from its start and cuts again), and the todo list is the one the last kept
   `todo_write` stored.
3. The session forgets its last turn (nothing to /retry) and how full its context was;
   the message's text comes back in the result, for the user to edit and send again.

Mentions, uploads and approvals kept "for this session" stay, as after /clear. It works
after a resume: the snapshots are on disk, keyed by session and turn.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generalAgent.agent.storage_errors import describe_storage_error
from generalAgent.i18n import _
from generalAgent.snapshots import FileRestore, SnapshotStore, digest, restore_plan

if TYPE_CHECKING:  # the tools load with LangChain, off the start-up path (agent/loading.py)
    from generalAgent.agent.loading import LoadedAgent
    from generalAgent.agent.session import SessionController
    from generalAgent.tools.workspace import Workspace

LOGGER = logging.getLogger(__name__)


class RewindError(Exception):
    """The conversation could not be taken back (the store failed); nothing changed. The
    message is one line for the user."""


@dataclass(frozen=True)
class UserTurn:
    """A message of the user's the conversation can go back to."""

    position: int  # among the user's messages of the session, from 0 (the snapshots' turn)
    index: int  # in the stored history
    text: str


@dataclass
class RestoreReport:
    restored: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # conflicts, refusals, created files kept


# -- pure parts -------------------------------------------------------------------------
def user_turns(messages: Sequence[Any]) -> list[UserTurn]:
    """The user's messages of a stored history, oldest first."""
    turns: list[UserTurn] = []
    for index, message in enumerate(messages):
        if getattr(message, "type", "") == "human":
            turns.append(UserTurn(len(turns), index, message_text(message)))
    return turns


def message_text(message: Any) -> str:
    """The text of a message (its text parts, when it has images)."""
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    parts = [
        p if isinstance(p, str) else str(p.get("text", "")) for p in content if isinstance(p, str | dict)
    ]
    return "".join(parts)


def summary_after(
    messages: Sequence[Any], summary: Mapping[str, Any] | None, turn: UserTurn
) -> Mapping[str, Any] | None:
    """The summary the conversation keeps when it goes back to before `turn`: the same one
    when its cut lies before the message, else none (it speaks for turns that are gone)."""
    through = (summary or {}).get("through")
    if not summary or not through:
        return summary
    for index, message in enumerate(messages):
        if getattr(message, "id", None) == through:
            return summary if index < turn.index else None
    return summary


def todos_before(
    messages: Sequence[Any], current: list[dict[str, Any]], turn: UserTurn
) -> list[dict[str, Any]]:
    """The todo list as it stood before `turn`: unchanged when no todo_write ran since,
    else the one the last kept todo_write stored (each item marked untrusted when that
    turn had read untrusted content, as todo_write would have done)."""
    from generalAgent.tools.provenance import read_untrusted_this_turn

    def writes(index: int, message: Any) -> list[tuple[int, dict[str, Any]]]:
        return [
            (index, call)
            for call in getattr(message, "tool_calls", None) or ()
            if call.get("name") == "todo_write"
        ]

    answered = {
        getattr(m, "tool_call_id", None)
        for m in messages
        if getattr(m, "type", "") == "tool" and getattr(m, "status", "success") != "error"
    }
    later = [c for i, m in enumerate(messages) if i >= turn.index for c in writes(i, m)]
    if not any(call.get("id") in answered for _i, call in later):
        return current
    kept = [
        c
        for i, m in enumerate(messages)
        if i < turn.index
        for c in writes(i, m)
        if c[1].get("id") in answered
    ]
    if not kept:
        return []
    index, call = kept[-1]
    untrusted = read_untrusted_this_turn(messages[:index])
    items = []
    for item in (call.get("args") or {}).get("todos") or ():
        if not isinstance(item, dict):
            continue
        todo: dict[str, Any] = {
            "content": str(item.get("content", "")).strip(),
            "status": str(item.get("status", "pending")),
            "priority": str(item.get("priority", "medium")),
        }
        if untrusted:
            todo["untrusted"] = True
        items.append(todo)
    return items


# -- files ------------------------------------------------------------------------------
def current_digest(path: Path) -> str | None:
    """SHA-256 of a regular file's content; None when it is missing or not a regular file."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def files_plan(store: SnapshotStore, session: str, turn: int) -> list[FileRestore]:
    """What going back to before `turn` would do to each file the agent wrote since."""
    writes = store.writes_since(session, turn)
    return restore_plan(writes, {w.path: current_digest(Path(w.path)) for w in writes})


def restore_files(
    plan: Sequence[FileRestore], store: SnapshotStore, workspace: Workspace, *, delete_created: bool
) -> RestoreReport:
    """Put the files of `plan` back; only inside the folders `workspace` may write now (a
    session resumed from another folder leaves that folder's files alone)."""
    from generalAgent.tools.workspace import WorkspaceError

    report = RestoreReport()
    for step in plan:
        real = Path(step.path)
        if step.action in {"unchanged", "conflict"}:
            if step.action == "conflict":
                report.kept.append(step.path)
            continue
        if not _writable(workspace, real) or (step.action == "delete" and not delete_created):
            report.kept.append(step.path)
            continue
        try:
            if step.action == "delete":
                workspace.remove_file(real)
                report.deleted.append(step.path)
            elif step.content_sha256 is not None:
                content = store.content(step.content_sha256)
                if digest(content) != step.content_sha256:  # the store itself was damaged
                    raise LookupError(step.path)
                workspace.write_bytes(real, content, step.mode)  # a file removed since gets its mode back
                report.restored.append(step.path)
        except (OSError, LookupError, WorkspaceError):
            report.kept.append(step.path)
    return report


def _writable(workspace: Workspace, real: Path) -> bool:
    """Whether `real` lies in the working folder or outputs/ of this run's workspace."""
    try:
        parent = real.parent.resolve()
    except OSError:
        return False
    target = parent / real.name
    return workspace.in_place(target) or workspace.in_folder(target, "outputs")


def rewound_update(messages: Sequence[Any], values: Mapping[str, Any], turn: UserTurn) -> dict[str, Any]:
    """The state update that takes the conversation back to just before `turn`."""
    from langchain_core.messages import RemoveMessage

    from generalAgent.tools.provenance import read_untrusted_in

    return {
        "messages": [RemoveMessage(id=m.id) for m in messages[turn.index :] if m.id],
        "summary": summary_after(messages, values.get("summary"), turn),
        "todos": todos_before(messages, list(values.get("todos") or []), turn),
        "new_mentions": [],
        "new_uploaded_files": [],
        "approvals": {},
        "context_request": None,
        # The lasting untrusted mark, as it stood before `turn` (tools/provenance.py); a
        # summary may hold what compacted messages read, so it keeps the mark.
        "read_untrusted": read_untrusted_in(messages[: turn.index])
        or bool(values.get("summary") and values.get("read_untrusted")),
    }


@dataclass(frozen=True)
class RewindResult:
    """What going back did: the message gone back to (its text, to edit and send again),
    how many of the user's messages went, and what became of the files."""

    turn: UserTurn
    dropped: int
    restored: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # conflicts, files outside what may be written, created files kept


def session_turns(agent: LoadedAgent, controller: SessionController) -> list[UserTurn]:
    """The user's messages of the session's stored conversation, oldest first."""
    state = agent.graph.get_state(controller.config())
    return user_turns(list(state.values.get("messages") or []))


def session_workspace(agent: LoadedAgent, controller: SessionController) -> Workspace:
    """The workspace the session's tools wrote through (its own folders, when it has them)."""
    scope = controller.scope
    return agent.parts.env.workspace_for(controller.id, None, scope.folders)


def rewind_plan(agent: LoadedAgent, controller: SessionController, turn: UserTurn) -> list[FileRestore]:
    """What going back to before `turn` would do to each file the agent wrote since."""
    return files_plan(agent.parts.env.snapshots, controller.id, turn.position)


def rewind_session(
    agent: LoadedAgent,
    controller: SessionController,
    turn: UserTurn,
    *,
    restore: bool,
    delete_created: bool = False,
) -> RewindResult:
    """Take the session back to just before `turn` (module docstring); the files of the
    plan restored when `restore`, those created since deleted too when `delete_created`.
    Raises RewindError when the conversation could not be rewritten (nothing changed)."""
    config = controller.config()
    state = agent.graph.get_state(config)
    messages = list(state.values.get("messages") or [])
    turns = user_turns(messages)
    if turn not in turns:
        raise RewindError(_("That message is no longer in the conversation."))
    store: SnapshotStore = agent.parts.env.snapshots
    plan = files_plan(store, controller.id, turn.position)
    try:
        agent.graph.update_state(config, rewound_update(messages, state.values, turn), as_node="finalize")
    except Exception as exc:  # e.g. the disk is full: the conversation and files stay as they were
        raise RewindError(describe_storage_error(exc, controller.settings.paths) or str(exc)) from exc
    report = RestoreReport()
    if restore:
        report = restore_files(
            plan, store, session_workspace(agent, controller), delete_created=delete_created
        )
        # What the session lists as written (the goodbye, -p) leaves out what this undid.
        controller.scope.forget_written(Path(path) for path in [*report.deleted, *report.restored])
    try:
        store.drop_since(controller.id, turn.position)
    except sqlite3.Error as exc:  # kept rows of dropped turns only ever show up as conflicts
        LOGGER.warning("snapshots of the dropped turns not forgotten: %s", exc)
    session = controller.state
    session.last_turn = session.cancelled_turn = None
    session.context_tokens = 0
    return RewindResult(
        turn=turn,
        dropped=len(turns) - turn.position,
        restored=tuple(report.restored),
        deleted=tuple(report.deleted),
        kept=tuple(report.kept),
    )
