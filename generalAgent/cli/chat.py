"""The interactive chat: prompt, slash commands, @mentions, #uploads, and running turns.

The prompt appears before LangGraph is even imported (see runtime.py). Enter sends;
Alt+Enter (or Esc then Enter) inserts a new line, as does a line ending in `\\`.
Ctrl-C during a turn cancels it and returns to the prompt; Ctrl-C on a non-empty
prompt clears it; Ctrl-D, or Ctrl-C twice, on an empty prompt leaves.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from generalAgent.cli.clipboard import paste
from generalAgent.cli.command_registry import CommandRegistry, SlashCommand
from generalAgent.cli.completion import ChatCompleter, Name
from generalAgent.cli.custom_commands import CustomCommand, load_custom_commands
from generalAgent.cli.files_written import print_files_written
from generalAgent.cli.i18n import N_, _, ngettext
from generalAgent.cli.invocation import command_hint
from generalAgent.cli.render import TerminalView, format_context, format_cost, format_usage
from generalAgent.cli.rewind import rewind_command
from generalAgent.cli.runtime import BackgroundLoader, LoadedAgent
from generalAgent.cli.storage_errors import describe_storage_error
from generalAgent.cli.terminal_text import terminal_console, terminal_safe
from generalAgent.cli.tool_descriptions import shown_description
from generalAgent.config.settings import Settings
from generalAgent.config.sources import user_config_dir
from generalAgent.display import describe_file, public_url
from generalAgent.hooks import FOLDER_CONFIG, SETTINGS_FILE, TOOL_EVENTS, HookResult, load_hooks
from generalAgent.private_storage import private_file
from generalAgent.sessions import SessionCatalog, SessionInfo, Usage

LOGGER = logging.getLogger(__name__)
PROMPT = "› "
LOAD_WAIT_AT_EXIT = 15.0  # seconds; loading takes about 2
# A second Ctrl-C on an empty prompt within this many seconds quits.
CTRL_C_QUIT_SECONDS = 3.0

# The built-in slash commands (cli/command_registry.py), with the line /help and Tab completion
# show for each; the user's own join them in the chat's registry (cli/custom_commands.py).
COMMANDS = (
    SlashCommand("/help", N_("this help"), lambda chat, arg: chat._help(arg)),
    SlashCommand("/new", N_("start a new session"), lambda chat, arg: chat._new(arg)),
    SlashCommand(
        "/sessions", N_("recent sessions (id, title, age, turns)"), lambda chat, arg: chat._sessions(arg)
    ),
    SlashCommand(
        "/resume",
        N_("[ID]: continue a session (a unique prefix of its id is enough; alone, pick one)"),
        lambda chat, arg: chat._resume(arg),
    ),
    SlashCommand(
        "/rename",
        N_("TITLE: name this session (as /sessions and --resume show it)"),
        lambda chat, arg: chat._rename(arg),
    ),
    SlashCommand(
        "/retry", N_("send the last message again after an error"), lambda chat, arg: chat._retry(arg)
    ),
    SlashCommand(
        "/rewind",
        N_("[N]: go back to before an earlier message of yours (pick it); the files too, if you choose"),
        lambda chat, arg: rewind_command(chat, arg),
    ),
    SlashCommand(
        "/compact",
        N_("[FOCUS]: summarise the conversation so far into its context (keep FOCUS above all)"),
        lambda chat, arg: chat._compact(arg),
    ),
    SlashCommand(
        "/clear",
        N_("start a fresh context in this session (workspace, todos and uploads stay)"),
        lambda chat, arg: chat._clear(arg),
    ),
    SlashCommand(
        "/memory",
        N_("the AGENTS.md instructions loaded into the system prompt"),
        lambda chat, arg: chat._memory(arg),
    ),
    SlashCommand("/upload", N_("PATH: attach a file, folder or glob"), lambda chat, arg: chat._upload(arg)),
    SlashCommand(
        "/paste", N_("attach the image on the clipboard (also Ctrl-V)"), lambda chat, arg: paste(chat, arg)
    ),
    SlashCommand(
        "/tools", N_("tool tiers and what the agent can use now"), lambda chat, arg: chat._tools(arg)
    ),
    SlashCommand(
        "/mcp",
        N_("MCP servers: state, trust and tools (@server starts a disabled one)"),
        lambda chat, arg: chat._mcp(arg),
    ),
    SlashCommand("/skills", N_("skills that can be @mentioned"), lambda chat, arg: chat._skills(arg)),
    SlashCommand("/agents", N_("sub-agents that can be @mentioned"), lambda chat, arg: chat._agents(arg)),
    SlashCommand(
        "/hooks",
        N_("the hooks of settings.json that run on this session's events"),
        lambda chat, arg: chat._hooks(arg),
    ),
    SlashCommand("/todos", N_("the agent's todo list for this session"), lambda chat, arg: chat._todos(arg)),
    SlashCommand(
        "/usage",
        N_("tokens of this session, the cache-hit ratio and how full the context is"),
        lambda chat, arg: chat._usage(arg),
    ),
    SlashCommand(
        "/model",
        N_(
            "[NAME]: the suggested models (MODEL_CHOICES); NAME, any model id, switches from the next turn on"
        ),
        lambda chat, arg: chat._model(arg),
    ),
    SlashCommand(
        "/thinking",
        N_("[full|collapsed|off]: how reasoning is shown; alone, the last turn's in full"),
        lambda chat, arg: chat._thinking(arg),
    ),
    SlashCommand(
        "/quit",
        N_("leave (the session is saved; --resume continues it)"),
        lambda chat, arg: chat._quit(arg),
        aliases=("/exit",),
    ),
)


def help_text(custom: tuple[CustomCommand, ...] = ()) -> str:
    """What /help shows, in the UI language; `custom`: the user's own commands, listed after."""
    return "\n".join(
        [
            "[bold]"
            + _("Chat")
            + "[/]  "
            + _(
                "Enter sends · Alt+Enter or a trailing \\ adds a line · Tab completes"
                " · Ctrl-C or Esc cancels a turn · Ctrl-D quits"
            ),
            "[bold]"
            + _("Mentions")
            + "[/]  "
            + _(
                "@tool makes a tool available · @skill points the agent to a skill · @agent enables delegation"
            ),
            "[bold]"
            + _("Files")
            + "[/]  "
            + _('#path/to/file.pdf, #folder or #"name with spaces.docx" attaches files to this session'),
            "",
            *(f"{name:<12} {description}" for name, description in translated_commands()),
            *(["", "[bold]" + _("Your commands") + "[/]"] if custom else []),
            *(f"{escape(terminal_safe(line.name)):<12} {escape(_custom_line(line))}" for line in custom),
        ]
    )


