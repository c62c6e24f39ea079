"""One session of the agent, as every front end runs it: its state and the sequence of a turn.

The engine's session, below every front end: the chat (cli/chat.py) and `-p`
(cli/once.py) each hold one `SessionController`, the editor server (cli/acp/) one per
editor session, the Python API (agent/api.py) one per `Session`. It owns what belongs to the session the user is in, and is
reset as a whole when the user moves to another one (/new, /resume): its id, the first line
(the title until /rename), files attached for the next message, tools approved "always",
the last turn sent and the one the user cancelled (/retry), and how full the context was.

A turn goes through the same steps wherever it was typed, in this order:

1. the UserPromptSubmit hooks (hooks.py) may block the message before anything happens;
2. prepare: @mentions and #paths acted on, attachments copied (agent/turn_input.py);
3. open: the session enters the catalog (sessions.py) only now, so a message that never
   left leaves no empty session behind;
4. run: the graph streams the turn to the front end's view (agent/turns.py);
5. record: the turn's usage in the catalog, then the Stop hooks.

The SessionStart hooks run when a session starts or is resumed. What the front end shows
of a turn (its view, the usage line, the files written) stays with the front end; the hooks'
notices and the warnings of a prepared turn go to the session's `say`, which is the
terminal for the chat, stderr for `-p` and the agent's thoughts in the editor.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from generalAgent.agent.storage_errors import describe_storage_error
from generalAgent.config.settings import Settings
from generalAgent.config.trust import FolderTrust
from generalAgent.hooks import HookResult, HookSet
from generalAgent.i18n import _, ngettext
from generalAgent.sessions import SessionCatalog
from generalAgent.tools.run_context import RunContext, SessionScope
from generalAgent.tools.workspace import WorkingFolders

if TYPE_CHECKING:
    from generalAgent.agent.loading import LoadedAgent
    from generalAgent.agent.turns import TurnResult, TurnView

LOGGER = logging.getLogger(__name__)


class Say(Protocol):
    """Where a session's lines for the user go (the chat's terminal, `-p`'s stderr, the
    editor's thoughts). `quoted`: text from outside the program (a hook's stderr), which
    the front end shows without letting it control the display."""

    def __call__(self, line: str, *, quoted: bool = False) -> None: ...


@dataclass
class SessionState:
    """What belongs to the session the user is in; a new one starts from nothing."""

    id: str
    first_line: str = ""  # the catalog's title until /rename
    pending_uploads: list[Any] = field(default_factory=list)  # attached for the next message
    # Tools the user approved "always" in this session while this process runs.
    approved: set[str] = field(default_factory=set)
    # The input of the last message sent, and of the last turn the user cancelled (which
    # /retry sends again). Only the message: answers closing earlier calls are stored.
    last_turn: dict[str, Any] | None = None
    cancelled_turn: dict[str, Any] | None = None
    context_tokens: int = 0  # of the session's last request and answer: the context gauge
    # Every turn so far failed before an answer or a tool call (Session.list_if_worth_it).
    nothing_done: bool = False


@dataclass(frozen=True)
class TurnRules:
    """What a front end's mode changes in the approval rules of every turn (the editor's
    approval modes, cli/acp/modes.py); never looser than the user's own settings."""

    approved: frozenset[str] = frozenset()  # run without a question, not remembered after
    only_tools: frozenset[str] | None = None  # every other tool is refused; None: no limit
    # The mode's id, kept with the session in the catalog so that loading it again brings
    # the mode back; None: the front end has no modes (the chat, -p) and keeps the stored one.
    mode: str | None = None


@dataclass
class SendOutcome:
    """What became of a message: the turn's result, or why nothing was sent."""

    result: TurnResult | None = None
    errors: list[str] = field(default_factory=list)  # the input could not be used (a #file not there)
    blocked: str = ""  # a UserPromptSubmit hook refused it: the line shown, with the hook's reason

    @property
    def sent(self) -> bool:
        return self.result is not None


def folder_hooks(settings: Settings, trust: FolderTrust, folder: Path) -> HookSet:
    """The user's hooks, and the folder's once the user trusts it (hooks.py)."""
    from generalAgent.config.sources import user_config_dir
    from generalAgent.hooks import load_hooks

    return load_hooks(user_config_dir(), trust, folder, settings.tools.sandbox, settings.paths.data_dir)


def working_folders(settings: Settings, trust: FolderTrust) -> WorkingFolders:
    """The folders a session's file tools read in place: its own once trusted, and --add-dir's."""
    return WorkingFolders(start=trust.folder, readable=trust.applies, added=settings.added_folders)


