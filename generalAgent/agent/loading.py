"""Loads the agent (LangChain, LangGraph, tools, checkpointer) off the start-up path.

Importing LangGraph and the OpenAI client takes longer than the 1 s in which the prompt
must appear, so the chat starts loading them in a background thread and shows the
prompt at once; the first message waits for the load only if it is not done yet.
MCP servers are started first thing in that thread, on a loop of their own, and nothing
waits for them (tools/mcp/manager.py).

Leaving the chat never waits for the load either: the servers the load has started are
stopped at once, the load stops at its next step (an import or PostgreSQL that is slow
cannot be interrupted, but the thread is a daemon and the process does not wait for it),
and what it still opens it closes itself.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from generalAgent.config.settings import Settings
from generalAgent.display import Message
from generalAgent.i18n import _

if TYPE_CHECKING:
    from generalAgent.tools.mcp.manager import MCPServerManager


class LoadAbandoned(Exception):
    """The chat ended before the agent had loaded; what the load made is closed."""


@dataclass
class LoadedAgent:
    parts: Any  # generalAgent.graph.builder.AgentParts
    graph: Any  # the compiled graph, checkpointed in DATA_DIR/sessions.db or PostgreSQL
    checkpointer: Any
    notices: list[str]  # start-up news for the user (skills skipped, old checkpoints pruned)
    # The same agent calling another model (for_model), by model name: built once each, so
    # sessions on different models run at once without swapping a graph under each other.
    _by_model: dict[str, LoadedAgent] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def switch_model(self, settings: Settings) -> None:
        """From the next turn on, the graph calls the model `settings` names; the tools, MCP
        servers, checkpointer and every session's history stay as they are."""
        from dataclasses import replace

        from generalAgent.graph.builder import build_graph
        from generalAgent.providers.factory import build_chat_model

        self.parts = replace(
            self.parts,
            settings=settings,
            model=build_chat_model(settings.model, native_search=settings.tools.native_search),
        )
        self.graph = build_graph(self.parts, self.checkpointer)

    def for_model(self, model_name: str) -> LoadedAgent:
        """This agent calling `model_name`: itself when it already does, else a copy with
        its own graph over the same tools, MCP servers and checkpointer (made once). The
        editor server runs each session in its own model, several at once."""
        from dataclasses import replace

        if model_name == self.parts.settings.model.model_name:
            return self
        with self._lock:
            known = self._by_model.get(model_name)
            if known is None:
                settings = self.parts.settings
                model = settings.model.model_copy(update={"model_name": model_name})
                known = LoadedAgent(self.parts, self.graph, self.checkpointer, [])
                known.switch_model(replace(settings, model=model))
                self._by_model[model_name] = known
            return known

    def drain_notices(self) -> list[str]:
        """The agent's lines for the user not shown yet, each once, in the UI language: the
        tools' (built-in knowledge imported) and the MCP servers' (one that did not start,
        one a call restarted)."""
        return self.parts.env.drain_notices(_) + self.parts.mcp.drain_notices(_)

    def close(self) -> None:
        from generalAgent.graph.checkpoints import close_checkpointer

        self.parts.mcp.close()
        self.parts.env.close()
        close_checkpointer(self.checkpointer)


def load_agent(
    settings: Settings,
    model: Any = None,
    mcp: MCPServerManager | None = None,
    abandoned: threading.Event | None = None,
) -> LoadedAgent:
    """The agent, with `mcp`'s servers (the caller's to close, also when the load fails) or,
    without one, the configured servers started here. `abandoned` set stops the load at its
    next step with `LoadAbandoned`."""
    try:
        return _load_agent(settings, model, mcp, abandoned or threading.Event())
    finally:
        resume_collector()


def pause_collector() -> None:
    """Pause Python's cyclic garbage collector while the agent loads (the chat and `-p`).

    Loading LangChain, LangGraph, the OpenAI client and the tools' schemas makes hundreds
    of thousands of objects that live as long as the process; the collector traversed them
    again and again while they were made, a sixth of `-p hi`'s time. `load_agent` resumes it,
    whether the load worked or not.
    """
    gc.disable()


