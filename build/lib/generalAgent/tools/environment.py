"""What a tool may reach besides its arguments: settings, the session's workspace, sub-agents.

Tools are built once per process by `create_tool(env)`; anything that depends on the
session (its workspace) is looked up per call from LangGraph's `ToolRuntime`, so the same
tool objects serve every thread, including a LangGraph Server deployment.
"""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.prebuilt import ToolRuntime as LangGraphToolRuntime
from pydantic_core import core_schema

from generalAgent.config.settings import Settings
from generalAgent.documents.images import ImageLimits
from generalAgent.hooks import HookSet
from generalAgent.snapshots import SnapshotStore, snapshot_hook
from generalAgent.tools.editor import EditorAccess
from generalAgent.tools.workspace import RESULTS_DIR, WorkingFolders, Workspace, WorkspaceError

if TYPE_CHECKING:
    from generalAgent.knowledge.builtin import BuiltinKnowledge
    from generalAgent.knowledge.store import KnowledgeStore
    from generalAgent.search.background_embedding import SemanticSession

LOGGER = logging.getLogger(__name__)


class ToolRuntime(LangGraphToolRuntime):
    """LangGraph's ToolRuntime, as a tool's `runtime` parameter is annotated.

    LangGraph injects it (the model never sees it), so the argument model LangChain builds
    of each tool function needs only to check it is a ToolRuntime. Left to itself, pydantic
    built the whole dataclass's schema (its config, store and stream writer) once per
    tool: 5-7 ms each, about 80 ms of every start.
    """

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.is_instance_schema(LangGraphToolRuntime)


# The config key under which the graph's tools step hands delegate_task the sub-agent
# runner (graph/subagents.py): the runner needs a compiled graph, which is built after
# the tools, so it comes with each call instead of living here.
SUBAGENT_RUNNER = "generalagent_run_subagent"


