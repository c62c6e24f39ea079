"""/rewind, the chat's view of going back (agent/rewind.py is the engine).

`/rewind` opens a picker of the session's messages (newest first, arrow keys, as the
session picker); `/rewind N` goes back over the last N of them without one. The files the
agent wrote since then are listed with what going back would do to each (a file removed
since is written back with the permission bits it had), and the user chooses whether to
restore them and, separately, whether to delete the files created since; then the
conversation goes back and the message returns to the input line (the prompt's default
text) for editing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from generalAgent.agent.rewind import (
    RewindError,
    RewindResult,
    UserTurn,
    rewind_plan,
    rewind_session,
    session_turns,
    session_workspace,
)
from generalAgent.cli.chat_handle import ChatHandle
from generalAgent.cli.terminal_text import terminal_safe, typed_answer
from generalAgent.i18n import N_, _, ngettext
from generalAgent.snapshots import FileRestore

if TYPE_CHECKING:  # the tools load with LangChain, off the start-up path (agent/loading.py)
    from generalAgent.tools.workspace import Workspace

PICKER_LINE_CHARS = 90
YES = {"y", "yes", "是", "好"}
ACTIONS = {
    "restore": N_("restore"),
    "delete": N_("delete"),
    "unchanged": N_("as it was"),
    "conflict": N_("changed since; left as it is"),
}


def picker_line(number: int, turn: UserTurn) -> str:
    """One message in the picker: how many back, its first line."""
    first = " ".join(turn.text.split())
    if len(first) > PICKER_LINE_CHARS:
        first = first[: PICKER_LINE_CHARS - 1] + "…"
    return terminal_safe(f"{number:>3}  {first}").replace("\n", " ")


def rewind_command(chat: ChatHandle, argument: str) -> None:
    """The /rewind handler (module docstring); `chat` is the running cli/chat.py Chat."""
    console: Console = chat.console
    agent = chat.agent()
    controller = chat.session
    turns = session_turns(agent, controller)
    if not turns:
        console.print("[dim]" + _("Nothing to go back to yet: this session has no message.") + "[/]")
        return
    turn = _chosen(console, turns, argument.strip())
    if turn is None:
        return
    plan = rewind_plan(agent, controller, turn)
    workspace = session_workspace(agent, controller)
    try:
        restore, delete_created = _ask_about_files(console, plan, lambda path: shown_path(workspace, path))
    except (EOFError, KeyboardInterrupt):  # Ctrl-C or Ctrl-D at a question: nothing is done
        console.print("[dim]" + _("Nothing changed.") + "[/]")
        return
    try:
        result = rewind_session(agent, controller, turn, restore=restore, delete_created=delete_created)
    except RewindError as exc:
        console.print("[red]" + escape(_("Could not go back: {reason}").format(reason=exc)) + "[/]")
        return
    if restore:
        _show_report(console, result, lambda path: shown_path(workspace, path))
    chat.prompt_default = turn.text
    console.print(
        "[green]"
        + escape(
            ngettext(
                "Went back over {count} message of yours.",
                "Went back over {count} messages of yours.",
                result.dropped,
            ).format(count=result.dropped)
        )
        + "[/] [dim]"
        + escape(_("The message is on the input line: edit it and press Enter, or Ctrl-C to clear it."))
        + "[/]"
    )


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


def _show_report(console: Console, report: RewindResult, shown: Callable[[str], str]) -> None:
    for template, paths, style in (
        (N_("Restored: {paths}"), report.restored, "green"),
        (N_("Deleted: {paths}"), report.deleted, "green"),
        (N_("Left as they are: {paths}"), report.kept, "yellow"),
    ):
        if paths:
            line = _(template).format(paths=", ".join(shown(p) for p in paths))
            console.print(f"[{style}]{escape(line)}[/]", highlight=False, soft_wrap=True)