class SessionController:
    """A session's state and the prepare → open → run → record sequence of its turns."""

    def __init__(
        self,
        settings: Settings,
        catalog: SessionCatalog,
        hooks: HookSet,
        say: Say,
        *,
        session_id: str | None = None,
        title: str = "",
        listed: bool = True,
        interactive: bool = True,
        cwd: Path | None = None,
    ) -> None:
        self.settings = settings
        self.catalog = catalog
        self.say = say  # the hooks' notices and a prepared turn's warnings
        self.listed = listed  # -p sessions stay out of /sessions unless --save
        self.interactive = interactive  # someone at a terminal can act on an error's advice
        self.cwd = cwd or Path.cwd()
        self.state = SessionState(session_id or SessionCatalog.new_id(), title)
        # What the session's runs carry (tools/run_context.py): its cancel token, its
        # commands, the files its tools wrote, the hooks of its folder, its editor.
        self.scope = SessionScope(self.state.id, self.cwd, hooks=hooks)
        self.rules = TurnRules()

    @classmethod
    def in_folder(
        cls,
        settings: Settings,
        catalog: SessionCatalog,
        trust: FolderTrust,
        say: Say,
        folder: Path,
        **options: Any,
    ) -> SessionController:
        """A session working in `folder`, under the user's decision about it (`trust`): its
        hooks and the files its tools read in place follow that decision (follow_folder)."""
        controller = cls(settings, catalog, folder_hooks(settings, trust, folder), say, cwd=folder, **options)
        controller.scope.folders = working_folders(settings, trust)
        return controller

    def follow_folder(self, trust: FolderTrust) -> None:
        """From the next turn on, the session works under `trust` (a decision taken since it
        opened): its folder's hooks run and its files are read in place, or not."""
        self.scope.hooks = folder_hooks(self.settings, trust, self.cwd)
        self.scope.folders = working_folders(self.settings, trust)

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def hooks(self) -> HookSet:
        return self.scope.hooks

    def switch(self, session_id: str | None = None, title: str = "") -> None:
        """Move to another session (a new one without `session_id`): nothing of this one
        follows but the folder, its hooks and the editor."""
        self.state = SessionState(session_id or SessionCatalog.new_id(), title)
        old = self.scope
        self.scope = SessionScope(
            self.state.id, self.cwd, hooks=old.hooks, folders=old.folders, editor=old.editor
        )
        old.close()

    def close(self) -> None:
        """The session ends: its scope's commands are killed and its editor let go."""
        self.scope.close()

    def run_context(self, approved: frozenset[str] = frozenset()) -> RunContext:
        """The context of a run of this session: its scope, the tools approved "always",
        and the mode's limit."""
        return RunContext(scope=self.scope, approved=approved, only_tools=self.rules.only_tools)

    def config(self) -> dict[str, Any]:
        from generalAgent.graph.turn import thread_config  # LangChain loads in the background

        return thread_config(self.id)

    # -- hooks ----------------------------------------------------------------------
    def start(self, source: str) -> None:
        """The SessionStart hooks: `source` is startup, resume or new."""
        started = self.hooks.run("SessionStart", {"session_id": self.id, "source": source})
        self.hook_said(started, _("A SessionStart hook says:"))

    def stop(self) -> None:
        """The Stop hooks, once a turn has ended and been recorded."""
        stopped = self.hooks.run("Stop", {"session_id": self.id, "stop_hook_active": False})
        self.hook_said(stopped, _("A Stop hook says:"))

    def hook_said(self, outcome: HookResult, blocked_line: str) -> bool:
        """Show what hooks said to the user; True when one blocked (exit 2), with its stderr."""
        for notice in outcome.notices:
            self.say(notice.said().shown(_, ngettext))
        if outcome.blocked:
            self.say(blocked_line)
            if outcome.reason:
                self.say(outcome.reason, quoted=True)
        return outcome.blocked

    # -- a turn ---------------------------------------------------------------------
    def send(
        self,
        text: str,
        load_agent: Callable[[], LoadedAgent],
        view: Callable[[], AbstractContextManager[TurnView]],
        *,
        first_line: str = "",
        on_prepared: Callable[[Any], None] | None = None,
        **prepare_options: Any,
    ) -> SendOutcome:
        """UserPromptSubmit hooks → prepare → open → run → record, for a message typed (or
        piped, or sent by the editor). `load_agent()` is asked for the agent once the hooks let
        the message through (the chat's may still be loading). `view()` gives the turn's view for the time it runs;
        `on_prepared(prepared)` sees the prepared turn before it runs (the attachments to
        show). `prepare_options` go to agent/turn_input.py's prepare_turn."""
        submitted = self.hooks.run("UserPromptSubmit", {"session_id": self.id, "prompt": text})
        blocked_line = _("A UserPromptSubmit hook blocked this message; it was not sent.")
        if self.hook_said(submitted, blocked_line):
            return SendOutcome(blocked="\n".join(filter(None, [blocked_line, submitted.reason])))
        from generalAgent.agent.turn_input import prepare_turn

        agent = load_agent()
        prepared = prepare_turn(
            text, agent, self.config(), self.id, self.cwd, self.state.pending_uploads, **prepare_options
        )
        for warning in prepared.warnings:
            self.say(warning)
        if prepared.graph_input is None:
            return SendOutcome(errors=prepared.errors)
        self.state.pending_uploads = []
        if on_prepared is not None:
            on_prepared(prepared)
        self.open(first_line or text.splitlines()[0])
        return SendOutcome(result=self.run(agent, prepared.graph_input, view))

    def open(self, first_line: str) -> None:
        """The session enters the catalog (once: the first line is its title), with its mode."""
        if not self.state.first_line:
            self.state.first_line = first_line
        self.catalog.open_session(
            self.id,
            self.state.first_line,
            self.cwd.resolve(),
            listed=self.listed,
            approval_mode=self.rules.mode,
        )
        self.state.nothing_done = False  # listed again: the turn about to run may do work

    def run(
        self,
        agent: LoadedAgent,
        graph_input: Any,
        view: Callable[[], AbstractContextManager[TurnView]],
        *,
        context_only: bool = False,
    ) -> TurnResult:
        """Run a turn and record it: a message, /retry (`graph_input=None` resumes where a
        turn failed) or, `context_only`, a /compact or /clear (those answer nothing and
        count as no turn)."""
        from generalAgent.agent.turns import run_turn
        from generalAgent.providers.errors import describe_model_error

        self.scope.start_turn()
        by_rules = self.rules.approved - self.state.approved
        approved = self.state.approved | by_rules
        with view() as turn_view:
            result = run_turn(
                agent.graph,
                self.config(),
                graph_input,
                turn_view,
                lambda exc: (
                    describe_model_error(exc, self.settings.model, _, interactive=self.interactive)
                    or describe_storage_error(exc, self.settings.paths)
                ),
                on_cancel=self.scope.cancel,
                approved=approved,
                context=self.run_context(),
            )
        self.state.approved |= approved - by_rules  # the user's "always" answers stay, the mode's do not
        self.record(result, graph_input, context_only=context_only)
        if not context_only:
            self.list_if_worth_it(agent, result)
        return result

    def list_if_worth_it(self, agent: LoadedAgent, result: TurnResult) -> None:
        """Keep a session whose turns all failed before anything happened off /sessions and
        the picker (docs/sessions.md, "Failed first messages").

        A session is listed before its first turn runs, so that a crash in that turn can be
        resumed: the turn may have run tools and written files. When the turn instead ends
        with an error (a wrong key, a model that is down, Ctrl-C before the answer) and the
        session's history holds no answer and no tool call, there is nothing to come back
        to: it is taken off the list (its id still resumes it). The next message lists it
        again before it runs, and a turn that gets anywhere keeps it listed."""
        if not self.listed:
            return
        nothing_done = False
        if not result.ok and not result.answer.strip():
            try:
                messages = agent.graph.get_state(self.config()).values.get("messages", [])
            except Exception:  # an unreadable checkpoint: keep the session where the user sees it
                LOGGER.warning("could not read the session's history", exc_info=True)
                messages = None
            nothing_done = messages is not None and all(getattr(m, "type", "") == "human" for m in messages)
        if nothing_done == self.state.nothing_done:
            return
        try:
            self.catalog.set_listed(self.id, not nothing_done)
        except sqlite3.Error as exc:
            LOGGER.warning("could not update the session list: %s", exc)
            return
        self.state.nothing_done = nothing_done

    def record(self, result: TurnResult, graph_input: Any, *, context_only: bool = False) -> None:
        """The turn's usage in the catalog, and what /retry and the context gauge need."""
        try:
            if graph_input is None or context_only:
                self.catalog.add_usage(self.id, result.usage)
            else:
                self.catalog.record_turn(self.id, self.state.first_line, result.usage)
        except sqlite3.Error as exc:  # e.g. the disk filled during the turn: the turn's own error is shown
            LOGGER.warning("could not record the turn: %s", exc)
        state = self.state
        if graph_input is not None and not context_only:
            state.last_turn = {**graph_input, "messages": graph_input["messages"][-1:]}
        state.cancelled_turn = state.last_turn if result.cancelled else None
        if context_only:
            state.context_tokens = 0  # known again after the next answer
        else:
            state.context_tokens = result.context_tokens or state.context_tokens

    def context_window(self) -> int:
        from generalAgent.providers.tokens import context_window

        return context_window(self.settings.model).tokens
