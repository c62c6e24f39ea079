"""The ACP `Agent`: the editor's sessions, served over stdio, each by its folder's agent.

A prompt is one turn in a worker thread, run by the session controller the chat and `-p`
use (agent/session.py: hooks, prepare, open, run, record); view.py reports it to the editor,
and what the session's console prints (hook notices, skipped #paths) reaches it as the
agent's thoughts. Sessions run their turns at the same time, one turn at a time each: every
session has its own run context (tools/run_context.py: cancel token, commands, files
written, editor, hooks of its folder) and its model's graph (LoadedAgent.for_model). A session's agent is its folder's
(agent/folder_agents.py): a trusted folder's .env, mcp.json, AGENTS.md, skills and tools
file reach that folder's sessions only, an untrusted folder's none; sessions of one
folder share its agent, closed when the last of them closes (`session/close`) or leaves
it, and never under a running turn.
Cancellation is the chat's Ctrl-C without the signal, for that session only: its cancel
token stops its model call and its tools' work at once, the stored history is repaired,
and its permission requests still open are ended as a "no".

Sessions are the chat's sessions (same ids, same checkpoints, same catalog), so a
session started in the editor can be resumed in the terminal and the other way round.
`session/load` replays the stored conversation to the editor; `session/resume` does not;
`session/list` gives the most recent. A session has two options, its model (MODEL_NAME
and MODEL_CHOICES) and its approval mode (modes.py), each also offered the way older
clients know (`modes`, `session/set_mode`). The mode is kept with the session in the
catalog, so `session/load` and `session/resume` bring it back (a mode this release no
longer has comes back as `ask`, and the user is told). What the editor offers at `initialize`
(its files, its terminals) the tools use through editor.py; the MCP servers it passes
with a session are started as the user's own (mcp_servers.py).

stdout carries JSON-RPC and nothing else: the protocol writes to a duplicate of file
descriptor 1, and descriptor 1 itself (and `sys.stdout`) is pointed at stderr, so a stray
print from a library cannot corrupt the stream.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    run_agent,
    update_agent_thought_text,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    CloseSessionResponse,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Implementation,
    ListSessionsResponse,
    McpCapabilities,
    PermissionOption,
    PromptCapabilities,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
)

from generalAgent.agent.folder_agents import AgentLease, FolderAgents, agent_key, load_for
from generalAgent.agent.loading import LoadedAgent
from generalAgent.agent.session import SendOutcome, SessionController
from generalAgent.cli.acp.editor import EditorBridge
from generalAgent.cli.acp.framing import pump_objects
from generalAgent.cli.acp.modes import (
    ASK,
    MODE_IDS,
    MODES,
    mode_choices,
    mode_state,
    restored_mode,
    turn_rules,
)
from generalAgent.cli.acp.view import AcpView, prompt_text, replay_updates
from generalAgent.cli.terminal_text import terminal_safe
from generalAgent.config.settings import Settings
from generalAgent.config.trust import FolderTrust, TrustStore, TrustStoreError, folder_trust
from generalAgent.i18n import _
from generalAgent.sessions import SessionCatalog
from generalAgent.sessions import SessionInfo as StoredSession

LOGGER = logging.getLogger(__name__)

MODEL_OPTION, MODE_OPTION = "model", "mode"
SESSIONS_LISTED = 50  # session/list answers one page: the most recent ones


@dataclass
class AcpSession:
    # The session's state and turn sequence, as the chat's (agent/session.py): its id and
    # folder, hooks, the catalog, the tools allowed "always" while the process lives.
    controller: SessionController
    model: str
    mode: str = ASK
    running: threading.Event = field(default_factory=threading.Event)
    # One turn at a time per session (a second prompt waits); other sessions' go on.
    turn_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Permission requests waiting for the editor: a cancel ends them (as a "no") even if the
    # editor never answers them, so the turn can stop. Only touched on the event loop.
    asking: set[asyncio.Task] = field(default_factory=set)
    notices: list[str] = field(default_factory=list)  # shown at the start of the next turn
    editor: EditorBridge | None = None
    # The decision about the session's folder as it applies to the session (trust.py): its
    # files, its hooks and (the server's own folder) its configuration follow it.
    trust: FolderTrust = field(default_factory=FolderTrust)
    trust_asked: bool = False  # the editor was asked (once per session)
    trusted_here: bool | None = None  # its answer, when the store could not keep it
    servers: list[Any] = field(default_factory=list)  # the editor's MCP servers for it
    # Its holds on them in its agent's MCP manager (handles), let go when it closes or moves.
    held_servers: list[str] = field(default_factory=list)
    # Its hold on its folder's agent (agent/folder_agents.py), taken when it opens.
    lease: AgentLease | None = None

    @property
    def agent(self) -> LoadedAgent:
        assert self.lease is not None
        return self.lease.agent

    @property
    def id(self) -> str:
        return self.controller.id

    @property
    def cwd(self) -> Path:
        return self.controller.cwd


class GeneralAgentACP:
    """The ACP `Agent`: the editor's sessions, each its own turns on its folder's agent."""

    def __init__(self, settings: Settings, agents: FolderAgents | None = None) -> None:
        # The process's settings: its data home (the catalog) and --add-dir; a session's
        # own are its agent's.
        self.settings = settings
        self.sessions: dict[str, AcpSession] = {}
        self.client_capabilities: ClientCapabilities | None = None
        self.agents = agents or FolderAgents(load_for(settings))
        self._conn: Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # The session catalogs by database: the process's, and a folder's own store
        # (DATA_DIR in its .env) where its sessions' checkpoints are.
        self._catalogs: dict[Path, SessionCatalog] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    # --- protocol methods ---------------------------------------------------------------

    async def initialize(
        self, protocol_version: int, client_capabilities: ClientCapabilities | None = None, **kwargs: Any
    ) -> InitializeResponse:
        import generalAgent

        self._loop = asyncio.get_running_loop()
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                # Attached files come as links and are read from disk like #paths (prompt_text).
                prompt_capabilities=PromptCapabilities(embedded_context=False),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    resume=SessionResumeCapabilities(),
                    list=SessionListCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            agent_info=Implementation(
                name="generalagent", title="generalAgent", version=generalAgent.__version__
            ),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session = await self._open(SessionCatalog.new_id(), cwd)
        await asyncio.to_thread(session.controller.start, "startup")
        await self._start_servers(session, mcp_servers)
        return NewSessionResponse(
            session_id=session.id, modes=mode_state(session.mode), config_options=self._options(session)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        session = await self._stored(session_id, cwd)
        await self._start_servers(session, mcp_servers)
        await self._replay(session)
        return LoadSessionResponse(modes=mode_state(session.mode), config_options=self._options(session))

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        session = await self._stored(session_id, cwd)
        await self._start_servers(session, mcp_servers)
        return ResumeSessionResponse(modes=mode_state(session.mode), config_options=self._options(session))

    async def list_sessions(self, cwd: str | None = None, **kwargs: Any) -> ListSessionsResponse:
        """The most recent sessions of the catalog, the terminal's included (one page)."""
        from datetime import UTC, datetime

        recent = self._sessions_catalog().recent(SESSIONS_LISTED)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=str(
                        self.sessions[info.id].cwd
                        if info.id in self.sessions
                        else info.folder or cwd or Path.cwd()
                    ),
                    title=info.title,
                    updated_at=datetime.fromtimestamp(info.updated_at, UTC).isoformat(timespec="seconds"),
                )
                for info in recent
            ]
        )

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id == MODE_OPTION and value in MODE_IDS:
            await self._keep_mode(session, str(value))
            await self._send(
                session.id,
                CurrentModeUpdate(session_update="current_mode_update", current_mode_id=session.mode),
            )
        elif config_id == MODEL_OPTION and value in session.agent.parts.settings.model.choices:
            session.model = str(value)
        else:
            choices = session.agent.parts.settings.model.choices
            names = sorted(MODE_IDS) if config_id == MODE_OPTION else choices
            raise RequestError.invalid_params(
                {"value": _("choose one of: {names}").format(names=", ".join(names))}
            )
        return SetSessionConfigOptionResponse(config_options=self._options(session))

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in MODE_IDS:
            raise RequestError.invalid_params(
                {"modeId": _("choose one of: {names}").format(names=", ".join(sorted(MODE_IDS)))}
            )
        await self._keep_mode(session, mode_id)
        await self._send(
            session.id,
            ConfigOptionUpdate(session_update="config_option_update", config_options=self._options(session)),
        )
        return SetSessionModeResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"prompt": _("The prompt is empty.")})
        async with session.turn_lock:
            if self.sessions.get(session_id) is not session:  # closed while this prompt waited
                raise RequestError.resource_not_found(session_id)
            await self._settle_trust(session)
            assert session.lease is not None
            # The turn's own hold: its agent stays open until it ends, whatever the session
            # moves to meanwhile (folder_agents.py).
            turn = self.agents.share(session.lease)
            agent = turn.agent
            ran_in = session.mode
            try:
                session.notices.extend(agent.drain_notices())  # a server that did not start
                for notice in session.notices:
                    await self._send(session.id, update_agent_thought_text(notice + "\n"))
                session.notices.clear()
                session.running.set()
                outcome = await asyncio.to_thread(self._run_turn, agent, session, text)
            finally:
                session.running.clear()
                for notice in agent.drain_notices():  # a server restarted by a call
                    await self._send(session.id, update_agent_thought_text(notice + "\n"))
                await asyncio.to_thread(turn.release)
            if session.mode != ran_in:
                # Switched while the turn ran: the turn may have stored its own mode after
                # the switch did (the session enters the catalog as the turn starts).
                await self._keep_mode(session, session.mode)
        if outcome.blocked:  # a UserPromptSubmit hook: its line has gone to the editor
            return PromptResponse(stop_reason="refusal")
        result = outcome.result
        if result is None:  # the input could not be used (a #file not there)
            raise RequestError.internal_error({"message": " ".join(outcome.errors)})
        if result.cancelled:
            return PromptResponse(stop_reason="cancelled")
        if result.error:
            raise RequestError.internal_error({"message": result.error})
        await self._report_usage(session, result)
        usage = result.usage
        return PromptResponse(
            stop_reason="end_turn",
            usage=Usage(
                total_tokens=usage.input_tokens + usage.output_tokens,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                thought_tokens=usage.reasoning_tokens or None,
                cached_read_tokens=usage.cached_tokens or None,
            ),
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.running.is_set():
            session.controller.scope.cancel()  # this session's turn, no other's
            for waiting in list(session.asking):
                waiting.cancel()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """The editor is done with the session: its turn (if one runs) is cancelled and
        waited for, its commands killed, and its hold on its folder's agent let go (the
        last one closes the agent). It stays in the catalog: it can be loaded again."""
        session = self._session(session_id)
        await self.cancel(session_id)
        async with session.turn_lock:
            self.sessions.pop(session_id, None)
        await asyncio.to_thread(self._let_go, session)
        return CloseSessionResponse()

    @classmethod
    def _let_go(cls, session: AcpSession) -> None:
        from generalAgent.graph.checkpoints import forget_thread

        session.controller.close()
        if session.lease is not None:
            cls._let_go_servers(session)
            forget_thread(session.agent.checkpointer, session.id)
            session.lease.release()

    @staticmethod
    def _let_go_servers(session: AcpSession) -> None:
        """The editor's MCP servers of the session stop unless another session holds them."""
        held, session.held_servers = session.held_servers, []
        if session.lease is not None:
            for handle in held:
                session.agent.parts.mcp.let_go(handle)

    # --- one turn, in a worker thread ---------------------------------------------------

    def _run_turn(self, agent: LoadedAgent, session: AcpSession, text: str) -> SendOutcome:
        """The session's turn, as the chat's (hooks, prepare, open, run, record), in the
        session's model and approval mode."""
        agent = agent.for_model(session.model)
        controller = session.controller
        controller.settings = agent.parts.settings
        controller.rules = turn_rules(session.mode)
        editor = session.editor
        view = AcpView(
            lambda update: self._notify(session.id, update),
            lambda call, options: self._ask(session, call, options),
            agent.parts.env.workspace_for(session.id).root,
            terminal_of=(editor.terminals.get if editor is not None else lambda call_id: None),
            locate=self._locator(agent, session),
        )
        outcome = controller.send(text, lambda: agent, lambda: nullcontext(view))
        if outcome.sent:
            controller.stop()
        return outcome

    @staticmethod
    def _locator(agent: LoadedAgent, session: AcpSession) -> Callable[[str], Path]:
        """Where a tool's path argument really is in this session: the project folder's file
        or the workspace's, as the tools resolve it (tools/workspace.py)."""
        scope = session.controller.scope
        return agent.parts.env.workspace_for(session.id, scope.editor, scope.folders).resolve

    def _notify(self, session_id: str, update: Any) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(self._send(session_id, update), self._loop).result()

    async def _send(self, session_id: str, update: Any) -> None:
        assert self._conn is not None
        await self._conn.session_update(session_id, update)

    def _ask(self, session: AcpSession, call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        assert self._conn is not None and self._loop is not None
        conn = self._conn

        async def ask() -> Any:
            # Registered on the loop before the request goes out, so a cancel that follows
            # it (also handled on the loop) always finds it.
            task = asyncio.current_task()
            assert task is not None
            session.asking.add(task)
            try:
                return await conn.request_permission(session_id=session.id, tool_call=call, options=options)
            finally:
                session.asking.discard(task)

        try:
            outcome = asyncio.run_coroutine_threadsafe(ask(), self._loop).result().outcome
        except concurrent.futures.CancelledError:
            return None  # the turn was cancelled while the editor had the question
        return getattr(outcome, "option_id", None)  # a cancelled request has none: no

    async def _report_usage(self, session: AcpSession, result: Any) -> None:
        """How full the context is after the turn (the editor's gauge), as the chat shows it."""
        from generalAgent.providers.tokens import context_window

        if result.context_tokens and session.lease is not None:
            window = context_window(session.agent.parts.settings.model).tokens
            await self._send(
                session.id,
                UsageUpdate(session_update="usage_update", used=result.context_tokens, size=window),
            )

    # --- sessions -----------------------------------------------------------------------

    def _sessions_catalog(self, settings: Settings | None = None) -> SessionCatalog:
        """The catalog of `settings`' data home (default: the process's)."""
        path = (settings or self.settings).paths.sessions_db
        if path not in self._catalogs:
            self._catalogs[path] = SessionCatalog(path)
        return self._catalogs[path]

    async def _open(self, session_id: str, cwd: str) -> AcpSession:
        folder = Path(cwd)
        opened: list[AcpSession] = []  # the session, once made: its lines go to its editor

        def say(line: str, *, quoted: bool = False) -> None:
            self._say(opened[0], terminal_safe(line) if quoted else line)

        trust = await asyncio.to_thread(folder_trust, folder)
        lease, notices = await asyncio.to_thread(self.agents.acquire_usable, trust)
        settings = lease.agent.parts.settings
        try:
            catalog = self._sessions_catalog(settings)
            controller = await asyncio.to_thread(
                SessionController.in_folder,
                settings,
                catalog,
                trust,
                say,
                folder,
                session_id=session_id,
                interactive=False,
            )
        except BaseException:
            await asyncio.to_thread(lease.release)
            raise
        session = AcpSession(
            controller, settings.model.model_name or "", trust=trust, lease=lease, notices=notices
        )
        opened.append(session)
        assert self._conn is not None and self._loop is not None
        cancelled = controller.scope.cancelled
        editor = EditorBridge(self._conn, self._loop, session_id, self.client_capabilities, cancelled)
        if editor.offers_anything:
            # The session's tools read, write and run commands through the editor (editor.py).
            session.editor = editor
            controller.scope.editor = editor
        self.sessions[session_id] = session
        return session

    # --- the session's folder: asked about, then followed (trust.py) ----------------------

    async def _settle_trust(self, session: AcpSession) -> None:
        """Before a prompt: asks the editor about the session's folder when nobody decided
        (once per session), then makes the session follow the decision as it stands now
        (also one taken meanwhile in the terminal or in another session)."""
        trust = await asyncio.to_thread(folder_trust, session.cwd)
        if trust.undecided and session.trusted_here is not None:
            trust = trust.decided(session.trusted_here)  # answered here, the store could not keep it
        elif trust.undecided and not session.trust_asked:
            session.trust_asked = True
            trusted = await self._ask_trust(session, trust)
            if trusted is not None:
                trust = trust.decided(trusted)
        if trust.decision != session.trust.decision or trust.folder != session.trust.folder:
            await self._follow_trust(session, trust)

    async def _ask_trust(self, session: AcpSession, trust: FolderTrust) -> bool | None:
        """The question, through the editor; True/False remembered, None a "no" for now."""
        from generalAgent.cli.acp.trust import TRUST, trust_answered, trust_question

        assert self._conn is not None
        start, request, options = trust_question(session.id, trust)
        await self._send(session.id, start)
        try:
            answer = await self._conn.request_permission(
                session_id=session.id, tool_call=request, options=options
            )
            chosen = getattr(answer.outcome, "option_id", None)
        except Exception as exc:  # an editor that cannot show it: not trusted, nothing remembered
            LOGGER.warning("session %s: the folder-trust question failed: %s", session.id, exc)
            chosen = None
        trusted = None if chosen is None else chosen == TRUST
        remembered = True
        if trusted is not None and trust.folder is not None:
            try:
                await asyncio.to_thread(TrustStore().remember, trust.folder, trusted)
            except TrustStoreError as exc:
                LOGGER.warning("%s", exc)
                remembered = False
                session.trusted_here = trusted
        await self._send(session.id, trust_answered(session.id, trusted, remembered))
        return trusted

    async def _follow_trust(self, session: AcpSession, trust: FolderTrust) -> None:
        """The session follows `trust`: its files are read in place (or not), its folder's
        hooks run (or not), and it moves to the agent with (or without) that folder's .env,
        mcp.json, AGENTS.md, skills and tools file, as the terminal does once its question
        is answered. The agent it leaves is closed once nothing uses it (folder_agents.py)."""
        session.trust = trust
        old = session.lease
        if old is not None and agent_key(trust) != old.key:
            await asyncio.to_thread(self._let_go_servers, session)  # held again on the new agent
        if old is None or agent_key(trust) != old.key:
            session.lease, notices = await asyncio.to_thread(self.agents.acquire_usable, trust)
            session.notices.extend(notices)
        settings = session.controller.settings = session.agent.parts.settings
        await asyncio.to_thread(session.controller.follow_folder, trust)
        if session.lease is old:
            return
        if session.model not in settings.model.choices:
            session.model = settings.model.model_name or session.model
        if session.servers:
            await self._start_servers(session, session.servers)
        if old is not None:
            await asyncio.to_thread(old.release)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        return session

    def _say(self, session: AcpSession, line: str) -> None:
        """A line for the user that is no part of an answer (a hook's notice, a skipped #path):
        sent at once during a turn, else with the start of the next one."""
        if session.running.is_set():
            self._notify(session.id, update_agent_thought_text(line + "\n"))
        else:
            session.notices.append(line)

    async def _stored(self, session_id: str, cwd: str) -> AcpSession:
        """A session of the catalog (the chat's and the editor's), opened for the editor in
        the approval mode it was left in: the process's catalog, else that of the data home
        `cwd`'s trusted .env names (DATA_DIR=data keeps a project's sessions there)."""
        if session_id in self.sessions:
            return self.sessions[session_id]
        info = self._sessions_catalog().get(session_id)
        if info is None:
            info = await asyncio.to_thread(self._stored_in_folder, session_id, Path(cwd))
        if info is None:
            raise RequestError.resource_not_found(session_id)
        session = await self._open(session_id, cwd)
        session.mode = restored_mode(info.approval_mode)
        if info.approval_mode is not None and session.mode != info.approval_mode:
            LOGGER.warning(
                "session %s: unknown approval mode %r, now %s", session_id, info.approval_mode, ASK
            )
            default = next(mode for mode in MODES if mode.id == session.mode)
            session.notices.append(
                _("The approval mode {mode} no longer exists; this session is in {default} mode.").format(
                    mode=info.approval_mode, default=_(default.name)
                )
            )
        await asyncio.to_thread(session.controller.start, "resume")
        return session

    def _stored_in_folder(self, session_id: str, folder: Path) -> StoredSession | None:
        """The session in the catalog of `folder`'s own data home, when the folder is trusted
        and its .env names one (the catalog a session opened there is kept in)."""
        from generalAgent.agent.folder_agents import folder_settings
        from generalAgent.config.settings import SettingsError

        trust = folder_trust(folder)
        if agent_key(trust) is None:
            return None
        try:
            settings = folder_settings(self.settings, trust)
        except SettingsError:
            return None  # its sessions open on the user's configuration: the process's catalog
        if settings.paths.sessions_db == self.settings.paths.sessions_db:
            return None
        return self._sessions_catalog(settings).get(session_id)

    async def _keep_mode(self, session: AcpSession, mode: str) -> None:
        """The session's approval mode from its next turn, kept with the session (once it is
        in the catalog; else its first turn stores it: agent/session.py)."""
        session.mode = mode
        try:
            await asyncio.to_thread(session.controller.catalog.set_approval_mode, session.id, mode)
        except sqlite3.Error as exc:  # the mode still holds in this process, and is stored with the next turn
            LOGGER.warning("could not keep the approval mode of %s: %s", session.id, exc)

    async def _start_servers(self, session: AcpSession, servers: list[Any] | None) -> None:
        """The editor's MCP servers for this session (mcp_servers.py); what fails is said at
        the start of the next turn."""
        from generalAgent.cli.acp.mcp_servers import start_editor_servers

        if not servers:
            return
        session.servers = list(servers)  # started again on the agent it moves to (_follow_trust)
        await asyncio.to_thread(self._let_go_servers, session)  # a load again: held once
        held, problems = await asyncio.to_thread(
            start_editor_servers, session.agent.parts.mcp, servers, session.cwd
        )
        session.held_servers = held
        for problem in problems:
            LOGGER.warning("%s", problem)
        session.notices.extend(problems)

    async def _replay(self, session: AcpSession) -> None:
        """The stored conversation, as the editor would have seen it live."""
        from generalAgent.graph.turn import thread_config

        agent = session.agent
        state = await asyncio.to_thread(agent.graph.get_state, thread_config(session.id))
        root = agent.parts.env.workspace_for(session.id).root
        locate = self._locator(agent, session)
        for update in replay_updates(state.values.get("messages", []), root, locate):
            await self._send(session.id, update)

    def _options(self, session: AcpSession) -> list[Any]:
        choices = session.agent.parts.settings.model.choices or (session.model,)
        return [
            SessionConfigOptionSelect(
                id=MODE_OPTION,
                name=_("Approval mode"),
                category="mode",
                type="select",
                current_value=session.mode,
                options=[SessionConfigSelectOption(value=mode, name=name) for mode, name in mode_choices()],
            ),
            SessionConfigOptionSelect(
                id=MODEL_OPTION,
                name=_("Model"),
                category="model",
                type="select",
                current_value=session.model,
                options=[SessionConfigSelectOption(value=name, name=name) for name in choices],
            ),
        ]

    def close(self) -> None:
        for session in self.sessions.values():
            session.controller.close()
        self.sessions.clear()
        self.agents.close()
        for catalog in self._catalogs.values():
            catalog.close()
        self._catalogs.clear()


async def _serve(server: GeneralAgentACP, protocol_out: int) -> None:
    """The SDK's connection on stdin and a private copy of stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)  # a prompt may embed a whole file
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    pipe = os.fdopen(protocol_out, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(_WriteProtocol, pipe)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    # Lines that are not one JSON-RPC object get an error here; the SDK crashed on them.
    objects = asyncio.StreamReader(limit=50 * 1024 * 1024)
    pump = asyncio.create_task(pump_objects(reader, objects, writer))
    # session/resume is in the SDK's "unstable" set: routed only with the flag.
    try:
        await run_agent(server, writer, objects, use_unstable_protocol=True)  # type: ignore[arg-type]
    finally:
        pump.cancel()


class _WriteProtocol(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """Back-pressure for the protocol's writer (what `StreamWriter.drain` waits on)."""


def run_acp_server(settings: Settings) -> int:
    """Serve the editor until it closes stdin; the exit status."""
    protocol_out = os.dup(1)
    os.dup2(2, 1)  # whatever else writes to stdout lands on stderr
    sys.stdout = sys.stderr
    server = GeneralAgentACP(settings)
    try:
        asyncio.run(_serve(server, protocol_out))
    except (KeyboardInterrupt, BrokenPipeError, ConnectionResetError):
        pass
    finally:
        server.close()
    return 0
