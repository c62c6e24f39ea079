"""The Python API: load an agent once, open sessions for folders, send turns, get typed results.

    from generalAgent.agent import Agent

    with Agent.from_environment() as agent:
        session = agent.open_session("~/reports")
        turn = session.send("Summarise report.pdf in three lines")
        print(turn.answer, turn.usage.input_tokens, turn.files_written)

It is the engine the terminal, `-p` and the editor server run (agent/session.py,
agent/turns.py), without any of them: nothing here imports `generalAgent.cli`. A session
for a folder the user trusted runs on that folder's configuration (its .env, mcp.json,
AGENTS.md, skills), as an editor session does (agent/folder_agents.py): the agent loaded
first serves its own folder, another is loaded per other configuration and closed with
its last session. A session
is the chat's (same ids, checkpoints and catalog: `generalagent --resume <id>` continues
it). A call that needs the user's approval is put to the session's `approve` function;
without one, it is refused (nothing the model asks for runs unseen). `cancel()` may be
called from another thread and stops that session's turn only. docs/api.md documents it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from generalAgent.agent.events import ApprovalRequest, ToolEnd, ToolStart, TurnEvent
from generalAgent.agent.files_changed import workspace_state, written_files
from generalAgent.agent.folder_agents import AgentLease, FolderAgents, agent_key, folder_settings
from generalAgent.agent.loading import LoadedAgent, load_agent
from generalAgent.agent.rewind import RewindError, RewindResult, UserTurn
from generalAgent.agent.session import SessionController
from generalAgent.agent.turns import TurnResult
from generalAgent.config.settings import Settings, load_settings
from generalAgent.config.trust import FolderTrust
from generalAgent.sessions import SessionCatalog, Usage
from generalAgent.tools.approval import NO

# What a session asks the program about a call that needs approval: the request (tool,
# args, reason, diff) → "yes", "always", "keep" or "no" (tools/approval.py).
Approve = Callable[[dict[str, Any]], str]


def refuse_all(request: dict[str, Any]) -> str:
    """The default answer to every approval question: no."""
    return NO


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call of a turn and how it ended."""

    id: str
    name: str
    args: dict[str, Any]
    result: str = ""
    is_error: bool = False


@dataclass(frozen=True)
class TurnReport:
    """What one turn did, as every front end shows it."""

    answer: str
    usage: Usage
    cost: float | None  # at MODEL_PRICES for the model, in its currency; None: no price
    tool_calls: tuple[ToolCallRecord, ...]
    files_written: tuple[Path, ...]  # by the file tools and by approved commands, real paths
    refused_tools: tuple[str, ...]  # tools whose calls the user (or `approve`) refused
    reasoning: tuple[str, ...] = ()
    error: str | None = None
    cancelled: bool = False
    context_tokens: int = 0  # of the last request and its answer: how full the context is

    @property
    def ok(self) -> bool:
        return self.error is None and not self.cancelled


class _CollectingView:
    """The turn's view for a program: records the calls and their results, asks `approve`."""

    def __init__(self, approve: Approve) -> None:
        self._approve = approve
        self.calls: dict[str, dict[str, Any]] = {}
        self.refused: list[str] = []

    def close(self) -> None: ...

    def on_event(self, event: TurnEvent) -> None:
        if isinstance(event, ToolStart):
            self.calls[event.call_id] = {"id": event.call_id, "name": event.name, "args": dict(event.args)}
        elif isinstance(event, ToolEnd):
            record = self.calls.setdefault(
                event.call_id, {"id": event.call_id, "name": event.name, "args": {}}
            )
            record.update(result=event.content, is_error=event.is_error)

    def approve(self, request: ApprovalRequest) -> str:
        answer = self._approve(request.as_dict())  # the documented request: a dict (docs/api.md)
        if answer == NO:
            self.refused.append(request.tool)
        return answer


