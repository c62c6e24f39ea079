"""The chat and `-p` pointed at a served deployment (`generalagent --server URL`).

The engine is agent/remote.py (a LangGraph Server or Aegra deployment reached with
langgraph_sdk); the views are the local ones: `TerminalView` shows the turn and asks the
approval questions with `ask_in_terminal`, `-p` wraps it in `ScriptView` as it does for
a local graph. Only what a server changes is here: a thread instead of a local session
(new, resumed by id, the user's own listed with /threads), the token from
REMOTE_SERVER_TOKEN, and the files written named as the server's.

A server that cannot be reached, or refuses the token, is one line and exit status 2
before anything is sent; one that goes away during a turn is one line, the chat goes on
and the thread stays on the server to be resumed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from generalAgent.agent.events import ApprovalRequest, FilesWritten, TurnEvent
from generalAgent.cli.once import (
    EXIT_OK,
    EXIT_USAGE,
    PipedInputError,
    ScriptRun,
    read_message,
)
from generalAgent.cli.terminal_text import one_line, terminal_console, terminal_safe
from generalAgent.config.settings import Settings
from generalAgent.i18n import N_, _

if TYPE_CHECKING:
    from generalAgent.agent.remote import RemoteAgent
    from generalAgent.agent.remote_attachments import ServerMessage
    from generalAgent.agent.turns import TurnResult
    from generalAgent.cli.script_output import OutputFormat

FILES_ON_SERVER = N_("Files written on the server ({count}):")
CONNECTED = N_("Connected to {url} · thread {thread}")
THREAD_LINE = N_("thread {id}")
REMOTE_HELP = N_(
    "On a server: /new starts a thread, /threads lists yours, /resume ID continues one, /quit leaves. "
    "Approvals are asked here; the tools run on the server."
)
NO_THREADS = N_("No threads of yours on this server yet.")
RESUME_WHICH = N_("Give the thread's id: /resume ID (/threads lists them).")
UNKNOWN_COMMAND = N_("{command}: not a command with --server (/help lists them).")
INTERRUPTED = N_("Interrupted: the run was cancelled on the server.")


class RemoteTurnView:
    """The local view (`inner`, a TerminalView or a ScriptView) and a record of the files
    the server's tools wrote (FilesWritten), named after the turn."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.files: list[Path] = []

    def on_event(self, event: TurnEvent) -> None:
        if isinstance(event, FilesWritten):
            self.files += [path for path in event.paths if path not in self.files]
        self.inner.on_event(event)

    def approve(self, request: ApprovalRequest) -> str:
        return str(self.inner.approve(request))

    def close(self) -> None:
        self.inner.close()


def connected(settings: Settings, url: str) -> RemoteAgent:
    """The deployment at `url`, checked (it answers, it accepts the token); RemoteError
    (one line) when it is not."""
    from generalAgent.agent.remote import RemoteAgent

    token = settings.remote.remote_server_token
    agent = RemoteAgent(url, token.get_secret_value() if token else None, settings.remote.remote_server_graph)
    try:
        agent.check()
    except BaseException:
        agent.close()
        raise
    return agent


def print_files_on_server(console: Console, files: list[Path]) -> None:
    if not files:
        return
    console.print(f"[green]{escape(_(FILES_ON_SERVER).format(count=len(files)))}[/]", highlight=False)
    for path in files:
        console.print(f"[green]  {escape(one_line(str(path)))}[/]", highlight=False)


def usage_line(result: TurnResult, seconds: float) -> str:
    from generalAgent.cli.render import format_usage

    return format_usage(result.usage, seconds)