def _custom_line(command: CustomCommand) -> str:
    record = custom_command_record(command)
    where = _("this folder") if command.scope == "folder" else _("yours")
    return f"{record.described() or command.path.name} ({where})"


def custom_command_record(command: CustomCommand) -> SlashCommand:
    """The registry's record of one of the user's commands: its turn is the expanded body."""
    return SlashCommand(
        command.name,
        terminal_safe(command.description),  # a file's text: shown without control sequences
        lambda chat, arg: chat._custom_command(command, arg),
        argument_hint=terminal_safe(command.argument_hint),
        builtin=False,
    )


def translated_commands() -> list[tuple[str, str]]:
    return CommandRegistry(COMMANDS).menu()


ReasoningDisplay = Literal["collapsed", "full", "off"]
THINKING_MODES = {
    "full": N_("Reasoning is shown in full from now on."),
    "collapsed": N_("Reasoning is shown as one line from now on."),
    "off": N_("Reasoning is not shown from now on."),
}


class AgentUnavailable(Exception):
    """The agent failed to load; the chat has said why and must end."""


class InputHistory(FileHistory):
    """Up-arrow history in DATA_DIR; a line that cannot be saved (full disk) is only kept in memory."""

    def store_string(self, string: str) -> None:
        try:
            super().store_string(string)
        except OSError as exc:
            LOGGER.warning("input history not saved: %s", exc)


@dataclass
class ChatOptions:
    resume: str | None = None  # "last", an id (prefix), or None for a new session
    continue_here: bool = False  # -c: the latest session started in this folder
    first_message: str | None = None  # `generalagent "question"`: sent before the first prompt
    # --allow-host: hosts fetch_web reaches without asking (records of tools/named_hosts.py)
    allowed_hosts: tuple[Any, ...] = ()