class Session:
    """One conversation in a folder: turns, retry, compaction, rewind, cancel. Use one thread per session."""

    def __init__(
        self, agent: Agent, lease: AgentLease, controller: SessionController, approve: Approve
    ) -> None:
        self._agent = agent
        self._lease = lease  # its hold on the agent of its folder's configuration
        self._controller = controller
        self.approve = approve

    @property
    def _loaded(self) -> LoadedAgent:
        return self._lease.agent

    @property
    def id(self) -> str:
        return self._controller.id

    @property
    def folder(self) -> Path:
        return self._controller.cwd

    def send(self, text: str) -> TurnReport:
        """One turn: the message (with its @mentions and #paths acted on) and the answer."""
        view = _CollectingView(self.approve)
        with self._watching_files() as written:
            outcome = self._controller.send(text, lambda: self._loaded, lambda: _as_context(view))
        if outcome.blocked:
            return self._report(TurnResult(error=outcome.blocked), view, written)
        if outcome.result is None:
            return self._report(TurnResult(error=" ".join(outcome.errors)), view, written)
        self._controller.stop()
        return self._report(outcome.result, view, written)

    def retry(self) -> TurnReport:
        """The last turn again: resumed where it failed, or sent again after a cancel."""
        from generalAgent.agent.turns import discard_last_turn

        view = _CollectingView(self.approve)
        state = self._controller.state
        graph_input = None
        if state.cancelled_turn is not None:
            discard_last_turn(self._loaded.graph, self._controller.config())
            graph_input, state.cancelled_turn = state.cancelled_turn, None
        with self._watching_files() as written:
            result = self._controller.run(self._loaded, graph_input, lambda: _as_context(view))
        return self._report(result, view, written)

    def compact(self, focus: str = "") -> TurnReport:
        """Summarise the conversation so far into one message (`/compact [focus]`)."""
        from generalAgent.graph.turn import context_request_input

        view = _CollectingView(self.approve)
        request = context_request_input("compact", focus=focus)
        with self._watching_files() as written:
            result = self._controller.run(
                self._loaded, dict(request), lambda: _as_context(view), context_only=True
            )
        return self._report(result, view, written)

    def turns(self) -> list[UserTurn]:
        """The user's messages of the conversation, oldest first (`position` from 0): what
        `rewind` can go back to."""
        from generalAgent.agent.rewind import session_turns

        return session_turns(self._loaded, self._controller)

    def rewind(self, to_turn: int, *, files: bool = True, delete_created: bool = False) -> RewindResult:
        """Back to just before the user's message at position `to_turn` (`turns()`; -1 the
        last): that message and everything after it leave the conversation. With `files`,
        the files the agent wrote since then (working folder, outputs/) are restored as
        they were, except those someone else changed since (kept, listed in `kept`); with
        `delete_created` too, the files it created since are deleted. Raises IndexError
        for a position that is no message, RewindError when the store failed (nothing
        changed)."""
        from generalAgent.agent.rewind import rewind_session

        turn = self.turns()[to_turn]
        return rewind_session(
            self._loaded, self._controller, turn, restore=files, delete_created=files and delete_created
        )

    def cancel(self) -> None:
        """Stop this session's turn (from any thread): its model call, sub-agents and commands."""
        self._controller.scope.cancel()

    def close(self) -> None:
        """The session ends: its commands are killed, and the agent keeps nothing of it. It
        stays in the catalog to resume."""
        from generalAgent.graph.checkpoints import forget_thread

        self._controller.close()
        if self._agent._forget(self):
            forget_thread(self._loaded.checkpointer, self.id)
            self._lease.release()  # the last session of another folder's agent closes it

    @contextmanager
    def _watching_files(self) -> Iterator[list[Path]]:
        """The files a command wrote in the workspace during the block (no tool recorded them)."""
        root = self._loaded.parts.env.workspace_for(self.id).root
        before = workspace_state(root)
        written: list[Path] = []
        yield written
        written.extend(written_files(before, workspace_state(root)))

    def _report(self, result: TurnResult, view: _CollectingView, by_commands: list[Path]) -> TurnReport:
        model = self._controller.settings.model
        price = model.prices.get(model.model_name or "")
        usage = result.usage
        cost = (
            None
            if price is None
            else price.cost(usage.input_tokens, usage.cached_tokens, usage.output_tokens)
        )
        files = dict.fromkeys([*self._controller.scope.new_files_written(), *by_commands])
        return TurnReport(
            answer=result.answer,
            usage=usage,
            cost=cost,
            tool_calls=tuple(ToolCallRecord(**call) for call in view.calls.values()),
            files_written=tuple(files),
            refused_tools=tuple(view.refused),
            reasoning=tuple(result.reasoning),
            error=result.error,
            cancelled=result.cancelled,
            context_tokens=result.context_tokens,
        )