@dataclass
class ToolEnvironment:
    settings: Settings
    # What the model accepts of an image, from the provider table (providers/vision.py);
    # None for a model that takes no images.
    image_limits: ImageLimits | None = None
    # The user's hooks (hooks.py): the tools step runs PreToolUse and PostToolUse ones.
    hooks: HookSet = field(default_factory=HookSet)
    # Commands started by tools, so that cancelling a turn (Ctrl-C) can stop them: they run
    # in their own process group (to be killable as a whole), out of the terminal's reach.
    _processes: set[subprocess.Popen] = field(default_factory=set, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Set when the user cancels a turn; long-running tools (sub-agents) stop at their next step.
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False)
    # Every file the file tools wrote, by session (real paths, first write first), so the
    # terminal can name each with its real path at the end of the turn and at /quit.
    _written: dict[str, list[Path]] = field(default_factory=dict, repr=False)
    _reported: dict[str, int] = field(default_factory=dict, repr=False)
    # The turn (position of the user's message) each session's main agent is in, as its
    # tools last saw it: a sub-agent's writes belong to the turn that delegated the task.
    _turns: dict[str, int] = field(default_factory=dict, repr=False)
    _snapshots: SnapshotStore | None = field(default=None, repr=False)
    # What the editor of a session offers (ACP: its files, its terminals), by session id;
    # a session without one reads, writes and runs commands locally (tools/editor.py).
    editors: dict[str, EditorAccess] = field(default_factory=dict, repr=False)
    # Semantic search shared by the search tools (one background embedding per process);
    # made on first use, a list so that "off" (None) is remembered too.
    _semantic: list[SemanticSession | None] = field(default_factory=list, repr=False)
    # The built-in knowledge folder, imported when a tool first opens the knowledge base.
    _builtin_knowledge: BuiltinKnowledge | None = field(default=None, repr=False)

    def open_knowledge(self) -> KnowledgeStore:
        """The knowledge store, the built-in knowledge folder imported into it first (once per
        process): a session that never reads the knowledge base never opens the folder, nor
        loads the store's code (`-p hi` starts without either)."""
        from generalAgent.knowledge import open_store
        from generalAgent.knowledge.builtin import BuiltinKnowledge

        with self._lock:
            if self._builtin_knowledge is None:
                self._builtin_knowledge = BuiltinKnowledge(self.settings.paths.knowledge_dir)
            builtin = self._builtin_knowledge
        store = open_store(self.settings)
        try:
            builtin.check(store)
        except BaseException:
            store.close()
            raise
        return store

    def drain_notices(self, translate: Callable[[str], str] = str) -> list[str]:
        """News for the user from the tools' own set-up (the built-in knowledge imported or
        not), each once; `translate` is the terminal's `_`."""
        with self._lock:
            builtin = self._builtin_knowledge
        return builtin.drain_news(translate) if builtin is not None else []

    def semantic_search(self) -> SemanticSession | None:
        """The process's semantic search, or None when no embeddings are available."""
        with self._lock:
            if not self._semantic:
                from generalAgent.search.background_embedding import SemanticSession
                from generalAgent.search.embeddings import embeddings_from_settings

                embedder = embeddings_from_settings(self.settings)
                batch = self.settings.documents.embedding_batch_size
                self._semantic.append(
                    None
                    if embedder is None
                    else SemanticSession(self.settings.paths.indexes_db, embedder, batch)
                )
            return self._semantic[0]

    def start_turn(self) -> None:
        self.cancelled.clear()

    def cancel_running_work(self) -> None:
        """Ctrl-C: stop sub-agents at their next step and kill commands tools started."""
        self.cancelled.set()
        self.kill_running_processes()

    def track(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.add(process)

    def untrack(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.discard(process)

    def kill_running_processes(self) -> int:
        """Kill every command a tool is still running; returns how many there were."""
        with self._lock:
            processes = list(self._processes)
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        return len(processes)

    def record_written(self, runtime: ToolRuntime | None, real: Path) -> None:
        """Note that a tool of the session of `runtime` wrote the file `real`."""
        with self._lock:
            written = self._written.setdefault(session_of(runtime), [])
            if real not in written:
                written.append(real)

    def files_written(self, session_id: str) -> list[Path]:
        """Every file written in the session by this process, first write first."""
        with self._lock:
            return list(self._written.get(session_id, ()))

    def new_files_written(self, session_id: str) -> list[Path]:
        """The files written since the last call (for the end of a turn)."""
        with self._lock:
            written = self._written.get(session_id, [])
            start = self._reported.get(session_id, 0)
            self._reported[session_id] = len(written)
            return list(written[start:])

    def workspace(self, runtime: ToolRuntime | None) -> Workspace:
        """The workspace of the session the tool is running in. What its writes replace in
        the working folder and outputs/ is kept first, for /rewind (snapshots.py)."""
        session = session_of(runtime)
        workspace = self.workspace_for(session)
        if runtime is None:
            return workspace
        turn = self.note_turn(runtime)

        def read_current(real: Path) -> bytes | None:
            try:
                with workspace.open_for_reading(real) as stream:
                    return stream.read()
            except FileNotFoundError:
                return None

        keep = snapshot_hook(self.snapshots, session, turn, read_current)

        def before_write(real: Path, data: bytes) -> Callable[[], None]:
            if not (workspace.in_place(real) or workspace.in_folder(real, RESULTS_DIR)):
                return lambda: None  # temp/: scratch, nothing to go back to
            try:
                record = keep(real, data)
            except (WorkspaceError, OSError) as exc:  # not a regular file: the write says why
                LOGGER.info("no snapshot of %s: %s", real, exc)
                return lambda: None

            def recorded() -> None:
                try:
                    record()
                except (sqlite3.Error, OSError) as exc:  # the file is written; only /rewind loses it
                    LOGGER.warning("snapshot of %s not kept: %s", real, exc)

            return recorded

        return replace(workspace, before_write=before_write)

    @property
    def snapshots(self) -> SnapshotStore:
        """The file snapshots of the data folder (opened on the first write)."""
        with self._lock:
            if self._snapshots is None:
                self._snapshots = SnapshotStore.in_data_dir(self.settings.paths.data_dir)
            return self._snapshots

    def note_turn(self, runtime: ToolRuntime) -> int:
        """The turn a tool call belongs to: in the main agent, the position of the user's
        last message; in a sub-agent, the turn of the session that delegated to it."""
        session = session_of(runtime)
        state = runtime.state if isinstance(runtime.state, dict) else {}
        with self._lock:
            if state.get("parent_context"):
                return self._turns.get(session, 0)
            humans = sum(1 for m in state.get("messages") or () if getattr(m, "type", "") == "human")
            self._turns[session] = max(humans - 1, 0)
            return self._turns[session]

    def workspace_for(self, session_id: str) -> Workspace:
        return Workspace.for_session(
            self.settings.paths.workspaces_dir,
            session_id,
            skills_dir=self.settings.paths.skills_dir,
            folders=self.working_folders(),
            editor=self.editors.get(session_id),
        )

    def working_folders(self) -> WorkingFolders:
        """The user's folders the file tools read in place: the working folder once the
        user trusts it (settings.sources.trust), and the --add-dir folders."""
        trust = self.settings.sources.trust
        return WorkingFolders(start=trust.folder, readable=trust.applies, added=self.settings.added_folders)


def session_of(runtime: ToolRuntime | None) -> str:
    """The workspace id: the state's `workspace_id` (shared by sub-agents), else the thread."""
    if runtime is None:
        return "default"
    state = runtime.state if isinstance(runtime.state, dict) else {}
    workspace_id = state.get("workspace_id")
    if workspace_id:
        return str(workspace_id)
    configurable = (runtime.config or {}).get("configurable", {})
    return str(configurable.get("thread_id") or "default")
