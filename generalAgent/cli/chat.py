"""The interactive chat: prompt, slash commands, @mentions, #uploads, and running turns.

The prompt appears before LangGraph is even imported (see runtime.py). Enter sends;
Alt+Enter (or Esc then Enter) inserts a new line, as does a line ending in `\\`.
Ctrl-C during a turn cancels it and returns to the prompt; Ctrl-C on a non-empty
prompt clears it; Ctrl-C or Ctrl-D on an empty prompt leaves.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from generalAgent.cli.render import TerminalView, format_context, format_usage
from generalAgent.cli.runtime import BackgroundLoader, LoadedAgent
from generalAgent.cli.storage_errors import describe_storage_error
from generalAgent.config.settings import Settings
from generalAgent.sessions import SessionCatalog, Usage

LOGGER = logging.getLogger(__name__)
PROMPT = "› "
# A file's text is shown as data: no control characters (escape sequences) reach the terminal.
_PRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

HELP = """\
[bold]Chat[/]  Enter sends · Alt+Enter or a trailing \\\\ adds a line · Ctrl-C cancels a turn · Ctrl-D quits
[bold]Mentions[/]  @tool makes a tool available · @skill points the agent to a skill · @agent enables delegation
[bold]Files[/]  #path/to/file.pdf, #folder or #"name with spaces.docx" attaches files to this session

