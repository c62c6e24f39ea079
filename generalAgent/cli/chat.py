"""The interactive chat: prompt, slash commands, @mentions, #uploads, and running turns.

The prompt appears before LangGraph is even imported (see runtime.py). Enter sends;
Alt+Enter (or Esc then Enter) inserts a new line, as does a line ending in `\\`.
Ctrl-C during a turn cancels it and returns to the prompt; Ctrl-C on a non-empty
prompt clears it; Ctrl-D, or Ctrl-C twice, on an empty prompt leaves.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.styles import Style
from rich.console import Console
from rich.markup import escape

from generalAgent.agent.loading import BackgroundLoader, LoadedAgent
from generalAgent.agent.session import SessionController
from generalAgent.agent.storage_errors import describe_storage_error
from generalAgent.cli.builtin_commands import COMMANDS, custom_command_record
from generalAgent.cli.chat_handle import AgentUnavailable, ReasoningDisplay
from generalAgent.cli.clipboard import paste
from generalAgent.cli.command_registry import CommandRegistry
from generalAgent.cli.completion import ChatCompleter, Name
from generalAgent.cli.custom_commands import load_custom_commands
from generalAgent.cli.files_written import print_files_written
from generalAgent.cli.folder_indexing import BackgroundWork, FolderIndexingView
from generalAgent.cli.invocation import command_hint
from generalAgent.cli.ocr_progress import TOOLBAR_STYLE, OcrProgress, follow_at_prompt
from generalAgent.cli.render import TerminalView, format_cost, format_usage
from generalAgent.cli.terminal_text import console_lines, one_line, terminal_console
from generalAgent.config.settings import Settings
from generalAgent.config.sources import user_config_dir
from generalAgent.display import describe_file, public_url
from generalAgent.documents.background_indexing import FolderIndexer, IndexingProgress
from generalAgent.documents.gloss_warmup import GlossWarmup
from generalAgent.i18n import _, current_language, ngettext
from generalAgent.private_storage import private_file
from generalAgent.sessions import SessionCatalog

LOGGER = logging.getLogger(__name__)
PROMPT = "› "
# A second Ctrl-C on an empty prompt within this many seconds quits.
CTRL_C_QUIT_SECONDS = 3.0
# How long the chat's end waits for the background indexer to stop (it does within a
# second, also inside a large file); past this the process ends and SQLite rolls back.
INDEXER_STOP_SECONDS = 2.0


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
    """The loop at the prompt: lines to the session (agent/session.py), /commands to their
    handlers through the registry (cli/builtin_commands.py), and each turn drawn."""

    def __init__(self, settings: Settings, options: ChatOptions, console: Console | None = None) -> None:
        self.options = options
        self.console = console or terminal_console(highlight=False)
        self.loader = BackgroundLoader(settings).start()
        # The session in this folder, as the user decided about it: its hooks (hooks.py), read
        # once, run in its turns and its graph runs (the tools step; tools/run_context.py).
        catalog = SessionCatalog(settings.paths.sessions_db)
        trust = settings.sources.trust
        self.session = SessionController.in_folder(
            settings, catalog, trust, console_lines(self.console), Path.cwd()
        )
        self.show_reasoning: ReasoningDisplay = settings.model.show_reasoning
        self.last_reasoning: list[str] = []  # the last turn's reasoning, per model call, for /thinking
        self.custom_commands = load_custom_commands(
            user_config_dir(), settings.sources.trust, Path.cwd(), CommandRegistry(COMMANDS).names()
        )
        self.registry = CommandRegistry(
            [*COMMANDS, *map(custom_command_record, self.custom_commands.commands)]
        )
        self._drawn: TerminalView | None = None  # the last turn's view: its time for the usage line
        self.typed_ahead = ""  # keys typed while a turn ran: the next prompt reads them first
        self.quit_asked_at = 0.0  # when Ctrl-C was pressed on an empty prompt (once more quits)
        self.prompt_default = ""  # text the next prompt starts with (/rewind's message)
        self.first_message = options.first_message
        # The session's scans read on in the background: lines and the toolbar.
        self.ocr = OcrProgress(lambda: self.session.scope.scans.jobs())
        # A trusted folder's documents indexed while the user types the first question.
        self.warmup: GlossWarmup | None = None  # set before the pass can end (_indexed)
        self.indexer = self._start_indexing(settings)
        # The gloss's dictionaries loaded while the user types, where a Chinese question over
        # documents in another language is likely (documents/gloss_warmup.py).
        self.warmup = (
            GlossWarmup(
                settings.paths.indexes_db, Path.cwd().resolve(), use_jieba=settings.documents.use_jieba
            )
            if self.indexer is not None and current_language() == "zh"
            else None
        )
        if self.warmup is not None:
            self.warmup.request()
        self.background = BackgroundWork(
            [self.ocr, *([FolderIndexingView(self.indexer)] if self.indexer is not None else [])]
        )
        self._prompt: PromptSession | None = None
        from generalAgent.cli import session_commands

        if options.resume:
            session_commands.resume_session(self, options.resume)
        elif options.continue_here:
            session_commands.continue_here(self)

    @property
    def settings(self) -> Settings:
        return self.session.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:  # /model
        self.session.settings = settings

    @property
    def model_name(self) -> str:
        return self.settings.model.model_name or "?"

    # -- the loop -------------------------------------------------------------------
    def run(self) -> int:
        try:
            return self._loop()
        except AgentUnavailable:
            return 2
        finally:
            if self.warmup is not None:
                self.warmup.cancel()
            if self.indexer is not None:
                # It stops inside the file it reads (its write rolled back), within a second;
                # waited for so the chat ends after that, not in the middle of it.
                self.indexer.cancel()
                self.indexer.wait(INDEXER_STOP_SECONDS)
            self.session.close()  # its commands and background OCR stop with the chat
            self._stop_mcp_servers()

    def _start_indexing(self, settings: Settings) -> FolderIndexer | None:
        """The working folder's background indexing (documents/background_indexing.py): only
        in a folder the user trusted (whose files the tools read in place), not in the home
        folder or the root (a walk of everything), and not with BACKGROUND_INDEXING=false."""
        folder = Path.cwd()
        trust = settings.sources.trust
        if not settings.documents.background_indexing or trust is None or not trust.covers(folder):
            return None
        if folder.resolve() in {Path.home().resolve(), Path(folder.anchor)}:
            return None
        return FolderIndexer(
            settings.paths.indexes_db, settings.documents, folder.resolve(), on_done=self._indexed
        ).start()

    def _indexed(self, progress: IndexingProgress) -> None:
        """The pass ended (its thread): the vectors of what it indexed are made next, by the
        tools' own background embedding, when the agent is loaded (else the first search).
        Documents in another language it indexed may make the gloss's dictionaries worth
        loading now (documents/gloss_warmup.py)."""
        if self.warmup is not None and progress.indexed:
            self.warmup.request()
        if not progress.indexed or not self.loader.ready():
            return
        try:
            semantic = self.loader.get(0).parts.env.semantic_search()
            if semantic is not None:
                semantic.after_search()
        except Exception as exc:  # the agent failed to load: the chat says so at the first turn
            LOGGER.debug("embedding after background indexing not started: %s", exc)

    def _stop_mcp_servers(self) -> None:
        """MCP servers are child processes (or sessions) of this chat: end them with it, also
        when the agent is still loading (the chat does not wait for the load)."""
        try:
            self.loader.stop_servers()
        except Exception as exc:  # a server would not stop
            LOGGER.debug("MCP servers not stopped: %s", exc)

    def _loop(self) -> int:
        self._banner()
        for problem in self.session.hooks.problems:
            self.console.print("[yellow]" + escape(problem.said().shown(_, ngettext)) + "[/]")
        for unread in self.custom_commands.problems:
            self.console.print(
                "[yellow]"
                + escape(_("Command not read: {problem}").format(problem=unread.shown(_, ngettext)))
                + "[/]"
            )
        self.session.start("resume" if self.options.resume else "startup")
        prompt = self._prompt = self._prompt_session()
        if self.first_message and self.first_message.strip():
            self.console.print(f"[bold]{escape(PROMPT)}[/]{escape(self.first_message)}", highlight=False)
            self.send(self.first_message.strip())
        while True:
            try:
                from generalAgent.cli.escape_key import give_to_prompt, take_line_buffer

                # Keys typed since the last prompt, during a turn or as a command ran (a Ctrl-D
                # among them still ends the chat), are read first.
                give_to_prompt(prompt.input, self.typed_ahead + take_line_buffer())
                self.typed_ahead = ""
                self._say_background_news()
                prompt.bottom_toolbar = self.background.toolbar if self.background.running() else None
                line = prompt.prompt(
                    PROMPT,
                    default=self.prompt_default,
                    pre_run=lambda: follow_at_prompt(self.background, self._say_background_news, prompt),
                )
                self.prompt_default = ""
            except (EOFError, KeyboardInterrupt):
                self.farewell()
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
        """A typed line (or a custom command's body) as a turn of the session."""
        outcome = self.session.send(
            text,
            self.agent,
            self._view,
            on_prepared=self._show_uploads,
            progress=lambda message: self.console.status(f"[dim]{escape(message)}[/]"),
            allowed_hosts=self.options.allowed_hosts,
            extra_mentions=mentions,
        )
        for error in outcome.errors:
            self.console.print(f"[red]{escape(error)}[/]")
        if outcome.result is not None:
            self._report(self.agent(), outcome.result)

    def _show_uploads(self, prepared: Any) -> None:
        for upload in prepared.uploads:
            self.console.print(f"[dim]📎 {escape(one_line(describe_file(upload, ngettext, _)))}[/]")

    # -- running a turn -------------------------------------------------------------
    def run_turn(self, agent: LoadedAgent, graph_input: Any, *, context_only: bool = False) -> None:
        """/retry (`graph_input=None` resumes), or a /compact or /clear when `context_only`."""
        result = self.session.run(agent, graph_input, self._view, context_only=context_only)
        self._report(agent, result, context_only=context_only)

    @contextlib.contextmanager
    def _view(self) -> Iterator[TerminalView]:
        """The terminal's view of a turn, Esc listened to while it runs."""
        from generalAgent.cli.approvals import ask_in_terminal
        from generalAgent.cli.escape_key import EscapeKey

        keyboard = EscapeKey()
        try:
            with keyboard:
                self._drawn = TerminalView(
                    self.console,
                    approver=lambda request: ask_in_terminal(self.console, request),
                    reasoning=self.show_reasoning,
                    keyboard=keyboard,
                )
                yield self._drawn
        finally:  # after the keyboard is given back: the keys it read up to then included
            self.typed_ahead += keyboard.take_typed()

    def _report(self, agent: LoadedAgent, result: Any, *, context_only: bool = False) -> None:
        """How the turn ended, its usage line and the files written; then the Stop hooks."""
        self.last_reasoning = result.reasoning
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
        if result.usage.model_calls:
            gauge = (result.context_tokens, self.session.context_window())
            cost = format_cost(result.usage, self.settings.model)
            elapsed = self._drawn.elapsed() if self._drawn is not None else 0.0
            line = format_usage(result.usage, elapsed, gauge, cost)
            self.console.print(f"[dim]{line}[/]")
        print_files_written(self.console, self.session.scope.new_files_written())
        for notice in agent.parts.env.drain_notices(_):  # e.g. built-in knowledge imported
            self.console.print(f"[dim]{escape(notice)}[/]")
        for notice in agent.parts.mcp.drain_notices(_):  # e.g. a server restarted by a call
            self.console.print(f"[yellow]{escape(notice)}[/]")
        if not context_only:
            self.session.stop()

    def farewell(self) -> None:
        """The one goodbye, for /quit, Ctrl-D and Ctrl-C alike: how to come back, if there is
        anything to come back to."""
        print_files_written(self.console, self.session.scope.files_written())
        if self.session.state.nothing_done or self.session.catalog.get(self.session.id) is None:
            self.console.print("[dim]" + _("Bye.") + "[/]")
            return
        resume = f"{command_hint()} --resume {self.session.id}"
        self.console.print(
            "[dim]" + escape(_("Saved. Continue with: {command}").format(command=resume)) + "[/]"
        )

    # -- scans read on by OCR, the folder indexed ----------------------------------------
    def _say_background_news(self) -> None:
        """The background work that began or ended since the last look (OCR readings, the
        folder's indexing), one line each."""
        for style, text in self.background.news():
            self.console.print(f"[{style}]{escape(text)}[/]")

    # -- plumbing -------------------------------------------------------------------
    def agent(self) -> LoadedAgent:
        """The loaded agent, waited for; its start-up notices shown once."""
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
        for notice in agent.parts.mcp.drain_notices(_):  # e.g. a server that did not start
            self.console.print(f"[yellow]{escape(notice)}[/]")
        return agent

    def _banner(self) -> None:
        model = self.settings.model
        where = public_url(model.openai_base_url or "api.openai.com")
        session = _("session {id}").format(id=self.session.id)
        self.console.print(
            f"[bold]generalAgent[/] [dim]· {escape(model.model_name or '?')} @ {escape(where)} · "
            f"{escape(session)} · /help[/]"
        )
        line = no_sandbox_line(self.settings)
        if line:
            self.console.print(f"[yellow]{escape(line)}[/]")

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
            style=Style.from_dict(TOOLBAR_STYLE),
        )

    def _mentionable(self) -> list[Name]:
        """What @ completes: nothing until the agent has loaded (completion never waits)."""
        if not self.loader.ready():
            return []
        try:
            parts = self.loader.get().parts
        except Exception:  # the load failed; the next message says why
            return []
        names = [Name(spec.name, "tool", spec.shown_description) for spec in parts.registry.specs()]
        language = current_language()
        names += [Name(skill.id, "skill", skill.described(language)) for skill in parts.skills.skills]
        names += [Name(p.name, "agent", p.described(language)) for p in parts.agents.profiles]
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


def no_sandbox_line(settings: Settings) -> str:
    """The one line the chat shows when commands run without a sandbox; empty when they have one."""
    from generalAgent.sandbox import SandboxUnavailable, find_sandbox

    try:
        sandbox = find_sandbox(settings.tools.sandbox)
    except SandboxUnavailable as exc:
        return str(exc)
    if sandbox.active:
        return ""
    return _("Commands run without a sandbox ({reason}); see docs/security.md.").format(reason=sandbox.reason)