class Agent:
    """The agent loaded once (model, tools, MCP servers, checkpoints); many sessions at once."""

    def __init__(self, loaded: LoadedAgent) -> None:
        self.loaded = loaded
        self.settings: Settings = loaded.parts.settings
        # The agents by configuration (agent/folder_agents.py): `loaded` for its own folder's,
        # held for the agent's life; another folder's is loaded for its first session.
        self._folders = FolderAgents(self._load)
        self._home = self._folders.acquire(self.settings.sources.trust)
        self._catalogs: dict[Path, SessionCatalog] = {}
        self._sessions: list[Session] = []
        self._lock = threading.Lock()

    def _load(self, trust: FolderTrust) -> LoadedAgent:
        if agent_key(trust) == agent_key(self.settings.sources.trust):
            return self.loaded
        loaded = load_agent(folder_settings(self.settings, trust))
        loaded.parts.mcp.wait_for_startup()  # a program's first turn sees every tool
        return loaded

    def _catalog(self, settings: Settings) -> SessionCatalog:
        """The session catalog of `settings`' data home (a folder's own DATA_DIR has its own)."""
        path = settings.paths.sessions_db
        with self._lock:
            if path not in self._catalogs:
                self._catalogs[path] = SessionCatalog(path)
            return self._catalogs[path]

    @classmethod
    def from_settings(cls, settings: Settings) -> Agent:
        loaded = load_agent(settings)
        loaded.parts.mcp.wait_for_startup()  # a program's first turn sees every tool
        return cls(loaded)

    @classmethod
    def from_environment(cls) -> Agent:
        """Settings from the environment and `.env` (MODEL_NAME, OPENAI_API_KEY,
        OPENAI_BASE_URL, …), as the terminal reads them."""
        return cls.from_settings(load_settings())

    def open_session(
        self,
        folder: str | Path | None = None,
        *,
        session_id: str | None = None,
        approve: Approve = refuse_all,
    ) -> Session:
        """A new session for `folder` (the current one by default), or the stored session
        `session_id` resumed. As the user decided about that folder (`generalagent trust`,
        the chat's or the editor's question), its files are read in place, its hooks run and
        its configuration is used (.env, mcp.json, AGENTS.md, skills: another folder's are
        loaded for it); a folder nobody decided about is not trusted, and gets the user's
        configuration alone. Raises SettingsError for a trusted folder's .env value that
        cannot be used."""
        from generalAgent.config.trust import folder_trust

        cwd = Path(folder).expanduser().resolve() if folder is not None else Path.cwd()
        # The folder the agent was loaded in keeps the decision it was loaded with.
        loaded_with = self.settings.sources.trust
        trust = loaded_with if loaded_with.folder == folder_trust(cwd).folder else folder_trust(cwd)
        lease = self._folders.acquire(trust)
        try:
            settings = lease.agent.parts.settings
            catalog = self._catalog(settings)
            lines: list[str] = []
            controller = SessionController.in_folder(
                settings,
                catalog,
                trust,
                lambda line, quoted=False: lines.append(line),
                cwd,
                session_id=session_id,
                interactive=False,
            )
            controller.start("resume" if session_id and catalog.get(session_id) else "startup")
        except BaseException:
            lease.release()
            raise
        session = Session(self, lease, controller, approve)
        with self._lock:
            self._sessions.append(session)
        return session

    def _forget(self, session: Session) -> bool:
        """The session leaves the agent; False when it had left already."""
        with self._lock:
            if session in self._sessions:
                self._sessions.remove(session)
                return True
            return False

    def close(self) -> None:
        """Close every session, the MCP servers and the checkpoints."""
        from generalAgent.graph.checkpoints import forget_thread

        with self._lock:
            sessions, self._sessions = self._sessions, []
        for session in sessions:
            session._controller.close()
            forget_thread(session._loaded.checkpointer, session.id)
        self._home.release()
        self._folders.close()  # every agent, `loaded` included
        with self._lock:
            catalogs, self._catalogs = list(self._catalogs.values()), {}
        for catalog in catalogs:
            catalog.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def _as_context(view: Any) -> AbstractContextManager[Any]:
    from contextlib import nullcontext

    return nullcontext(view)


__all__ = [
    "Agent",
    "Approve",
    "RewindError",
    "RewindResult",
    "Session",
    "ToolCallRecord",
    "TurnReport",
    "UserTurn",
    "refuse_all",
]