/help              this help
/new               start a new session
/sessions          recent sessions (id, title, age, turns)
/resume ID         continue a session (a unique prefix of its id is enough)
/retry             send the last message again after an error
/compact [FOCUS]   summarise the conversation so far into its context (keep FOCUS above all)
/clear             start a fresh context in this session (workspace, todos and uploads stay)
/memory            the AGENTS.md instructions loaded into the system prompt
/upload PATH       attach a file, folder or glob
/tools             tool tiers and what the agent can use now
/skills, /agents   skills and sub-agents that can be @mentioned
/todos             the agent's todo list for this session
/usage             tokens of this session, the cache-hit ratio and how full the context is
/quit              leave (the session is saved; generalagent --resume continues it)"""


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


class Chat:
    def __init__(self, settings: Settings, options: ChatOptions, console: Console | None = None) -> None:
        self.settings = settings
        self.console = console or Console(highlight=False)
        self.catalog = SessionCatalog(settings.paths.sessions_db)
        self.loader = BackgroundLoader(settings).start()
        self.session_id = SessionCatalog.new_id()
        self.first_line = ""
        self.can_retry = False
        self.pending_uploads: list[Any] = []
        self.context_tokens = 0  # of the session's last request and answer: the context gauge
        self._commands = {
            "/help": self._help,
            "/new": self._new,
            "/sessions": self._sessions,
            "/resume": self._resume,
            "/retry": self._retry,
            "/compact": self._compact,
            "/clear": self._clear,
            "/memory": self._memory,
            "/upload": self._upload,
            "/tools": self._tools,
            "/skills": self._skills,
            "/agents": self._agents,
            "/todos": self._todos,
            "/usage": self._usage,
            "/quit": self._quit,
            "/exit": self._quit,
        }
        if options.resume:
            self._resume(options.resume)

    # -- the loop -------------------------------------------------------------------
    def run(self) -> int:
        try:
            return self._loop()
        except AgentUnavailable:
            return 2

    def _loop(self) -> int:
        self._banner()
        session = self._prompt_session()
        while True:
            try:
                line = session.prompt(PROMPT)
            except (EOFError, KeyboardInterrupt):
                self.console.print("[dim]Bye. Continue later with: generalagent --resume[/]")
                return 0
            line = line.strip()
            if not line:
                continue
            if line.startswith("/"):
                name, _, argument = line.partition(" ")
                handler = self._commands.get(name.lower())
                if handler is None:
                    self.console.print(f"[yellow]Unknown command {escape(name)}. /help lists them.[/]")
                    continue
                if handler(argument.strip()) is False:
                    return 0
                continue
            self.send(line)

    def send(self, text: str) -> None:
        agent = self._agent()
        from generalAgent.cli.turn_input import prepare_turn

        config = self._config()
        prepared = prepare_turn(text, agent, config, self.session_id, Path.cwd(), self.pending_uploads)
        self.pending_uploads = []
        for problem in prepared.problems:
            self.console.print(f"[yellow]{escape(problem)}[/]")
        for upload in prepared.uploads:
            self.console.print(
                f"[dim]📎 {escape(upload['path'])} ({upload['type']}, {upload['size']:,} bytes)[/]"
            )
        if not self.first_line:
            self.first_line = text.splitlines()[0]
        self.catalog.open_session(self.session_id, self.first_line)
        self._run(agent, config, prepared.graph_input)

    # -- running a turn -------------------------------------------------------------
    def _run(
        self, agent: LoadedAgent, config: dict[str, Any], graph_input: Any, *, context_only: bool = False
    ) -> None:
        """Run a turn (or /retry with `graph_input=None`, or a /compact or /clear when
        `context_only`: those answer nothing and count as no turn)."""
        from generalAgent.cli.turns import run_turn
        from generalAgent.models import describe_model_error

        view = TerminalView(self.console, approver=self._approve)
        agent.parts.env.start_turn()
        result = run_turn(
            agent.graph,
            config,
            graph_input,
            view,
            lambda exc: (
                describe_model_error(exc, self.settings.model)
                or describe_storage_error(exc, self.settings.paths)
            ),
            on_cancel=agent.cancel,
        )
        try:
            if graph_input is None or context_only:
                self.catalog.add_usage(self.session_id, result.usage)
            else:
                self.catalog.record_turn(self.session_id, self.first_line, result.usage)
        except (
            sqlite3.Error
        ) as exc:  # e.g. the disk filled during the turn: the turn itself is reported below
            LOGGER.warning("could not record the turn: %s", exc)
        if result.cancelled:
            self.console.print("[yellow]Cancelled.[/] [dim]The conversation is intact; go on or /retry.[/]")
        elif result.error:
            self.console.print(f"[red]✗ {escape(result.error)}[/]")
            self.console.print("[dim]Your message is kept: /retry sends it again.[/]")
        elif not result.answer.strip() and not context_only:
            self.console.print("[yellow]The model returned an empty answer. /retry or rephrase.[/]")
        if context_only:
            self.context_tokens = 0  # known again after the next answer
        else:
            self.can_retry = not result.ok
            self.context_tokens = result.context_tokens or self.context_tokens
        if result.usage.model_calls:
            gauge = (result.context_tokens, self._context_window())
            self.console.print(f"[dim]{format_usage(result.usage, view.elapsed(), gauge)}[/]")

    def _approve(self, request: dict[str, Any]) -> str:
        tool = request.get("tool", "tool")
        self.console.print(f"[bold yellow]Approve {escape(tool)}?[/]")
        for key, value in request.items():
            if key not in {"tool", "question"}:
                self.console.print(f"  [dim]{escape(key)}:[/] {escape(str(value))}")
        while True:
            answer = (
                self.console.input("[bold]  \\[y]es / \\[n]o / \\[a]lways for this session: [/]")
                .strip()
                .lower()
            )
            if answer in {"y", "yes"}:
                return "yes"
            if answer in {"n", "no", ""}:
                return "no"
            if answer in {"a", "always"}:
                return "always"

    # -- commands -------------------------------------------------------------------
    def _help(self, _: str) -> None:
        self.console.print(HELP)

    def _new(self, _: str) -> None:
        self.session_id = SessionCatalog.new_id()
        self.first_line = ""
        self.can_retry = False
        self.pending_uploads = []
        self.context_tokens = 0
        self.console.print(f"[green]New session {self.session_id}.[/]")

    def _sessions(self, _: str) -> None:
        sessions = self.catalog.recent(limit=20)
        if not sessions:
            self.console.print("[dim]No saved sessions yet.[/]")
            return
        table = Table(box=None, header_style="bold")
        for column in ("id", "title", "age", "turns"):
            table.add_column(column)
        for info in sessions:
            marker = " ←" if info.id == self.session_id else ""
            table.add_row(info.id + marker, escape(info.title), info.age(), str(info.turns))
        self.console.print(table)

    def _resume(self, argument: str) -> None:
        try:
            info = self.catalog.resolve(argument)
        except LookupError as exc:
            self.console.print(f"[yellow]{escape(str(exc))}[/]")
            return
        self.session_id = info.id
        self.first_line = info.title
        self.can_retry = False
        self.pending_uploads = []
        self.context_tokens = 0
        self.console.print(
            f"[green]Resumed {info.id}[/] [dim]· {escape(info.title)} · {info.turns} turns · {info.age()}[/]"
        )

    def _retry(self, _: str) -> None:
        agent = self._agent()
        config = self._config()
        state = agent.graph.get_state(config)
        if not state.next:
            self.console.print("[dim]Nothing to retry: the last turn finished.[/]")
            return
        self._run(agent, config, None)

    def _compact(self, focus: str) -> None:
        from generalAgent.graph.turn import context_request_input

        agent = self._agent()
        self._run(agent, self._config(), context_request_input("compact", focus=focus), context_only=True)

    def _clear(self, _: str) -> None:
        from generalAgent.graph.turn import context_request_input

        agent = self._agent()
        self._run(agent, self._config(), context_request_input("clear"), context_only=True)

    def _memory(self, _: str) -> None:
        from generalAgent.graph.project_memory import user_memory_path

        memory = self._agent().parts.memory
        for problem in memory.problems:
            self.console.print(f"[yellow]Not read: {escape(problem)}[/]")
        if not memory.files:
            self.console.print(
                f"[dim]No AGENTS.md loaded. Instructions for every session go in {escape(str(user_memory_path(self.settings)))} "
                f"(yours) or {escape(str(Path.cwd() / 'AGENTS.md'))} (this project); they are read when generalagent starts.[/]"
            )
            return
        for file in memory.files:
            size = f"{file.chars:,} characters" + (
                f", cut to {len(file.text):,} (AGENTS_MD_MAX_CHARS)" if file.cut else ""
            )
            self.console.print(f"[bold]{file.scope}[/] {escape(str(file.path))} [dim]({size})[/]")
            self.console.print(Text(_PRINTABLE.sub("", file.text), style="dim"))
        self.console.print(
            "[dim]Read once when generalagent starts: edits take effect in the next session.[/]"
        )

    def _upload(self, argument: str) -> None:
        if not argument:
            self.console.print("[yellow]/upload PATH: a file, a folder or a glob such as docs/*.pdf[/]")
            return
        from generalAgent.cli.turn_input import attach_files

        agent = self._agent()
        report = attach_files(agent, self._config(), self.session_id, [argument], Path.cwd())
        for problem in report.problems:
            self.console.print(f"[yellow]{escape(problem)}[/]")
        if not report.files and not report.problems:
            self.console.print(f"[yellow]Nothing matches {escape(argument)}.[/]")
        for upload in report.files:
            self.console.print(
                f"[dim]📎 {escape(upload['path'])} ({upload['type']}, {upload['size']:,} bytes)[/]"
            )
        # The agent hears about them with the next message, in that turn's reminder.
        self.pending_uploads += report.files

    def _tools(self, _: str) -> None:
        from generalAgent.cli.turn_input import describe_tools

        self.console.print(describe_tools(self._agent(), self._config()))

    def _skills(self, _: str) -> None:
        agent = self._agent()
        skills = agent.parts.skills.skills
        if not skills:
            self.console.print("[dim]No skills installed.[/]")
        for skill in skills:
            self.console.print(f"[cyan]@{skill.id}[/] {escape(skill.description)}")

    def _agents(self, _: str) -> None:
        agent = self._agent()
        for profile in agent.parts.agents.profiles:
            tools = f" [dim](tools: {', '.join(profile.tools)})[/]" if profile.tools is not None else ""
            self.console.print(f"[cyan]@{profile.name}[/] {escape(profile.description)}{tools}")

    def _todos(self, _: str) -> None:
        agent = self._agent()
        todos = agent.graph.get_state(self._config()).values.get("todos") or []
        if not todos:
            self.console.print("[dim]No todos in this session.[/]")
            return
        marks = {"completed": "[green]✓[/]", "in_progress": "[yellow]▶[/]", "pending": "[dim]○[/]"}
        for item in todos:
            mark = marks.get(item.get("status", ""), "?")
            self.console.print(
                f"{mark} {escape(item.get('content', ''))} [dim]({item.get('priority', 'medium')})[/]"
            )

    def _usage(self, _: str) -> None:
        info = self.catalog.get(self.session_id)
        usage = info.usage if info else Usage()
        turns = info.turns if info else 0
        gauge = (
            format_context(self.context_tokens, self._context_window())
            if self.context_tokens
            else "context: known after the next answer"
        )
        self.console.print(
            f"Session {self.session_id}: {turns} turns, {usage.model_calls} model calls\n"
            f"  input  {usage.input_tokens:,} tokens, of which cached {usage.cached_tokens:,} "
            f"({usage.cache_hit_ratio:.1%} cache hits)\n"
            f"  output {usage.output_tokens:,} tokens\n"
            f"  {gauge} (the last request and its answer, of the model's window)"
        )

    def _context_window(self) -> int:
        from generalAgent.graph.context_budget import context_window

        return context_window(self.settings)

    def _quit(self, _: str) -> bool:
        self.console.print(f"[dim]Saved. Continue with: generalagent --resume {self.session_id}[/]")
        return False

    # -- plumbing -------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.session_id}, "recursion_limit": 1000}

    def _agent(self) -> LoadedAgent:
        if not self.loader.ready():
            with self.console.status("[dim]Starting the agent…[/]"):
                self.loader.wait()
        try:
            agent = self.loader.get()
        except Exception as exc:  # e.g. a broken tools.yaml: nothing works until it is fixed
            reason = describe_storage_error(exc, self.settings.paths) or str(exc)
            self.console.print(f"[red]The agent could not start: {escape(reason)}[/]")
            raise AgentUnavailable from exc
        while agent.notices:  # shown once, before the first output that needs the agent
            self.console.print(f"[dim]{escape(agent.notices.pop(0))}[/]")
        return agent

    def _banner(self) -> None:
        model = self.settings.model
        where = model.openai_base_url or "api.openai.com"
        self.console.print(
            f"[bold]generalAgent[/] [dim]· {escape(model.model_name or '?')} @ {escape(where)} · "
            f"session {self.session_id} · /help[/]"
        )

    def _prompt_session(self) -> PromptSession:
        history_file = self.settings.paths.input_history_file
        history_file.parent.mkdir(parents=True, exist_ok=True)
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

        @bindings.add("c-c")
        def _interrupt(event: Any) -> None:
            if event.current_buffer.text:
                event.current_buffer.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt)

        return PromptSession(history=InputHistory(str(history_file)), key_bindings=bindings, multiline=True)
