"""The chat's slash commands that act on the session: move to another, name it, run a turn
again, reshape its context, attach files, leave.

Handlers `(chat, argument)` of their records in cli/builtin_commands.py; what a session
holds, and the reset when the chat moves to another one, is agent/session.py's.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import replace
from pathlib import Path

from rich.markup import escape

from generalAgent.cli.chat_handle import AgentUnavailable, ChatHandle
from generalAgent.cli.custom_commands import CustomCommand
from generalAgent.cli.terminal_text import one_line
from generalAgent.display import describe_file
from generalAgent.i18n import _, ngettext
from generalAgent.sessions import SessionInfo


def new_session(chat: ChatHandle, argument: str) -> None:
    chat.session.switch()
    chat.console.print("[green]" + _("New session {id}.").format(id=chat.session.id) + "[/]")
    chat.session.start("new")


def continue_here(chat: ChatHandle) -> None:
    """-c: resume the latest session started in this folder (a `-p` run's too), if any."""
    latest = chat.session.catalog.latest(folder=Path.cwd().resolve(), unlisted=True)
    if latest is None:
        chat.console.print("[dim]" + _("No earlier session in this folder; starting a new one.") + "[/]")
        return
    resume_session(chat, latest.id)


def resume_session(chat: ChatHandle, argument: str) -> None:

    try:
        info = pick_session(chat) if argument in {"", "last"} else chat.session.catalog.resolve(argument)
    except LookupError as exc:
        chat.console.print(f"[yellow]{escape(str(exc))}[/]")
        return
    if info is None:
        chat.console.print("[dim]" + _("No session picked: this is a new one.") + "[/]")
        return
    chat.session.switch(info.id, info.title)
    chat.console.print(
        "[green]"
        + _("Resumed {id}").format(id=info.id)
        + f"[/] [dim]· {escape(info.title)} · "
        + ngettext("{count} turn", "{count} turns", info.turns).format(count=info.turns)
        + f" · {info.age()}[/]"
    )
    from generalAgent.cli.session_resume import last_turns, show_recap

    with contextlib.suppress(AgentUnavailable):  # it has said why; the chat ends at the prompt
        messages = chat.agent().graph.get_state(chat.session.config()).values.get("messages") or []
        show_recap(chat.console, last_turns(messages))


def pick_session(chat: ChatHandle) -> SessionInfo | None:
    """The latest session, or in a terminal the one picked from the recent ones."""
    from generalAgent.cli.session_resume import PICKER_SESSIONS
    from generalAgent.cli.session_resume import pick_session as pick

    sessions = chat.session.catalog.recent(limit=PICKER_SESSIONS)
    if not sessions:
        raise LookupError(_("No saved session to resume yet."))
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return sessions[0]
    # The folder a session was started in, where the catalog records it.
    return pick(sessions, lambda info: getattr(info, "folder", None))


def rename_session(chat: ChatHandle, argument: str) -> None:
    title = " ".join(argument.split())
    if not title:
        chat.console.print("[yellow]" + _("/rename TITLE: the name /sessions and --resume show") + "[/]")
        return
    session = chat.session
    session.catalog.open_session(session.id, session.state.first_line or title)
    session.catalog.rename(session.id, title)
    session.state.first_line = session.state.first_line or title
    chat.console.print("[green]" + escape(_("Renamed to {title}").format(title=title)) + "[/]")


def retry_turn(chat: ChatHandle, argument: str) -> None:
    """After an error, resume where the turn failed; after Ctrl-C, send the message again."""
    agent = chat.agent()
    session = chat.session
    config = session.config()
    if agent.graph.get_state(config).next:
        chat.run_turn(agent, None)
        return
    if session.state.cancelled_turn is None:
        chat.console.print("[dim]" + _("Nothing to retry: the last turn finished.") + "[/]")
        return
    from generalAgent.agent.turns import discard_last_turn

    turn, session.state.cancelled_turn = session.state.cancelled_turn, None
    discard_last_turn(agent.graph, config)
    chat.run_turn(agent, turn)


def compact_context(chat: ChatHandle, focus: str) -> None:
    from generalAgent.graph.turn import context_request_input

    chat.run_turn(chat.agent(), context_request_input("compact", focus=focus), context_only=True)


def clear_context(chat: ChatHandle, argument: str) -> None:
    from generalAgent.graph.turn import context_request_input

    chat.run_turn(chat.agent(), context_request_input("clear"), context_only=True)


def attach(chat: ChatHandle, argument: str) -> None:
    """/upload PATH: files for the next message (the agent hears of them in its reminder)."""
    if not argument:
        chat.console.print(
            "[yellow]" + _("/upload PATH: a file, a folder or a glob such as docs/*.pdf") + "[/]"
        )
        return
    from generalAgent.agent.chat_input import split_paths
    from generalAgent.agent.turn_input import attach_files

    agent = chat.agent()
    report = attach_files(agent, chat.session.id, split_paths(argument, Path.cwd()), Path.cwd())
    for problem in [*report.notices, *report.problems]:
        chat.console.print(f"[yellow]{escape(problem)}[/]")
    if not report.files and not report.problems and not report.notices:
        chat.console.print(
            "[yellow]" + escape(_("Nothing matches {pattern}.").format(pattern=argument)) + "[/]"
        )
    for upload in report.files:
        chat.console.print(f"[dim]📎 {escape(one_line(describe_file(upload, ngettext, _)))}[/]")
    chat.session.state.pending_uploads += report.files


def run_custom_command(chat: ChatHandle, command: CustomCommand, argument: str) -> None:
    """The body, with the arguments in it, sent exactly as a typed line; for this turn
    only, the command's model and the tools it names (as if @mentioned)."""
    text = command.expand(argument)
    if not text:
        chat.console.print(
            "[yellow]"
            + escape(_("{name} is empty: {path}").format(name=command.name, path=command.path))
            + "[/]"
        )
        return
    if not command.model or command.model == chat.model_name:
        chat.send(text, mentions=command.allowed_tools)
        return
    agent = chat.agent()
    before = chat.settings
    agent.switch_model(replace(before, model=before.model.model_copy(update={"model_name": command.model})))
    try:
        chat.send(text, mentions=command.allowed_tools)
    finally:
        agent.switch_model(before)


def quit_chat(chat: ChatHandle, argument: str) -> bool:
    chat.farewell()
    return False