def run_remote_once(
    settings: Settings,
    url: str,
    prompt: str,
    options: RemoteOptions | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    stdin: IO[str] | None = None,
) -> int:
    """`-p` on the server: the answer on stdout; tool lines, the thread and usage on stderr
    (`json`: one object at the end; `stream-json`: a line per event, as locally, the
    thread's id as `session_id`). Nobody can answer an approval: a call runs when its tool
    is in `allowed_tools` or with `approve_all`, else it is refused (exit 3), as locally."""
    from generalAgent.cli.render import TerminalView
    from generalAgent.cli.script_output import EventWriter, ScriptView

    options = options or RemoteOptions(prompt=prompt)
    out = stdout or sys.stdout
    err = terminal_console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)
    run = ScriptRun(out, err, options.output_format)
    emit = EventWriter(out) if options.output_format == "stream-json" else None

    try:
        prompt_text, piped = read_message(prompt, stdin or sys.stdin, err)
    except PipedInputError as exc:
        return run.fail(str(exc))
    # The server's agent reads piped text as part of the message (nothing to act on here).
    text = f"{prompt_text}\n\n{piped}" if piped else prompt_text
    if not text.strip():
        return run.fail(_("The prompt is empty.") + " " + _("Give text after -p, or pipe it in with -p -."))
    # #paths of a typed prompt are attached, as locally; piped text is data (`-p -` too).
    message = attached_message(prompt_text if prompt != "-" else "", settings, err)
    if message.problems:
        return run.fail("\n".join(message.problems), shown=True)
    content = message.sent(piped)
    from generalAgent.agent.remote import RemoteError

    try:
        agent: RemoteAgent = connected(settings, url)
    except RemoteError as exc:
        return run.fail(str(exc))
    with agent:
        try:
            resume = options.resume
            thread = agent.thread(resume).id if resume else agent.new_thread(text.strip().splitlines()[0])
        except RemoteError as exc:
            return run.fail(str(exc))
        if emit:
            emit({"type": "start", "session_id": thread, "model": None, "server": agent.url})
        terminal = TerminalView(err, stream_answer=False, reasoning=settings.model.show_reasoning)
        script = ScriptView(terminal, options.approve_all, emit)
        view = RemoteTurnView(script)
        allowed = options.allowed_tools
        result = agent.run_turn(thread, text, view, approved=set(allowed), mentions=allowed, content=content)
        err.print(
            "[dim]"
            + escape(_(THREAD_LINE).format(id=thread))
            + " · "
            + escape(usage_line(result, terminal.elapsed()))
            + "[/]"
        )
        print_files_on_server(err, view.files)
        return run.finish(result, script.record, thread, view.files, interrupted=INTERRUPTED)


def attached_message(text: str, settings: Settings, console: Console) -> ServerMessage:
    """The message with the files its #paths name (agent/remote_attachments.py), its notices
    and its problems (nothing may be sent then) shown."""
    from generalAgent.agent.remote_attachments import message_for_server

    message = message_for_server(text, Path.cwd(), settings.documents)
    for notice in message.notices:
        console.print(f"[yellow]{escape(notice)}[/]")
    for problem in message.problems:
        console.print(f"[red]{escape(problem)}[/]")
    return message


