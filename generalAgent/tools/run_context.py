"""What a run of the graph carries besides its state: the session's resources and the run's rules.

LangGraph's typed runtime context (`context_schema=RunContext` on both graphs,
graph/builder.py) hands it to every node (`runtime: Runtime[RunContext]`) and every tool
(`ToolRuntime.context`), per run: several sessions run at once in one process (an editor
with three sessions, a server), each with its own cancel token, its own commands, its own
files written, its own editor, its own background OCR and the hooks of its own folder.
Nothing of a session lives in a module or in the process-wide `ToolEnvironment`; a
session's scope is released (its commands killed, its OCR stopped, its editor dropped)
when the session closes.

`SessionScope` is what one session owns while it is open; `RunContext` is one run of it:
the scope, plus the run's approval inputs (tools approved "always" in this process, the
only tools an editor's mode allows) and the sub-agent runner the main graph offers.

A context that brings no scope was not built in this process: a LangGraph Server client
may send any JSON as the context, and none of it is trusted. `context_of` then makes a
fresh one server-side (no approvals, the served process's folder and hooks).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_core import core_schema

from generalAgent.documents.ocr_background import ScanJobs
from generalAgent.hooks import HookSet
from generalAgent.tools.editor import EditorAccess
from generalAgent.tools.workspace import WorkingFolders

# Renderings of search queries a session keeps (a few hundred bytes each).
MAX_RENDERINGS = 256
# How long closing a session waits for its background OCR to stop (a cancelled reading
# stops within a poll of the engine; a page in pdfium finishes first).
CLOSE_WAIT_SECONDS = 5.0

# Renders a search query into a document's language with the chat model
# (graph/query_rendering.py): (query, language code, where the call's token usage goes)
# -> the rendering, or None when none could be had.
QueryRenderer = Callable[[str, str, Callable[[dict[str, Any]], None]], "str | None"]


@dataclass(eq=False)
class SessionScope:
    """What one session owns while it is open, shared by its runs and its sub-agents' runs."""

    session_id: str
    # The folder the session works in (the editor's cwd, the chat's start folder).
    folder: Path
    # The user's hooks for that folder (hooks.py): loaded once per session, not per process.
    hooks: HookSet = field(default_factory=HookSet)
    # The user's folders its file tools read in place, as the user decided about the
    # session's own folder (an editor session's, asked in the editor); None: the process's.
    folders: WorkingFolders | None = None
    # What the session's editor offers (ACP: its files, its terminals); None: local.
    editor: EditorAccess | None = None
    # Set when the user cancels this session's turn: its model call, sub-agents, MCP waits
    # and commands stop; no other session's.
    cancelled: threading.Event = field(default_factory=threading.Event)
    # Set by the compact node while it writes a summary: a cancel then skips the summary
    # (`skip_summary`) instead of cancelling the turn (graph/compaction.py).
    summarising: threading.Event = field(default_factory=threading.Event)
    skip_summary: threading.Event = field(default_factory=threading.Event)
    # The turn (position of the user's message) its main agent is in, as its tools last saw
    # it: a sub-agent's writes belong to the turn that delegated the task (/rewind).
    turn: int = 0
    # The scans its searches left to read on by OCR in the background (documents/
    # ocr_background.py): its own, shown by its chat, stopped when it closes.
    scans: ScanJobs = field(default_factory=ScanJobs)
    _processes: set[subprocess.Popen] = field(default_factory=set, repr=False)
    # Every file its tools wrote (real paths, first write first), and how many the front
    # end has reported, so each is named with its real path once.
    _written: list[Path] = field(default_factory=list, repr=False)
    _reported: int = field(default=0, repr=False)
    # Search queries rendered into a document's language this session, by (language,
    # query): each asked of the model once (graph/query_rendering.py).
    _renderings: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        # Not data a client can send: only an object built in this process is one.
        return core_schema.is_instance_schema(cls)

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        return {"type": "null", "description": "built by the server; a client's value is ignored"}

    def start_turn(self) -> None:
        self.cancelled.clear()
        self.skip_summary.clear()

    def cancel(self) -> bool:
        """The user cancels this session's turn: skip a summary being written (True: the
        turn goes on), else stop the model call, sub-agents and commands (False)."""
        if self.summarising.is_set():
            self.skip_summary.set()
            return True
        self.cancelled.set()
        self.kill_running_processes()
        return False

    def track(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.add(process)

    def untrack(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.discard(process)

    def kill_running_processes(self) -> int:
        """Kill every command this session's tools still run (each in its own process
        group); returns how many there were."""
        with self._lock:
            processes = list(self._processes)
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        return len(processes)

    def record_written(self, real: Path) -> None:
        with self._lock:
            if real not in self._written:
                self._written.append(real)

    def forget_written(self, paths: Iterable[Path]) -> None:
        """/rewind undid these writes (deleted or restored the files): not the session's now."""
        gone = set(paths)
        with self._lock:
            kept = [path for path in self._written if path not in gone]
            self._reported -= sum(1 for path in self._written[: self._reported] if path in gone)
            self._written[:] = kept

    def files_written(self) -> list[Path]:
        """Every file this session's tools wrote while it was open, first write first."""
        with self._lock:
            return list(self._written)

    def new_files_written(self) -> list[Path]:
        """The files written since the last call (for the end of a turn)."""
        with self._lock:
            start, self._reported = self._reported, len(self._written)
            return list(self._written[start:])

    def rendering(self, language: str, query: str) -> str | None:
        """The rendering of `query` into `language` this session already has, if any."""
        with self._lock:
            return self._renderings.get((language, query))

    def remember_rendering(self, language: str, query: str, rendered: str) -> None:
        with self._lock:
            if len(self._renderings) >= MAX_RENDERINGS:  # a long session: the oldest go first
                del self._renderings[next(iter(self._renderings))]
            self._renderings[(language, query)] = rendered

    def close(self) -> None:
        """The session ends: its commands are killed, its background OCR stopped, its
        editor let go."""
        self.cancelled.set()
        self.kill_running_processes()
        self.scans.close(timeout=CLOSE_WAIT_SECONDS)
        self.editor = None


@dataclass
class RunContext:
    """One run of a session's graph (LangGraph's `context_schema`)."""

    scope: SessionScope | None = None
    # Tools the user approved "always" while this process runs (and the editor mode's).
    approved: frozenset[str] = frozenset()
    # The only tools whose calls may run (an editor's read-only mode); None: no limit.
    only_tools: frozenset[str] | None = None
    # Runs delegate_task's sub-agent (graph/subagents.py); set by the main graph's tools node.
    run_subagent: Callable[..., dict[str, Any]] | None = field(default=None, repr=False)
    # Renders a search query into the documents' language; set by the graphs' tools node.
    render_query: QueryRenderer | None = field(default=None, repr=False)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.is_instance_schema(cls)

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        # No properties: LangGraph Server then passes a client's context through unfiltered,
        # and the graph builds it with ClientContext, which takes none of it.
        return {"type": "object", "properties": {}, "description": "built by the server"}

    @property
    def cancelled(self) -> threading.Event | None:
        # A client's JSON may have put anything in `scope`: only a real one has a token.
        return self.scope.cancelled if isinstance(self.scope, SessionScope) else None


class ClientContext(RunContext):
    """A run's context as a LangGraph Server client sent it (the graphs' `context_schema`).

    The server hands the run's `context` (or, when a client sent none, a copy of its
    `config.configurable`) to LangGraph, which builds the schema from it with
    `context_schema(**sent)`: any key a client chose (`search_user`, `thread_id`, ...) would
    reach RunContext's constructor and fail the run with a TypeError. Every field of a run's
    context is an object built in this process, which JSON cannot be, so nothing a client
    sends is taken: this is an empty RunContext, and `context_of` makes the served run's
    own (the server's folder, no approvals). Keys that would widen a run are refused before
    it exists (graph/served.py's `client_run_problem`); the others are ignored here.
    In this process contexts are built as RunContext and passed as they are.
    """

    def __init__(self, **sent: Any) -> None:
        super().__init__()


# The turn the current context runs, as the model client's retries see it: a function
# given each log record of the client (graph/model_retries.py's RetryWatcher). A context variable,
# not a field of RunContext, because the records are made deep inside the client, in the
# thread of the call: a model call's thread and a sub-agent's carry it over
# (graph/cancellation.py, graph/subagents.py).
RETRY_LISTENER: ContextVar[Callable[[logging.LogRecord], None] | None] = ContextVar(
    "generalagent_retry_listener", default=None
)


def context_of(
    runtime: Any, make_scope: Callable[[str], SessionScope], session_id: str = "default"
) -> RunContext:
    """The run's context, or (a run that brought none built here: LangGraph Server, a tool
    called outside a graph) a fresh one for `session_id` from `make_scope`."""
    context = getattr(runtime, "context", None)
    if isinstance(context, RunContext) and isinstance(context.scope, SessionScope):
        return context
    return RunContext(scope=make_scope(session_id))


def cancel_token_of(runtime: Any) -> threading.Event | None:
    """The cancel token of a node's run (its `runtime`), or None for a run that brought no
    context (a server run, which its server cancels by ending the task)."""
    context = getattr(runtime, "context", None)
    return context.cancelled if isinstance(context, RunContext) else None


def current_cancel_token() -> threading.Event | None:
    """The cancel token of the run this thread works for (a tool's thread inside a graph
    run), or None outside one."""
    try:
        from langgraph.runtime import get_runtime

        context = get_runtime().context
    except (RuntimeError, KeyError, AttributeError):
        return None
    return context.cancelled if isinstance(context, RunContext) else None
