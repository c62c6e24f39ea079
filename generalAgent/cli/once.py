"""`generalagent -p PROMPT`: one answer for scripts and pipes.

The final answer goes to stdout and nothing else does; tool lines, the session id and
usage go to stderr. Exit status: 0 answered, 1 the turn failed, 2 bad input or
configuration, 130 interrupted.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from generalAgent.cli.i18n import _
from generalAgent.cli.storage_errors import describe_storage_error
from generalAgent.cli.terminal_text import terminal_console, terminal_safe
from generalAgent.config.settings import Settings
from generalAgent.sessions import SessionCatalog

if TYPE_CHECKING:
    from generalAgent.tools.named_hosts import NamedHost

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def run_once(
    settings: Settings,
    prompt: str,
    resume: str | None,
    stdout=None,
    stderr=None,
    *,
    stdin_references: bool = False,
    allowed_hosts: Sequence[NamedHost] = (),
) -> int:
    """One turn. Text piped in with `-p -` is data (a log, a document, another program's
    output): its @names and #paths are not acted on unless `stdin_references`, so piped
    text cannot unlock a tool or copy `#~/.ssh` into the workspace. Nor does it name hosts
    fetch_web may reach without asking: only a typed prompt and `allowed_hosts` do."""
    out = stdout or sys.stdout
    err = terminal_console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)
    text = sys.stdin.read() if prompt == "-" else prompt
    if not text.strip():
        err.print(
            "[red]" + _("The prompt is empty.") + "[/] " + _("Give text after -p, or pipe it in with -p -.")
        )
        return EXIT_USAGE

    catalog = SessionCatalog(settings.paths.sessions_db)
    session_id = _session(catalog, resume, err)
    if session_id is None:
        return EXIT_USAGE

    from generalAgent.cli.render import TerminalView, format_cost, format_usage
    from generalAgent.cli.runtime import load_agent
    from generalAgent.cli.turn_input import prepare_turn
    from generalAgent.cli.turns import run_turn
    from generalAgent.graph.checkpoints import CheckpointStoreError
    from generalAgent.graph.turn import thread_config
    from generalAgent.providers.errors import describe_model_error
    from generalAgent.tools.registry import ToolConfigError

    try:
        agent = load_agent(settings)
    except (ToolConfigError, CheckpointStoreError) as exc:
        err.print("[red]" + escape(_("The agent could not start: {reason}").format(reason=exc)) + "[/]")
        return EXIT_USAGE
    # One turn and no later one: the enabled MCP servers are waited for (MCP_STARTUP_TIMEOUT at most).
    agent.parts.mcp.wait_for_startup()
    for notice in agent.notices:
        err.print(f"[dim]{escape(notice)}[/]")
    for notice in agent.parts.mcp.drain_notices():
        err.print(f"[yellow]{escape(notice)}[/]")
    try:
        config = thread_config(session_id)
        references = prompt != "-" or stdin_references
        prepared = prepare_turn(
            text,
            agent,
            config,
            session_id,
            Path.cwd(),
            references=references,
            typed=prompt != "-",
            allowed_hosts=allowed_hosts,
        )
        for warning in prepared.warnings:
            err.print(f"[yellow]{escape(warning)}[/]")
        if prepared.graph_input is None:
            for error in prepared.errors:
                err.print(f"[red]{escape(error)}[/]")
            return EXIT_USAGE
        # Reasoning goes where the tool lines go (stderr): stdout holds only the answer.
        view = TerminalView(err, stream_answer=False, reasoning=settings.model.show_reasoning)
        catalog.open_session(session_id, text.splitlines()[0])
        agent.parts.env.start_turn()
        result = run_turn(
            agent.graph,
            config,
            prepared.graph_input,
            view,
            lambda exc: (
                describe_model_error(exc, settings.model, _) or describe_storage_error(exc, settings.paths)
            ),
            on_cancel=agent.cancel,
        )
        # The disk may have filled during the turn: the turn's own error is what to report.
        with contextlib.suppress(sqlite3.Error):
            catalog.record_turn(session_id, text.splitlines()[0], result.usage)
        from generalAgent.providers.tokens import context_window

        gauge = (result.context_tokens, context_window(settings.model).tokens)
        cost = format_cost(result.usage, settings.model)
        line = format_usage(result.usage, view.elapsed(), gauge, cost)
        err.print("[dim]" + _("session {id}").format(id=session_id) + f" · {line}[/]")
        from generalAgent.cli.files_written import print_files_written

        print_files_written(err, agent.parts.env.files_written(session_id))
        if result.cancelled:
            err.print("[yellow]" + _("Interrupted.") + "[/]")
            return EXIT_INTERRUPTED
        if result.error:
            err.print(f"[red]✗ {escape(result.error)}[/]")
            return EXIT_FAILED
        # A model's answer may hold escape sequences (a clipboard write, a redrawn line).
        out.write(terminal_safe(result.answer).rstrip("\n") + "\n")
        out.flush()
        return EXIT_OK
    finally:
        agent.close()
        catalog.close()


def _session(catalog: SessionCatalog, resume: str | None, err: Console) -> str | None:
    if resume is None:
        return SessionCatalog.new_id()
    try:
        return catalog.resolve(resume).id
    except LookupError as exc:
        err.print(f"[red]{escape(str(exc))}[/]")
        return None
