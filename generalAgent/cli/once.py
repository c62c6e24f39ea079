"""`generalagent -p PROMPT`: one answer for scripts and pipes, as other terminal agents do it.

Text piped in is data appended to the prompt (`git diff | generalagent -p "review this"`);
`-p -` takes the whole prompt from stdin. With `--output-format text` (the default) the
answer goes to stdout and nothing else does; tool lines, the session id and usage go to
stderr. `json` prints one object at the end, `stream-json` one event per line as the turn
goes (cli/script_output.py). Nobody can answer an approval: a call that needs one runs only
when its tool is in `--allowed-tools` or with `--approve`, else it is refused.

The user's hooks run as in the chat (agent/session.py): SessionStart, UserPromptSubmit (a
block ends the run before anything is sent) and Stop, their lines on stderr.

Exit status: 0 answered, 1 the turn failed, 2 bad input or configuration, 3 a tool call
needed an approval and was refused (or a hook refused the prompt), 130 interrupted.

A `-p` session is not listed by `/sessions` unless `--save`; its id (on stderr, and in
JSON) resumes it, and `-c` continues the latest session of the folder, listed or not.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from rich.console import Console
from rich.markup import escape

from generalAgent.agent.files_changed import workspace_state, written_files
from generalAgent.agent.session import SessionController
from generalAgent.cli.files_written import print_files_written
from generalAgent.cli.script_output import (
    EventWriter,
    OutputFormat,
    ScriptRecord,
    ScriptView,
    result_object,
)
from generalAgent.cli.terminal_text import console_lines, terminal_console, terminal_safe
from generalAgent.config.settings import Settings
from generalAgent.i18n import N_, _, ngettext
from generalAgent.sessions import SessionCatalog, Usage

if TYPE_CHECKING:
    from generalAgent.tools.named_hosts import NamedHost

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
# How long a pipe may stay silent before its first byte. A producer that takes longer is
# waited for only this long, so that `-p` under a caller whose stdin is an open pipe nobody
# writes to (some CI runners, cron wrappers) does not hang; a line on stderr says so.
STDIN_FIRST_BYTE_SECONDS = 3.0
# Piped text goes into one message: far more than any context window holds is refused
# (index it and search it instead) rather than read into memory and sent.
MAX_PIPED_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class OnceOptions:
    resume: str | None = None  # a session id (prefix) or "last"
    continue_here: bool = False  # -c: the latest session started in this folder
    stdin_references: bool = False  # act on @names and #paths in piped text
    allowed_tools: tuple[str, ...] = ()  # run without asking (and offered, if discovered)
    approve_all: bool = False  # every call runs without asking
    output_format: OutputFormat = "text"
    save: bool = False  # list the session in /sessions
    allowed_hosts: tuple[NamedHost, ...] = ()  # --allow-host: fetch_web reaches them without asking


class PipedInputError(Exception):
    """Piped input that cannot be used; the message says why."""


@dataclass
class ScriptRun:
    """What a `-p` run prints, on this machine or on a server (cli/remote_views.py): one
    line on stderr for a run that stops, and the end of a turn, as text or JSON on stdout."""

    out: IO[str]
    err: Console
    output_format: OutputFormat
    model: str | None = None
    started: float = field(default_factory=time.monotonic)

    def fail(
        self,
        message: str,
        code: int = EXIT_USAGE,
        session_id: str | None = None,
        shown: bool = False,
        status: Literal["error", "refused"] = "error",
    ) -> int:
        """A run that stops before (or instead of) a turn: one line (unless `shown` already),
        and JSON when asked for."""
        if not shown:
            self.err.print(f"[red]{escape(message)}[/]")
        if self.output_format != "text":
            EventWriter(self.out)(
                result_object(
                    status=status,
                    exit_code=code,
                    error=message,
                    session_id=session_id,
                    model=self.model,
                    seconds=time.monotonic() - self.started,
                )
            )
        return code

    def finish(
        self,
        result: Any,
        record: ScriptRecord,
        session_id: str,
        files: list[Path],
        cost: tuple[float, str] | None = None,
        interrupted: str = N_("Interrupted."),
    ) -> int:
        """The end of a turn: why it did not answer (on stderr), then the answer (text) or
        the result object (JSON); returns the exit status."""
        refused = list(dict.fromkeys(record.refused))
        code, status = _outcome(result, refused)
        if result.cancelled:
            self.err.print("[yellow]" + escape(_(interrupted)) + "[/]")
        elif result.error:
            self.err.print(f"[red]✗ {escape(result.error)}[/]")
        elif refused:
            self.err.print(
                "[yellow]"
                + escape(
                    _(
                        "Refused without asking: {tools}. To let them run, add --allowed-tools {names} "
                        "(or --approve for every call)."
                    ).format(tools=", ".join(refused), names=",".join(refused))
                )
                + "[/]"
            )
        answered = status in ("answered", "refused")
        if self.output_format == "text":
            if answered:
                # A model's answer may hold escape sequences (a clipboard write, a redrawn line).
                self.out.write(terminal_safe(result.answer).rstrip("\n") + "\n")
                self.out.flush()
        else:
            EventWriter(self.out)(
                result_object(
                    status=status,
                    exit_code=code,
                    answer=result.answer if answered else "",
                    error=result.error,
                    session_id=session_id,
                    model=self.model,
                    usage=result.usage,
                    cost=cost,
                    record=record,
                    files_written=files,
                    seconds=time.monotonic() - self.started,
                )
            )
        return code


def run_once(
    settings: Settings,
    prompt: str,
    options: OnceOptions | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    stdin: IO[str] | None = None,
) -> int:
    """One turn. Piped text is data (a log, a document, another program's output): its
    @names and #paths are not acted on unless `stdin_references`, so piped text cannot
    unlock a tool or copy `#~/.ssh` into the workspace. Nor does it name hosts fetch_web
    may reach without asking: only a typed prompt and `allowed_hosts` do."""
    options = options or OnceOptions()
    out = stdout or sys.stdout
    err = terminal_console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)
    model = settings.model.model_name
    run = ScriptRun(out, err, options.output_format, model)
    fail = run.fail
    emit = EventWriter(out) if options.output_format == "stream-json" else None

    try:
        text, piped = read_message(prompt, stdin or sys.stdin, err)
    except PipedInputError as exc:
        return fail(str(exc))
    if not (text + piped).strip():
        return fail(_("The prompt is empty.") + " " + _("Give text after -p, or pipe it in with -p -."))

    catalog = SessionCatalog(settings.paths.sessions_db)
    try:
        session_id = _session(catalog, options, err)
    except LookupError as exc:
        catalog.close()
        return fail(str(exc))
    if emit:
        emit({"type": "start", "session_id": session_id, "model": model})

    from generalAgent.agent.loading import load_agent
    from generalAgent.cli.render import TerminalView, format_cost, format_usage
    from generalAgent.graph.checkpoints import CheckpointStoreError
    from generalAgent.tools.registry import ToolConfigError

    # The user's hooks (hooks.py), as the chat runs them: SessionStart now, UserPromptSubmit
    # before the prompt is sent, Stop after the turn; the graph's tools step runs them too.
    session = SessionController.in_folder(
        settings,
        catalog,
        settings.sources.trust,
        console_lines(err),
        Path.cwd(),
        session_id=session_id,
        listed=options.save,
        interactive=False,
    )
    for problem in session.hooks.problems:
        err.print("[yellow]" + escape(_(problem.template).format(**problem.fields)) + "[/]")
    session.start("startup" if catalog.get(session_id) is None else "resume")
    try:
        agent = load_agent(settings)
    except (ToolConfigError, CheckpointStoreError) as exc:
        catalog.close()
        return fail(_("The agent could not start: {reason}").format(reason=exc), session_id=session_id)
    # One turn and no later one: the enabled MCP servers are waited for (MCP_STARTUP_TIMEOUT at most).
    agent.parts.mcp.wait_for_startup()
    for notice in agent.notices:
        err.print(f"[dim]{escape(notice)}[/]")
    for notice in agent.parts.mcp.drain_notices(_):
        err.print(f"[yellow]{escape(notice)}[/]")
    try:
        registry_names = set(agent.parts.registry.names())
        for name in options.allowed_tools:
            if name not in registry_names and "__" not in name:  # MCP tools are <server>__<tool>
                err.print(
                    "[yellow]"
                    + escape(_("--allowed-tools: no tool is named {name}").format(name=name))
                    + "[/]"
                )
        # Reasoning goes where the tool lines go (stderr): stdout holds only the answer.
        terminal = TerminalView(err, stream_answer=False, reasoning=settings.model.show_reasoning)
        view = ScriptView(
            terminal,
            options.approve_all,
            emit,
            announce_approved=lambda request: err.print(
                "[dim]"
                + escape(
                    _("{tool}: approved by --approve").format(tool=terminal_safe(str(request.get("tool"))))
                )
                + "[/]"
            ),
        )
        workspace = agent.parts.env.workspace_for(session_id)
        before = workspace_state(workspace.root)
        session.state.approved = set(options.allowed_tools)
        outcome = session.send(
            text,
            lambda: agent,
            lambda: contextlib.nullcontext(view),
            first_line=next(line for line in f"{text}\n{piped}".splitlines() if line.strip()),
            references=prompt != "-" or options.stdin_references,
            typed=prompt != "-",
            allowed_hosts=options.allowed_hosts,
            piped=piped,
            piped_references=options.stdin_references,
            extra_mentions=[name for name in options.allowed_tools if name in registry_names],
        )
        if outcome.blocked:
            return fail(outcome.blocked, EXIT_REFUSED, session_id=session_id, shown=True, status="refused")
        if outcome.result is None:
            return fail("\n".join(outcome.errors), session_id=session_id)
        result = outcome.result
        # What the tools recorded (the working folder too), and what changed in outputs/ and
        # temp/ besides (a command the user approved may write there).
        changed = written_files(before, workspace_state(workspace.root))
        files = list(dict.fromkeys([*session.scope.files_written(), *changed]))
        gauge = (result.context_tokens, session.context_window())
        line = format_usage(
            result.usage, terminal.elapsed(), gauge, format_cost(result.usage, settings.model)
        )
        err.print("[dim]" + _("session {id}").format(id=session_id) + f" · {line}[/]")
        print_files_written(err, files)
        for notice in agent.parts.env.drain_notices(_):  # e.g. built-in knowledge imported
            err.print(f"[dim]{escape(notice)}[/]")
        for notice in agent.parts.mcp.drain_notices(_):  # e.g. a server restarted by a call
            err.print(f"[yellow]{escape(notice)}[/]")
        session.stop()
        return run.finish(result, view.record, session_id, files, cost=_cost(result.usage, settings))
    finally:
        agent.close()
        catalog.close()


def _outcome(result: Any, refused: list[str]) -> tuple[int, Any]:
    if result.cancelled:
        return EXIT_INTERRUPTED, "interrupted"
    if result.error:
        return EXIT_FAILED, "failed"
    if refused:
        return EXIT_REFUSED, "refused"
    return EXIT_OK, "answered"


def _cost(usage: Usage, settings: Settings) -> tuple[float, str] | None:
    price = settings.model.prices.get(settings.model.model_name or "")
    if price is None:
        return None
    return price.cost(usage.input_tokens, usage.cached_tokens, usage.output_tokens), (
        settings.model.model_price_currency
    )


def read_message(prompt: str, stdin: IO[str], err: Console) -> tuple[str, str]:
    """(the prompt, the piped data), for `-p` here and on a server. `-p -`: stdin is the
    prompt itself."""
    if prompt == "-":  # typed at a terminal too, up to Ctrl-D, as before
        return read_piped(stdin, wait=None, terminal=True) or "", ""
    piped = read_piped(stdin, wait=STDIN_FIRST_BYTE_SECONDS)
    if piped is None:
        err.print(
            "[yellow]"
            + escape(
                _(
                    "Nothing arrived on stdin within {seconds} s; answering without it. "
                    "Run with < /dev/null when nothing is piped, or pipe with -p - to wait."
                ).format(seconds=f"{STDIN_FIRST_BYTE_SECONDS:g}")
            )
            + "[/]"
        )
        return prompt, ""
    return prompt, piped


def read_piped(stdin: IO[str] | None, wait: float | None, terminal: bool = False) -> str | None:
    """The text piped on `stdin`: "" for nothing or a terminal (read from a terminal too with
    `terminal`); None when a pipe stayed silent for `wait` seconds (None: wait as long as it
    takes). Bytes that are not UTF-8 are decoded as the documents are (GB18030, Big5, …)."""
    if stdin is None or stdin.closed:
        return ""
    try:
        if stdin.isatty() and not terminal:
            return ""
        fd = stdin.fileno()
    except (OSError, ValueError, AttributeError):  # a StringIO in tests, a detached stream
        return stdin.read()
    if wait is not None and os.name != "nt":
        mode = os.fstat(fd).st_mode
        if (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) and not select.select([fd], [], [], wait)[0]:
            return None
    raw = getattr(stdin, "buffer", None)
    data = raw.read(MAX_PIPED_BYTES + 1) if raw is not None else stdin.read().encode("utf-8")
    if len(data) > MAX_PIPED_BYTES:
        raise PipedInputError(
            _(
                "The piped input is larger than {size} MB: too much for one message. "
                "Index it (generalagent index FILE) and ask about it instead."
            ).format(size=MAX_PIPED_BYTES // (1024 * 1024))
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        from generalAgent.documents.encoding import decode_text
        from generalAgent.documents.reading import DocumentError

        try:
            return decode_text(data, "stdin")
        except DocumentError as exc:  # binary data piped in: one line, not a traceback
            raise PipedInputError(exc.shown(_, ngettext)) from None


def _session(catalog: SessionCatalog, options: OnceOptions, err: Console) -> str:
    """The session this run continues, or a new id. Raises LookupError with a message."""
    if options.continue_here:
        latest = catalog.latest(folder=Path.cwd().resolve(), unlisted=True)
        if latest is not None:
            return latest.id
        err.print("[dim]" + escape(_("No earlier session in this folder; starting a new one.")) + "[/]")
        return SessionCatalog.new_id()
    if options.resume is None:
        return SessionCatalog.new_id()
    return catalog.resolve(options.resume).id