def resume_collector() -> None:
    """The collector back on, if `pause_collector` stopped it, with what exists now frozen
    out of its way (`gc.freeze`: the start-up's objects are never garbage, and a later
    collection need not walk them)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _load_agent(
    settings: Settings, model: Any, given: MCPServerManager | None, abandoned: threading.Event
) -> LoadedAgent:
    if given is None:
        from generalAgent.tools.mcp.manager import MCPServerManager

        # Before LangGraph is imported: the servers' processes start while the rest loads.
        mcp = MCPServerManager.from_settings(settings).start()
    else:
        mcp = given
    try:
        _stop_if(abandoned)  # before the second or two of importing LangGraph
        from generalAgent.graph.builder import build_graph, build_parts
        from generalAgent.graph.checkpoints import close_checkpointer, open_checkpointer

        parts = build_parts(settings, model=model, mcp=mcp)
        _stop_if(abandoned)  # before sessions.db (or PostgreSQL) is opened
        checkpointer = open_checkpointer(settings.paths)
    except BaseException:
        if given is None:
            mcp.close()
        raise
    if abandoned.is_set():  # opening the checkpointer outlasted the chat
        close_checkpointer(checkpointer)
        raise LoadAbandoned
    graph = build_graph(parts, checkpointer)
    # Each warning says what was left out ("…; skill skipped", "AGENTS.md not read: …"), as
    # doctor shows it: no prefix here, or a skipped skill was "Skipped: …; skill skipped".
    notices = [w.shown(_) if isinstance(w, Message) else w for w in parts.warnings]
    report = getattr(checkpointer, "report", None)  # what opening pruned in an older database
    if report is not None and report.summary():
        notices.append(report.summary())
    # The built-in knowledge folder is imported when a tool first opens the knowledge base
    # (ToolEnvironment.open_knowledge), not here: most turns never read it.
    return LoadedAgent(parts=parts, graph=graph, checkpointer=checkpointer, notices=notices)


def _stop_if(abandoned: threading.Event) -> None:
    if abandoned.is_set():
        raise LoadAbandoned


def limit_malloc_arenas(arenas: int = 2) -> None:
    """Cap glibc's malloc arenas, as MALLOC_ARENA_MAX=2 would.

    glibc gives threads their own arenas (up to 8 per core) and rarely returns their
    memory; LangGraph and the cancellable model calls use short-lived threads, so a long
    session's memory grew in steps (the soak benchmark: +33 MB over 900 turns, flat with
    two arenas). A no-op off glibc.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return
    m_arena_max = -8  # from glibc's malloc.h
    mallopt(m_arena_max, arenas)


class BackgroundLoader:
    """`start()` returns at once; `get()` waits for the agent, re-raising a load failure;
    `stop_servers()` ends the MCP servers at the chat's end, whether the load is done or not."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._done = threading.Event()
        self._abandoned = threading.Event()
        self._agent: LoadedAgent | None = None
        self._error: BaseException | None = None
        # The load's MCP servers until one side closes them: the chat at its end, or the
        # load when it fails. Taken under the lock, so they are closed exactly once.
        self._lock = threading.Lock()
        self._servers: MCPServerManager | None = None
        self._thread = threading.Thread(target=self._load, name="agent-loader", daemon=True)

    def start(self) -> BackgroundLoader:
        self._thread.start()
        return self

    def ready(self) -> bool:
        return self._done.is_set()

    def wait(self) -> None:
        self._done.wait()

    def get(self, timeout: float | None = None) -> LoadedAgent:
        self._done.wait(timeout)
        if self._error is not None:
            raise self._error
        if self._agent is None:
            raise TimeoutError("the agent is still loading")
        return self._agent

    def stop_servers(self) -> None:
        """The chat ends: stop the MCP servers now (a server still starting too, so none
        outlives the chat), without waiting for a load still under way, which stops at its
        next step."""
        self._abandoned.set()
        servers = self._take_servers()
        if servers is not None:
            servers.close()

    def _take_servers(self) -> MCPServerManager | None:
        with self._lock:
            servers, self._servers = self._servers, None
            return servers

    def _load(self) -> None:
        try:
            self._agent = self._load_with_servers()
        except BaseException as exc:  # delivered to the caller of get()
            self._error = exc
            servers = self._take_servers()
            if servers is not None:
                servers.close()
        finally:
            resume_collector()  # load_agent does, unless the load ended before it
            self._done.set()

    def _load_with_servers(self) -> LoadedAgent:
        from generalAgent.tools.mcp.manager import MCPServerManager

        servers = MCPServerManager.from_settings(self._settings)
        with self._lock:  # started only if the chat has not ended yet, and then always stopped
            if self._abandoned.is_set():
                raise LoadAbandoned
            self._servers = servers.start()
        return load_agent(self._settings, mcp=servers, abandoned=self._abandoned)