class Chat:
    def __init__(self, settings: Settings, options: ChatOptions, console: Console | None = None) -> None:
        self.settings = settings
        self.options = options
        self.console = console or terminal_console(highlight=False)
        self.catalog = SessionCatalog(settings.paths.sessions_db)
        self.loader = BackgroundLoader(settings).start()
        self.session_id = SessionCatalog.new_id()
        self.first_line = ""
        self.show_reasoning: ReasoningDisplay = settings.model.show_reasoning
        self.last_reasoning: list[str] = []  # the last turn's reasoning, per model call, for /thinking
        self.pending_uploads: list[Any] = []
        # Tools the user approved "always" in this session while this process runs.
        self.approved: set[str] = set()
        # The input of the last message sent, and of the last turn the user cancelled (which
        # /retry sends again). Only the message: answers closing earlier calls are stored.
        self.last_turn: dict[str, Any] | None = None
        self.cancelled_turn: dict[str, Any] | None = None
        self.custom_commands = load_custom_commands(
            user_config_dir(), settings.sources.trust, Path.cwd(), CommandRegistry(COMMANDS).names()
        )
        self.registry = CommandRegistry(
            [*COMMANDS, *map(custom_command_record, self.custom_commands.commands)]
        )
        self.context_tokens = 0  # of the session's last request and answer: the context gauge
        self.typed_ahead = ""  # keys typed while a turn ran: the next prompt reads them first
        self.prompt_default = ""  # text the next prompt starts with (/rewind's message)
        self.quit_asked_at = 0.0  # when Ctrl-C was pressed on an empty prompt (once more quits)
        # The user's hooks (hooks.py), read once; the graph's tools step reads its own copy.
        self.hooks = load_hooks(user_config_dir(), settings.sources.trust, Path.cwd())
        self.first_message = options.first_message
        if options.resume:
            self._resume(options.resume)
        elif options.continue_here:
            self._continue_here()

    # -- the loop -------------------------------------------------------------------
    def run(self) -> int:
        try:
            return self._loop()
        except AgentUnavailable:
            return 2
        finally:
            self._stop_mcp_servers()

    def _stop_mcp_servers(self) -> None:
        """MCP servers are child processes (or sessions) of this chat: end them with it. Leaving
        while the agent still loads waits for the load, or a server started meanwhile (one that
        ignores its closed stdin) would outlive the chat."""
        try:
            self.loader.get(timeout=LOAD_WAIT_AT_EXIT).parts.mcp.close()
        except Exception as exc:  # the agent never loaded, or a server would not stop
            LOGGER.debug("MCP servers not stopped: %s", exc)

    def _loop(self) -> int:
        self._banner()
        for problem in self.hooks.problems:
            self.console.print("[yellow]" + escape(_(problem.template).format(**problem.fields)) + "[/]")
        for unread in self.custom_commands.problems:
            self.console.print(
                "[yellow]" + escape(_("Command not read: {problem}").format(problem=unread)) + "[/]"
            )
        self._session_start("resume" if self.options.resume else "startup")
        session = self._prompt_session()
        if self.first_message and self.first_message.strip():
            self.console.print(f"[bold]{escape(PROMPT)}[/]{escape(self.first_message)}", highlight=False)
            self.send(self.first_message.strip())
        while True:
            try:
                if self.typed_ahead:
                    from generalAgent.cli.escape_key import give_to_prompt

                    give_to_prompt(session.input, self.typed_ahead)
                    self.typed_ahead = ""
                line = session.prompt(PROMPT, default=self.prompt_default)
                self.prompt_default = ""
            except (EOFError, KeyboardInterrupt):
                self._farewell()
                return 0
            self.quit_asked_at = 0.0  # "again" means the next key, not after a message
            line = line.strip()
            if not line:
                continue
            if line.startswith("／"):  # a Chinese input method's full-width slash
                line = "/" + line[1:]
            if line.startswith("/"):
                name, _space, argument = line.partition(" ")
                command = self.registry.find(name)
                if command is None:
                    self.console.print(
                        "[yellow]"
                        + escape(_("Unknown command {name}. /help lists them.").format(name=name))
                        + "[/]"
                    )
                    continue
                if command.handler(self, argument.strip()) is False:
                    return 0
                continue
            self.send(line)

    def send(self, text: str, mentions: tuple[str, ...] = ()) -> None:
        submitted = self.hooks.run("UserPromptSubmit", {"session_id": self.session_id, "prompt": text})
        if self._hook_said(submitted, _("A UserPromptSubmit hook blocked this message; it was not sent.")):
            return
        agent = self._agent()
        from generalAgent.cli.turn_input import prepare_turn

        config = self._config()
        prepared = prepare_turn(
            text,
            agent,
            config,
            self.session_id,
            Path.cwd(),
            self.pending_uploads,
            progress=lambda message: self.console.status(f"[dim]{escape(message)}[/]"),
            allowed_hosts=self.options.allowed_hosts,
            extra_mentions=mentions,
        )
        for warning in prepared.warnings:
            self.console.print(f"[yellow]{escape(warning)}[/]")
        if prepared.graph_input is None:
            for error in prepared.errors:
                self.console.print(f"[red]{escape(error)}[/]")
            return
        self.pending_uploads = []
        for upload in prepared.uploads:
            self.console.print(f"[dim]📎 {escape(describe_file(upload))}[/]")
        if not self.first_line:
            self.first_line = text.splitlines()[0]
        self.catalog.open_session(self.session_id, self.first_line, Path.cwd().resolve())
        self._run(agent, config, prepared.graph_input)

    # -- running a turn -------------------------------------------------------------
    def _run(
        self, agent: LoadedAgent, config: dict[str, Any], graph_input: Any, *, context_only: bool = False
    ) -> None:
        """Run a turn (or /retry with `graph_input=None`, or a /compact or /clear when
        `context_only`: those answer nothing and count as no turn)."""
        from generalAgent.cli.escape_key import EscapeKey
        from generalAgent.cli.turns import run_turn
        from generalAgent.providers.errors import describe_model_error

        agent.parts.env.start_turn()
        with EscapeKey() as keyboard:
            view = TerminalView(
                self.console,
                approver=self._approve,
                reasoning=self.show_reasoning,
                keyboard=keyboard,
            )
            result = run_turn(
                agent.graph,
                config,
                graph_input,
                view,
                lambda exc: (
                    describe_model_error(exc, self.settings.model, _)
                    or describe_storage_error(exc, self.settings.paths)
                ),
                on_cancel=agent.cancel,
                approved=self.approved,
            )
        self.typed_ahead += keyboard.take_typed()
        try:
            if graph_input is None or context_only:
                self.catalog.add_usage(self.session_id, result.usage)
            else:
                self.catalog.record_turn(self.session_id, self.first_line, result.usage)
        except (
            sqlite3.Error
        ) as exc:  # e.g. the disk filled during the turn: the turn itself is reported below
            LOGGER.warning("could not record the turn: %s", exc)
        self.last_reasoning = result.reasoning
        if graph_input is not None and not context_only:
            self.last_turn = {**graph_input, "messages": graph_input["messages"][-1:]}
        self.cancelled_turn = self.last_turn if result.cancelled else None
        if result.cancelled:
            self.console.print(
                "[yellow]"
                + _("Cancelled.")
                + "[/] [dim]"
                + _("The conversation is intact; go on or /retry.")
                + "[/]"
            )
        elif result.error:
            self.console.print(f"[red]✗ {escape(result.error)}[/]")
            self.console.print("[dim]" + _("Your message is kept: /retry sends it again.") + "[/]")
        elif not result.answer.strip() and not context_only:
            self.console.print(
                "[yellow]" + _("The model returned an empty answer. /retry or rephrase.") + "[/]"
            )
        if context_only:
            self.context_tokens = 0  # known again after the next answer
        else:
            self.context_tokens = result.context_tokens or self.context_tokens
        if result.usage.model_calls:
            gauge = (result.context_tokens, self._context_window())
            cost = format_cost(result.usage, self.settings.model)
            self.console.print(f"[dim]{format_usage(result.usage, view.elapsed(), gauge, cost)}[/]")
        print_files_written(self.console, agent.parts.env.new_files_written(self.session_id))
        if not context_only:
            stopped = self.hooks.run("Stop", {"session_id": self.session_id, "stop_hook_active": False})
            self._hook_said(stopped, _("A Stop hook says:"))

    # -- hooks ----------------------------------------------------------------------
    def _session_start(self, source: str) -> None:
        started = self.hooks.run("SessionStart", {"session_id": self.session_id, "source": source})
        self._hook_said(started, _("A SessionStart hook says:"))

    def _hook_said(self, outcome: HookResult, blocked_line: str) -> bool:
        """Show what hooks said to the user; True when one blocked (exit 2), with its stderr."""
        for notice in outcome.notices:
            self.console.print("[yellow]" + escape(_(notice.template).format(**notice.fields)) + "[/]")
        if outcome.blocked:
            self.console.print("[yellow]" + escape(blocked_line) + "[/]")
            if outcome.reason:
                self.console.print(Text(terminal_safe(outcome.reason)))
        return outcome.blocked

    def _approve(self, request: dict[str, Any]) -> str:
        from generalAgent.cli.approvals import ask_in_terminal

        return ask_in_terminal(self.console, request)

    # -- commands -------------------------------------------------------------------
    def _help(self, argument: str) -> None:
        self.console.print(help_text(self.custom_commands.commands))

    def _custom_command(self, command: CustomCommand, argument: str) -> None:
        """The body, with the arguments in it, sent exactly as a typed line; for this turn
        only, the command's model and the tools it names (as if @mentioned)."""
        text = command.expand(argument)
        if not text:
            self.console.print(
                "[yellow]"
                + escape(_("{name} is empty: {path}").format(name=command.name, path=command.path))
                + "[/]"
            )
            return
        if not command.model or command.model == self.model_name:
            self.send(text, mentions=command.allowed_tools)
            return
        agent = self._agent()
        before = self.settings
        agent.switch_model(
            replace(before, model=before.model.model_copy(update={"model_name": command.model}))
        )
        try:
            self.send(text, mentions=command.allowed_tools)
        finally:
            agent.switch_model(before)

    def _new(self, argument: str) -> None:
        self.session_id = SessionCatalog.new_id()
        self.first_line = ""
        self.pending_uploads = []
        self.approved = set()
        self.last_turn = self.cancelled_turn = None
        self.context_tokens = 0
        self.console.print("[green]" + _("New session {id}.").format(id=self.session_id) + "[/]")
        self._session_start("new")

    def _sessions(self, argument: str) -> None:
        sessions = self.catalog.recent(limit=20)
        if not sessions:
            self.console.print("[dim]" + _("No saved sessions yet.") + "[/]")
            return
        table = Table(box=None, header_style="bold")
        for column in (N_("id"), N_("title"), N_("age"), N_("turns")):
            table.add_column(_(column))
        for info in sessions:
            marker = " ←" if info.id == self.session_id else ""
            table.add_row(info.id + marker, escape(info.title), info.age(), str(info.turns))
        self.console.print(table)

    def _continue_here(self) -> None:
        """-c: resume the latest session started in this folder (a `-p` run's too), if any."""
        latest = self.catalog.latest(folder=Path.cwd().resolve(), unlisted=True)
        if latest is None:
            self.console.print("[dim]" + _("No earlier session in this folder; starting a new one.") + "[/]")
            return
        self._resume(latest.id)

    def _resume(self, argument: str) -> None:
        try:
            info = self._pick_session() if argument in {"", "last"} else self.catalog.resolve(argument)
        except LookupError as exc:
            self.console.print(f"[yellow]{escape(str(exc))}[/]")
            return
        if info is None:
            self.console.print("[dim]" + _("No session picked: this is a new one.") + "[/]")
            return
        self.session_id = info.id
        self.first_line = info.title
        self.pending_uploads = []
        self.approved = set()
        self.last_turn = self.cancelled_turn = None
        self.context_tokens = 0
        self.console.print(
            "[green]"
            + _("Resumed {id}").format(id=info.id)
            + f"[/] [dim]· {escape(info.title)} · "
            + ngettext("{count} turn", "{count} turns", info.turns).format(count=info.turns)
            + f" · {info.age()}[/]"
        )
        from generalAgent.cli.session_resume import last_turns, show_recap

        with contextlib.suppress(AgentUnavailable):  # it has said why; the chat ends at the prompt
            messages = self._agent().graph.get_state(self._config()).values.get("messages") or []
            show_recap(self.console, last_turns(messages))

    def _pick_session(self) -> SessionInfo | None:
        """The latest session, or in a terminal the one picked from the recent ones."""
        from generalAgent.cli.session_resume import PICKER_SESSIONS, pick_session

        sessions = self.catalog.recent(limit=PICKER_SESSIONS)
        if not sessions:
            raise LookupError(_("No saved session to resume yet."))
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            return sessions[0]
        # The folder a session was started in, where the catalog records it.
        return pick_session(sessions, lambda info: getattr(info, "folder", None))

    def _rename(self, argument: str) -> None:
        title = " ".join(argument.split())
        if not title:
            self.console.print("[yellow]" + _("/rename TITLE: the name /sessions and --resume show") + "[/]")
            return
        self.catalog.open_session(self.session_id, self.first_line or title)
        self.catalog.rename(self.session_id, title)
        self.first_line = self.first_line or title
        self.console.print("[green]" + escape(_("Renamed to {title}").format(title=title)) + "[/]")

    def _retry(self, argument: str) -> None:
        """After an error, resume where the turn failed; after Ctrl-C, send the message again."""
        agent = self._agent()
        config = self._config()
        if agent.graph.get_state(config).next:
            self._run(agent, config, None)
            return
        if self.cancelled_turn is None:
            self.console.print("[dim]" + _("Nothing to retry: the last turn finished.") + "[/]")
            return
        from generalAgent.cli.turns import discard_last_turn

        turn, self.cancelled_turn = self.cancelled_turn, None
        discard_last_turn(agent.graph, config)
        self._run(agent, config, turn)

    def _compact(self, focus: str) -> None:
        from generalAgent.graph.turn import context_request_input

        agent = self._agent()
        self._run(agent, self._config(), context_request_input("compact", focus=focus), context_only=True)

    def _clear(self, argument: str) -> None:
        from generalAgent.graph.turn import context_request_input

        agent = self._agent()
        self._run(agent, self._config(), context_request_input("clear"), context_only=True)

    def _memory(self, argument: str) -> None:
        from generalAgent.graph.project_memory import user_memory_path

        memory = self._agent().parts.memory
        for problem in memory.problems:
            self.console.print("[yellow]" + escape(_("Not read: {problem}").format(problem=problem)) + "[/]")
        if not memory.files:
            message = _(
                "No AGENTS.md loaded. Instructions for every session go in {user} (yours) or {project} "
                "(this project); they are read when generalagent starts."
            ).format(user=user_memory_path(self.settings), project=Path.cwd() / "AGENTS.md")
            self.console.print(f"[dim]{escape(message)}[/]")
            return
        for file in memory.files:
            size = _("{count} characters").format(count=f"{file.chars:,}") + (
                _(", cut to {count} (AGENTS_MD_MAX_CHARS)").format(count=f"{len(file.text):,}")
                if file.cut
                else ""
            )
            self.console.print(f"[bold]{file.scope}[/] {escape(str(file.path))} [dim]({size})[/]")
            self.console.print(Text(terminal_safe(file.text), style="dim"))
        self.console.print(
            "[dim]" + _("Read once when generalagent starts: edits take effect in the next session.") + "[/]"
        )

    def _upload(self, argument: str) -> None:
        if not argument:
            self.console.print(
                "[yellow]" + _("/upload PATH: a file, a folder or a glob such as docs/*.pdf") + "[/]"
            )
            return
        from generalAgent.cli.chat_input import split_paths
        from generalAgent.cli.turn_input import attach_files

        agent = self._agent()
        report = attach_files(agent, self.session_id, split_paths(argument, Path.cwd()), Path.cwd())
        for problem in [*report.notices, *report.problems]:
            self.console.print(f"[yellow]{escape(problem)}[/]")
        if not report.files and not report.problems and not report.notices:
            self.console.print(
                "[yellow]" + escape(_("Nothing matches {pattern}.").format(pattern=argument)) + "[/]"
            )
        for upload in report.files:
            self.console.print(f"[dim]📎 {escape(describe_file(upload))}[/]")
        # The agent hears about them with the next message, in that turn's reminder.
        self.pending_uploads += report.files

    def _tools(self, argument: str) -> None:
        from generalAgent.cli.turn_input import describe_tools

        self.console.print(describe_tools(self._agent(), self._config()))

    def _mcp(self, argument: str) -> None:
        from generalAgent.cli.mcp_commands import NO_SERVERS, servers_table

        agent = self._agent()
        statuses = agent.parts.mcp.statuses()
        if not statuses:
            self.console.print(f"[dim]{escape(_(NO_SERVERS))} (docs/mcp.md)[/]")
            return
        in_session = set(agent.graph.get_state(self._config()).values.get("mcp_servers") or [])
        self.console.print(servers_table(statuses, in_session))

    def _skills(self, argument: str) -> None:
        agent = self._agent()
        skills = agent.parts.skills.skills
        if not skills:
            self.console.print("[dim]" + _("No skills installed.") + "[/]")
        for skill in skills:
            self.console.print(f"[cyan]@{skill.id}[/] {escape(skill.description)}")

    def _agents(self, argument: str) -> None:
        agent = self._agent()
        for profile in agent.parts.agents.profiles:
            tools = f" [dim](tools: {', '.join(profile.tools)})[/]" if profile.tools is not None else ""
            self.console.print(f"[cyan]@{profile.name}[/] {escape(profile.description)}{tools}")

    def _hooks(self, argument: str) -> None:
        hooks = self.hooks.hooks
        folder_file = Path.cwd() / FOLDER_CONFIG / SETTINGS_FILE
        if not hooks:
            self.console.print(
                "[dim]"
                + escape(
                    _(
                        "No hooks. They are configured in {user} (yours) or {folder} (this folder, once trusted)."
                    ).format(user=user_config_dir() / SETTINGS_FILE, folder=folder_file)
                )
                + "[/]"
            )
        else:
            table = Table(box=None, header_style="bold")
            for column in (N_("event"), N_("matcher"), N_("command"), N_("timeout"), N_("from")):
                table.add_column(_(column))
            for hook in hooks:
                matcher = (hook.matcher or "*") if hook.event in TOOL_EVENTS else ""
                source = _("yours") if hook.source.parent == user_config_dir() else _("this folder")
                if hook.approver:
                    source += " · " + _("approver")
                table.add_row(
                    hook.event,
                    escape(matcher),
                    escape(terminal_safe(hook.command)),
                    f"{hook.timeout:g} s",
                    source,
                )
            self.console.print(table)
        if folder_file.is_file() and not self.settings.sources.trust.covers(Path.cwd()):
            self.console.print(
                "[dim]"
                + escape(
                    _("{path} is not read: this folder is not trusted (generalagent trust).").format(
                        path=folder_file
                    )
                )
                + "[/]"
            )

    def _todos(self, argument: str) -> None:
        agent = self._agent()
        todos = agent.graph.get_state(self._config()).values.get("todos") or []
        if not todos:
            self.console.print("[dim]" + _("No todos in this session.") + "[/]")
            return
        marks = {"completed": "[green]✓[/]", "in_progress": "[yellow]▶[/]", "pending": "[dim]○[/]"}
        for item in todos:
            mark = marks.get(item.get("status", ""), "?")
            self.console.print(
                f"{mark} {escape(item.get('content', ''))} [dim]({item.get('priority', 'medium')})[/]"
            )

    def _usage(self, argument: str) -> None:
        info = self.catalog.get(self.session_id)
        usage = info.usage if info else Usage()
        turns = info.turns if info else 0
        reasoning = (
            _(", of which reasoning {count}").format(count=f"{usage.reasoning_tokens:,}")
            if usage.reasoning_tokens
            else ""
        )
        gauge = (
            format_context(self.context_tokens, self._context_window())
            if self.context_tokens
            else _("context: known after the next answer")
        )
        lines = [
            _("Session {id}: {turns} turns, {calls} model calls").format(
                id=self.session_id, turns=turns, calls=usage.model_calls
            ),
            "  "
            + _("input  {tokens} tokens, of which cached {cached} ({ratio} cache hits)").format(
                tokens=f"{usage.input_tokens:,}",
                cached=f"{usage.cached_tokens:,}",
                ratio=f"{usage.cache_hit_ratio:.1%}",
            ),
            "  " + _("output {tokens} tokens").format(tokens=f"{usage.output_tokens:,}") + reasoning,
            "  "
            + _("{gauge} (the last request and its answer, of the model's context window)").format(
                gauge=gauge
            ),
        ]
        cost = format_cost(usage, self.settings.model)
        if cost:
            lines.append(
                "  "
                + _("cost {cost} (all of the session's tokens at {model}'s prices)").format(
                    cost=cost, model=self.model_name
                )
            )
        self.console.print(escape("\n".join(lines)))

    def _model(self, argument: str) -> None:
        """/model lists the models to switch to; /model NAME switches from the next turn on."""
        model = self.settings.model
        choices = model.choices
        if not argument:
            for name in choices:
                price = model.prices.get(name)
                priced = (
                    f" [dim]({model.model_price_currency}{price.input:g} in · {price.cached_input:g} cached"
                    f" · {price.output:g} out per M tokens)[/]"
                    if price
                    else ""
                )
                mark = "[green]●[/]" if name == self.model_name else " "
                self.console.print(f"{mark} {escape(name)}{priced}")
            if len(choices) < 2:
                self.console.print(
                    "[dim]"
                    + _("List more in MODEL_CHOICES (comma-separated) to switch with /model NAME.")
                    + "[/]"
                )
            return
        if argument == self.model_name:
            self.console.print("[dim]" + escape(_("Already using {name}.").format(name=argument)) + "[/]")
            return
        agent = self._agent()
        switched = replace(self.settings, model=model.model_copy(update={"model_name": argument}))
        agent.switch_model(switched)
        self.settings = switched
        self.console.print(
            "[green]"
            + escape(_("Now using {name}").format(name=argument))
            + "[/] [dim]· "
            + _("the conversation goes on with it")
            + "[/]"
        )
        if argument not in choices:  # MODEL_CHOICES only suggests; the endpoint decides
            self.console.print(
                "[dim]"
                + _("Not in MODEL_CHOICES: its cost is not shown unless MODEL_PRICES names it.")
                + "[/]"
            )

    @property
    def model_name(self) -> str:
        return self.settings.model.model_name or "?"

    def _context_window(self) -> int:
        from generalAgent.providers.tokens import context_window

        return context_window(self.settings.model).tokens

    def _thinking(self, argument: str) -> None:
        mode = argument.lower()
        if mode in THINKING_MODES:
            self.show_reasoning = cast(ReasoningDisplay, mode)
            self.console.print(f"[dim]{_(THINKING_MODES[mode])}[/]")
            return
        if mode:
            self.console.print(
                "[yellow]" + _("/thinking full, /thinking collapsed or /thinking off.") + "[/]"
            )
            return
        if not self.last_reasoning:
            self.console.print("[dim]" + _("The last turn had no reasoning to show.") + "[/]")
            return
        for number, text in enumerate(self.last_reasoning, 1):
            if len(self.last_reasoning) > 1:
                self.console.print("[dim]— " + _("model call {number}").format(number=number) + " —[/]")
            self.console.print(Text(text, style="dim"))

    def _quit(self, argument: str) -> bool:
        self._farewell()
        return False

    def _farewell(self) -> None:
        """The one goodbye, for /quit, Ctrl-D and Ctrl-C alike: how to come back, if there is
        anything to come back to."""
        if self.loader.ready():
            with contextlib.suppress(Exception):  # an agent that failed to start wrote nothing
                print_files_written(self.console, self.loader.get().parts.env.files_written(self.session_id))
        if self.catalog.get(self.session_id) is None:
            self.console.print("[dim]" + _("Bye.") + "[/]")
            return
        resume = f"{command_hint()} --resume {self.session_id}"
        self.console.print(
            "[dim]" + escape(_("Saved. Continue with: {command}").format(command=resume)) + "[/]"
        )

    # -- plumbing -------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        from generalAgent.graph.turn import thread_config  # LangChain loads in the background

        return thread_config(self.session_id)

    def _agent(self) -> LoadedAgent:
        if not self.loader.ready():
            with self.console.status("[dim]" + _("Starting the agent…") + "[/]"):
                self.loader.wait()
        try:
            agent = self.loader.get()
        except Exception as exc:  # e.g. a broken tools.yaml: nothing works until it is fixed
            reason = describe_storage_error(exc, self.settings.paths) or str(exc)
            self.console.print(
                "[red]" + escape(_("The agent could not start: {reason}").format(reason=reason)) + "[/]"
            )
            raise AgentUnavailable from exc
        while agent.notices:  # shown once, before the first output that needs the agent
            self.console.print(f"[dim]{escape(agent.notices.pop(0))}[/]")
        for notice in agent.parts.mcp.drain_notices():  # e.g. a server that did not start
            self.console.print(f"[yellow]{escape(notice)}[/]")
        return agent

    def _banner(self) -> None:
        model = self.settings.model
        where = public_url(model.openai_base_url or "api.openai.com")
        session = _("session {id}").format(id=self.session_id)
        self.console.print(
            f"[bold]generalAgent[/] [dim]· {escape(model.model_name or '?')} @ {escape(where)} · "
            f"{escape(session)} · /help[/]"
        )

    def _prompt_session(self) -> PromptSession:
        history_file = self.settings.paths.input_history_file
        private_file(history_file)  # what the user typed: theirs alone
        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("enter")
        def _submit(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.text.endswith("\\"):
                buffer.delete_before_cursor(1)
                buffer.insert_text("\n")
            else:
                buffer.validate_and_handle()

        @bindings.add("c-v")
        def _paste(event: Any) -> None:  # terminals paste text themselves; Ctrl-V is for images
            run_in_terminal(lambda: paste(self))

        @bindings.add("c-c")
        def _interrupt(event: Any) -> None:
            if event.current_buffer.text:
                event.current_buffer.reset()
            elif time.monotonic() - self.quit_asked_at < CTRL_C_QUIT_SECONDS:
                event.app.exit(exception=KeyboardInterrupt)
            else:  # one Ctrl-C too many (after cancelling a turn) must not end the chat
                self.quit_asked_at = time.monotonic()
                hint = _("Press Ctrl-C again to quit (or Ctrl-D).")
                run_in_terminal(lambda: self.console.print(f"[dim]{escape(hint)}[/]"))

        return PromptSession(
            history=InputHistory(str(history_file)),
            key_bindings=bindings,
            multiline=True,
            completer=ChatCompleter(self.registry.menu(), self._mentionable),
            complete_while_typing=False,
        )

    def _mentionable(self) -> list[Name]:
        """What @ completes: nothing until the agent has loaded (completion never waits)."""
        if not self.loader.ready():
            return []
        try:
            parts = self.loader.get().parts
        except Exception:  # the load failed; the next message says why
            return []
        names = [
            Name(spec.name, "tool", shown_description(spec.description)) for spec in parts.registry.specs()
        ]
        names += [Name(skill.id, "skill", skill.description) for skill in parts.skills.skills]
        names += [Name(profile.name, "agent", profile.description) for profile in parts.agents.profiles]
        names += [
            Name(
                server.handle,
                "server",
                _("MCP server: {transport} {target}").format(
                    transport=server.transport, target=server.target
                ),
            )
            for server in parts.mcp.statuses()
        ]
        return names
