"""Loads the agent (LangChain, LangGraph, tools, checkpointer) off the start-up path.

Importing LangGraph and the OpenAI client takes longer than the 1 s in which the prompt
must appear, so the chat starts loading them in a background thread and shows the
prompt at once; the first message waits for the load only if it is not done yet.
MCP servers are started first thing in that thread, on a loop of their own, and nothing
waits for them (tools/mcp/manager.py).
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
from dataclasses import dataclass
from typing import Any

from generalAgent.config.settings import Settings
from generalAgent.i18n import _


@dataclass
class LoadedAgent:
    parts: Any  # generalAgent.graph.builder.AgentParts
    graph: Any  # the compiled graph, checkpointed in DATA_DIR/sessions.db or PostgreSQL
    checkpointer: Any
    notices: list[str]  # start-up news for the user (skills skipped, old checkpoints pruned)

    def cancel(self) -> bool:
        """Ctrl-C during a turn: skip a summary being written (True: the turn goes on), else
        stop the turn's work (sub-agents, commands) and let the turn be cancelled."""
        if self.parts.compaction.skip_running():
            return True
        self.parts.env.cancel_running_work()
        return False

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

    def close(self) -> None:
        from generalAgent.graph.checkpoints import close_checkpointer

        self.parts.mcp.close()
        close_checkpointer(self.checkpointer)


def load_agent(settings: Settings, model: Any = None) -> LoadedAgent:
    try:
        return _load_agent(settings, model)
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


def _load_agent(settings: Settings, model: Any) -> LoadedAgent:
    from generalAgent.tools.mcp.manager import MCPServerManager

    # Before LangGraph is imported: the servers' processes start while the rest loads.
    mcp = MCPServerManager.from_settings(settings).start()
    from generalAgent.graph.builder import build_graph, build_parts
    from generalAgent.graph.checkpoints import open_checkpointer

    try:
        parts = build_parts(settings, model=model, mcp=mcp)
        checkpointer = open_checkpointer(settings.paths)
    except BaseException:
        mcp.close()
        raise
    graph = build_graph(parts, checkpointer)
    notices = [_("Skipped: {warning}").format(warning=warning) for warning in parts.warnings]
    report = getattr(checkpointer, "report", None)  # what opening pruned in an older database
    if report is not None and report.summary():
        notices.append(report.summary())
    # The built-in knowledge folder is imported when a tool first opens the knowledge base
    # (ToolEnvironment.open_knowledge), not here: most turns never read it.
    return LoadedAgent(parts=parts, graph=graph, checkpointer=checkpointer, notices=notices)


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
    """`start()` returns at once; `get()` waits for the agent, re-raising a load failure."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._done = threading.Event()
        self._agent: LoadedAgent | None = None
        self._error: BaseException | None = None
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

    def _load(self) -> None:
        try:
            self._agent = load_agent(self._settings)
        except BaseException as exc:  # delivered to the caller of get()
            self._error = exc
        finally:
            self._done.set()