class RemoteChat:
    """The interactive chat on a server: lines typed here, turns run there."""

    def __init__(
        self,
        settings: Settings,
        agent: RemoteAgent,
        console: Console,
        read_line: Callable[[], str],
        thread: str | None = None,
    ) -> None:
        self.settings = settings
        self.agent = agent
        self.console = console
        self.read_line = read_line
        self.thread = thread  # None: a new thread at the first message
        self.approved: set[str] = set()  # tools answered "always", until the chat ends

    def run(self) -> int:
        self.console.print(
            "[dim]" + escape(_(CONNECTED).format(url=self.agent.url, thread=self.thread or "—")) + "[/]"
        )
        self.console.print("[dim]" + escape(_(REMOTE_HELP)) + "[/]")
        while True:
            try:
                line = self.read_line()
            except (EOFError, KeyboardInterrupt):
                return EXIT_OK
            line = line.strip()
            if not line:
                continue
            if line.startswith("/"):
                if self.command(line) is False:
                    return EXIT_OK
                continue
            self.send(line)

    def command(self, line: str) -> bool:
        """A slash command; False ends the chat."""
        from generalAgent.agent.remote import RemoteError

        name, _space, argument = line.partition(" ")
        try:
            if name in ("/quit", "/exit"):
                return False
            if name == "/help":
                self.console.print(escape(_(REMOTE_HELP)))
            elif name == "/new":
                self.thread = None
                self.console.print(
                    "[dim]" + escape(_(CONNECTED).format(url=self.agent.url, thread="—")) + "[/]"
                )
            elif name == "/threads":
                self.show_threads()
            elif name == "/resume":
                if not argument.strip():
                    self.console.print("[yellow]" + escape(_(RESUME_WHICH)) + "[/]")
                else:
                    self.thread = self.agent.thread(argument.strip()).id
                    self.console.print(
                        "[dim]" + escape(_(CONNECTED).format(url=self.agent.url, thread=self.thread)) + "[/]"
                    )
            else:
                self.console.print("[yellow]" + escape(_(UNKNOWN_COMMAND).format(command=name)) + "[/]")
        except RemoteError as exc:
            self.console.print(f"[red]{escape(str(exc))}[/]")
        return True

    def show_threads(self) -> None:
        threads = self.agent.threads()
        if not threads:
            self.console.print("[dim]" + escape(_(NO_THREADS)) + "[/]")
            return
        table = Table(box=None, header_style="bold")
        for column in (N_("id"), N_("title"), N_("updated"), N_("status")):
            table.add_column(_(column))
        for thread in threads:
            marker = " ←" if thread.id == self.thread else ""
            table.add_row(
                thread.id + marker, escape(terminal_safe(thread.title)), thread.updated[:16], thread.status
            )
        self.console.print(table)

    def send(self, text: str) -> None:
        from generalAgent.agent.remote import RemoteError
        from generalAgent.cli.approvals import ask_in_terminal
        from generalAgent.cli.render import TerminalView

        message = attached_message(text, self.settings, self.console)
        if message.problems:
            return
        try:
            if self.thread is None:
                self.thread = self.agent.new_thread(text)
        except RemoteError as exc:
            self.console.print(f"[red]{escape(str(exc))}[/]")
            return
        terminal = TerminalView(
            self.console,
            approver=lambda request: ask_in_terminal(self.console, request),
            reasoning=self.settings.model.show_reasoning,
        )
        view = RemoteTurnView(terminal)
        content = message.sent()
        result = self.agent.run_turn(self.thread, text, view, approved=self.approved, content=content)
        print_files_on_server(self.console, view.files)
        if result.cancelled:
            self.console.print("[yellow]" + escape(_(INTERRUPTED)) + "[/]")
        elif result.error:
            self.console.print(f"[red]✗ {escape(result.error)}[/]")
        self.console.print(
            "[dim]"
            + escape(_(THREAD_LINE).format(id=self.thread) + " · " + usage_line(result, terminal.elapsed()))
            + "[/]"
        )


def run_remote_chat(
    settings: Settings, url: str, resume: str | None = None, first_message: str | None = None
) -> int:
    """The chat on the server at `url` (resuming thread `resume`); lines read with the
    chat's prompt (›), history in memory only: the server keeps the conversation."""
    from prompt_toolkit import PromptSession

    from generalAgent.agent.remote import RemoteError

    console = terminal_console(highlight=False, soft_wrap=True)
    err = terminal_console(stderr=True, highlight=False, soft_wrap=True)
    try:
        agent = connected(settings, url)
    except RemoteError as exc:
        err.print(f"[red]{escape(str(exc))}[/]")
        return EXIT_USAGE
    with agent:
        thread = None
        if resume:
            try:
                thread = agent.thread(resume).id
            except RemoteError as exc:
                err.print(f"[red]{escape(str(exc))}[/]")
                return EXIT_USAGE
        session: PromptSession[str] = PromptSession()
        pending = [first_message] if first_message else []

        def read_line() -> str:
            if not pending:
                return session.prompt("› ")
            console.print(f"› {escape(pending[0])}", highlight=False)  # as if typed
            return pending.pop()

        return RemoteChat(settings, agent, console, read_line, thread).run()


@dataclass(frozen=True)
class RemoteOptions:
    """What the command line asks of a run on a server."""

    prompt: str | None = None  # -p: one answer; None: the chat
    first_message: str | None = None  # the chat's first line, given as a word
    resume: str | None = None  # a thread id
    approve_all: bool = False
    allowed_tools: tuple[str, ...] = ()
    output_format: OutputFormat = "text"


UNSUPPORTED = N_("{options}: not available with --server (docs/deployment.md says what is).")


def run_remote(settings: Settings, url: str, options: RemoteOptions, unsupported: list[str]) -> int:
    """The chat or `-p` on the server at `url`; exit status 2 for options a server run
    cannot take (one line naming them)."""
    err = terminal_console(stderr=True, highlight=False, soft_wrap=True)
    if unsupported:
        err.print("[red]" + escape(_(UNSUPPORTED).format(options=", ".join(unsupported))) + "[/]")
        return EXIT_USAGE
    if options.prompt is not None:
        return run_remote_once(settings, url, options.prompt, options)
    return run_remote_chat(settings, url, options.resume, options.first_message)
