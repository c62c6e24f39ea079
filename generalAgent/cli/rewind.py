"""/rewind: back to just before an earlier message of the user's, files too if they choose.

`/rewind` opens a picker of the session's messages (newest first, arrow keys, as the
session picker); `/rewind N` goes back over the last N of them without one. Then:

1. The files the agent wrote since then, in the working folder and `outputs/`, are listed
   from their snapshots (snapshots.py): restored, deleted (created since), already as
   they were, or in conflict (changed by someone else since the agent's last write: never
   overwritten); a file removed since (by a command the agent ran) is written back with
   the permission bits it had. The user chooses whether to restore them, and separately whether to
   delete the files created since.
2. The conversation is rewritten as it stood: one new checkpoint (LangGraph's
   `update_state`, a fork of the latest) that removes the message and everything after it.
   Older checkpoints are pruned as sessions go (graph/checkpoints.py), so nothing here
   relies on them: the stored history keeps every message (a cut only moves where the
   request starts), and what else the dropped turns changed is taken back from it: the
   summary of a cut made at or after that point is dropped (the next request sends the
   history from its start and cuts again), and the todo list is the one the last kept
   `todo_write` stored.
3. The message returns to the input line (the prompt's default text) for editing.

Mentions, uploads and approvals kept "for this session" stay, as after /clear. It works
after `--resume`: the snapshots are on disk, keyed by session and turn.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from generalAgent.agent.storage_errors import describe_storage_error
from generalAgent.cli.chat_handle import ChatHandle
from generalAgent.cli.terminal_text import terminal_safe, typed_answer
from generalAgent.i18n import N_, _, ngettext
from generalAgent.snapshots import FileRestore, SnapshotStore, digest, restore_plan

if TYPE_CHECKING:  # the tools load with LangChain, off the start-up path (agent/loading.py)
    from generalAgent.tools.workspace import Workspace

LOGGER = logging.getLogger(__name__)
PICKER_LINE_CHARS = 90
YES = {"y", "yes", "是", "好"}
ACTIONS = {
    "restore": N_("restore"),
    "delete": N_("delete"),
    "unchanged": N_("as it was"),
    "conflict": N_("changed since; left as it is"),
}


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


def picker_line(number: int, turn: UserTurn) -> str:
    """One message in the picker: how many back, its first line."""
    first = " ".join(turn.text.split())
    if len(first) > PICKER_LINE_CHARS:
        first = first[: PICKER_LINE_CHARS - 1] + "…"
    return terminal_safe(f"{number:>3}  {first}").replace("\n", " ")


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


# -- the command ------------------------------------------------------------------------
def rewind_command(chat: ChatHandle, argument: str) -> None:
    """The /rewind handler (module docstring); `chat` is the running cli/chat.py Chat."""
    console: Console = chat.console
    agent = chat.agent()
    config = chat.session.config()
    state = agent.graph.get_state(config)
    messages = list(state.values.get("messages") or [])
    turns = user_turns(messages)
    if not turns:
        console.print("[dim]" + _("Nothing to go back to yet: this session has no message.") + "[/]")
        return
    turn = _chosen(console, turns, argument.strip())
    if turn is None:
        return
    env = agent.parts.env
    store: SnapshotStore = env.snapshots
    plan = files_plan(store, chat.session.id, turn.position)
    workspace = env.workspace_for(chat.session.id)
    try:
        restore, delete_created = _ask_about_files(console, plan, lambda path: shown_path(workspace, path))
    except (EOFError, KeyboardInterrupt):  # Ctrl-C or Ctrl-D at a question: nothing is done
        console.print("[dim]" + _("Nothing changed.") + "[/]")
        return
    try:
        agent.graph.update_state(config, rewound_update(messages, state.values, turn), as_node="finalize")
    except Exception as exc:  # e.g. the disk is full: the conversation and files stay as they were
        reason = describe_storage_error(exc, chat.settings.paths) or str(exc)
        console.print("[red]" + escape(_("Could not go back: {reason}").format(reason=reason)) + "[/]")
        return
    if restore:
        report = restore_files(plan, store, workspace, delete_created=delete_created)
        _show_report(console, report, lambda path: shown_path(workspace, path))
        # The goodbye's "Files written" list names what the session leaves behind.
        chat.session.scope.forget_written(Path(path) for path in [*report.deleted, *report.restored])
    try:
        store.drop_since(chat.session.id, turn.position)
    except sqlite3.Error as exc:  # kept rows of dropped turns only ever show up as conflicts
        LOGGER.warning("snapshots of the dropped turns not forgotten: %s", exc)
    state = chat.session.state
    state.last_turn = state.cancelled_turn = None
    state.context_tokens = 0
    chat.prompt_default = turn.text
    dropped = len(turns) - turn.position
    console.print(
        "[green]"
        + escape(
            ngettext(
                "Went back over {count} message of yours.",
                "Went back over {count} messages of yours.",
                dropped,
            ).format(count=dropped)
        )
        + "[/] [dim]"
        + escape(_("The message is on the input line: edit it and press Enter, or Ctrl-C to clear it."))
        + "[/]"
    )


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


def _chosen(console: Console, turns: list[UserTurn], argument: str) -> UserTurn | None:
    newest_first = list(reversed(turns))
    if argument:
        if argument.isdigit() and 1 <= int(argument) <= len(turns):
            return newest_first[int(argument) - 1]
        console.print(
            "[yellow]"
            + escape(
                _("/rewind N: N from 1 (your last message) to {count}; /rewind alone lets you pick.").format(
                    count=len(turns)
                )
            )
            + "[/]"
        )
        return None
    lines = [picker_line(number, turn) for number, turn in enumerate(newest_first, start=1)]
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        for line in lines:
            console.print(escape(line), highlight=False)
        console.print("[dim]" + escape(_("/rewind N goes back to before message N of this list.")) + "[/]")
        return None
    from generalAgent.cli.session_resume import pick_line

    header = _("Go back to before which message? ↑/↓ choose · Enter goes back · Esc cancels")
    index = pick_line(lines, header)
    if index is None:
        console.print("[dim]" + _("Nothing changed.") + "[/]")
        return None
    return newest_first[index]


def shown_path(workspace: Workspace, path: str) -> str:
    """A file as the tools name it (notes.md, outputs/chart.png); its real path elsewhere."""
    from generalAgent.tools.workspace import WorkspaceError

    try:
        return terminal_safe(workspace.display(Path(path)))
    except (WorkspaceError, OSError):
        return terminal_safe(path)


def _ask_about_files(
    console: Console, plan: Sequence[FileRestore], shown: Callable[[str], str]
) -> tuple[bool, bool]:
    """(restore the files, delete those created since): asked only when there is something to do."""
    if not plan:
        return False, False
    console.print("[bold]" + escape(_("Files the agent wrote since then:")) + "[/]")
    for step in plan:
        style = "yellow" if step.action == "conflict" else "dim" if step.action == "unchanged" else ""
        text = f"  {_(ACTIONS[step.action])}: {shown(step.path)}"
        console.print(
            f"[{style}]{escape(text)}[/]" if style else escape(text), highlight=False, soft_wrap=True
        )
    actionable = [s for s in plan if s.action in {"restore", "delete"}]
    if not actionable:
        return False, False
    restore = _yes(console, _("Restore these files as they were then? [y/N] "))
    created = sum(1 for s in actionable if s.action == "delete")
    delete_created = (
        restore
        and created > 0
        and _yes(
            console,
            ngettext(
                "Delete the {count} file the agent created since then? [y/N] ",
                "Delete the {count} files the agent created since then? [y/N] ",
                created,
            ).format(count=created),
        )
    )
    return restore, delete_created


def _yes(console: Console, question: str) -> bool:
    typed = console.input("[bold]" + escape(question) + "[/]")
    return typed_answer(typed) in YES


def _show_report(console: Console, report: RestoreReport, shown: Callable[[str], str]) -> None:
    for template, paths, style in (
        (N_("Restored: {paths}"), report.restored, "green"),
        (N_("Deleted: {paths}"), report.deleted, "green"),
        (N_("Left as they are: {paths}"), report.kept, "yellow"),
    ):
        if paths:
            line = _(template).format(paths=", ".join(shown(p) for p in paths))
            console.print(f"[{style}]{escape(line)}[/]", highlight=False, soft_wrap=True)
