"""What a tool may reach besides its arguments: settings, the session's workspace, sub-agents.

Tools are built once per process by `create_tool(env)`; anything that depends on the
session (its workspace, its cancel token, the files it wrote, its editor) is looked up per
call from LangGraph's `ToolRuntime`: its `context` is the run's RunContext
(tools/run_context.py), so the same tool objects serve every session at once, including a
LangGraph Server deployment. What is kept here is the process's: settings, the knowledge
base's set-up, semantic search, the snapshot store.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.prebuilt import ToolRuntime as LangGraphToolRuntime
from pydantic_core import core_schema

from generalAgent.config.settings import Settings
from generalAgent.documents.images import ImageLimits
from generalAgent.documents.ocr_background import ScanJobs
from generalAgent.hooks import HookSet
from generalAgent.snapshots import SnapshotStore, snapshot_hook
from generalAgent.tools.editor import EditorAccess
from generalAgent.tools.run_context import RunContext, SessionScope, context_of
from generalAgent.tools.workspace import RESULTS_DIR, WorkingFolders, Workspace, WorkspaceError

if TYPE_CHECKING:
    from generalAgent.display import Message
    from generalAgent.knowledge.builtin import BuiltinKnowledge
    from generalAgent.knowledge.store import KnowledgeStore
    from generalAgent.search.background_embedding import SemanticSession
    from generalAgent.search.store import SharedStore, Viewer

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


@dataclass
class ToolEnvironment:
    settings: Settings
    # What the model accepts of an image, from the provider table (providers/vision.py);
    # None for a model that takes no images.
    image_limits: ImageLimits | None = None
    # The hooks of the process's start folder, for runs that bring no context of their own
    # (LangGraph Server): loaded on first use. A session's own are in its SessionScope.
    _served_hooks: HookSet | None = field(default=None, repr=False)
    # Their background OCR likewise: such a run's scope is made per run and never closed,
    # so the readings its searches leave are the served process's (kept few: ScanJobs).
    _served_scans: ScanJobs = field(default_factory=ScanJobs, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _snapshots: SnapshotStore | None = field(default=None, repr=False)
    # Semantic search shared by the search tools (one background embedding per process);
    # made on first use, a list so that "off" (None) is remembered too.
    _semantic: list[SemanticSession | None] = field(default_factory=list, repr=False)
    # The built-in knowledge folder, imported when a tool first opens the knowledge base.
    _builtin_knowledge: BuiltinKnowledge | None = field(default=None, repr=False)
    # Why embeddings failed when the knowledge base was first read, if they did: stores opened
    # later search by keyword at once instead of waiting for a hung endpoint again.
    _embedding_problem: Message | None = field(default=None, repr=False)
    # The document index the search tools share in this process (indexes.db's connection
    # or the team's PostgreSQL store), opened on first use.
    _documents: SharedStore | None = field(default=None, repr=False)

    def viewer(self, runtime: ToolRuntime | None) -> Viewer:
        """Whose documents and notes a call sees and writes: on a served run, the user
        LangGraph Server authenticated for this request and the teams its auth gave them
        (graph/server_auth.py), never a setting or anything the client sent; elsewhere
        SEARCH_USER and SEARCH_TEAMS (the terminal: '' and none)."""
        from generalAgent.search.viewer import served_viewer, viewer_from_settings

        configurable = ((runtime.config if runtime is not None else None) or {}).get("configurable") or {}
        served = served_viewer(configurable)
        return served if served is not None else viewer_from_settings(self.settings.paths)

    @contextmanager
    def document_index(self, runtime: ToolRuntime | None) -> Iterator[dict[str, Any]]:
        """The keyword arguments a document search takes (documents/search.py, folder.py):
        the process's shared connection to indexes.db or the team's store, held for the
        block (one search at a time on it), and the call's viewer."""
        from generalAgent.search.store import SharedStore

        with self._lock:
            if self._documents is None:
                self._documents = SharedStore(self.settings.paths, self.settings.documents)
            documents = self._documents
        viewer = self.viewer(runtime)
        with documents.use() as where:
            yield {**where, "viewer": viewer}

    def open_knowledge(self, viewer: Viewer | None = None) -> KnowledgeStore:
        """The knowledge store as `viewer` sees it (default: the settings' user), the
        built-in knowledge folder imported into it first (once per process): a session that
        never reads the knowledge base never opens the folder, nor loads the store's code
        (`-p hi` starts without either)."""
        from generalAgent.knowledge import open_store
        from generalAgent.knowledge.builtin import BuiltinKnowledge

        with self._lock:
            if self._builtin_knowledge is None:
                self._builtin_knowledge = BuiltinKnowledge(self.settings.paths.knowledge_dir)
            builtin = self._builtin_knowledge
            known_problem = self._embedding_problem
        store = open_store(self.settings, viewer)
        store.embedding_problem = known_problem
        try:
            builtin.check(store)
        except BaseException:
            store.close()
            raise
        if store.embedding_problem is not None:
            with self._lock:
                self._embedding_problem = store.embedding_problem
        return store

    def close(self) -> None:
        """Let go of what the tools opened for this agent (the document index's connection,
        the background embedding pass); the agent is closed with it (agent/loading.py)."""
        with self._lock:
            documents, self._documents = self._documents, None
            semantic, self._semantic = self._semantic, []
        if documents is not None:
            documents.close()
        for session in semantic:
            if session is not None:
                session.background.stop()

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
                from generalAgent.search.store import team_store_opener

                embedder = embeddings_from_settings(self.settings)
                batch = self.settings.documents.embedding_batch_size
                paths = self.settings.paths
                # The team's store when SEARCH_DATABASE_URL names one: what the tools index
                # there is embedded there (on a connection of the pass's own).
                self._semantic.append(
                    None
                    if embedder is None
                    else SemanticSession(
                        paths.indexes_db, embedder, batch, team_store_opener(paths, self.settings.documents)
                    )
                )
            return self._semantic[0]

    def query_renderer(self, runtime: ToolRuntime | None) -> Callable[[str, str], str | None] | None:
        """The run's renderer of a search query into the documents' language (the chat
        model's, `RunContext.render_query`), its tokens reported on the tool's stream as the
        turn's usage; None for a run that has none (a tool called outside a graph)."""
        render = self.context(runtime).render_query
        if render is None:
            return None
        writer = getattr(runtime, "stream_writer", None)

        def report(usage: dict[str, Any]) -> None:
            if callable(writer):
                writer({"usage": usage})

        return lambda query, language: render(query, language, report)

    def record_written(self, runtime: ToolRuntime | None, real: Path) -> None:
        """Note that a tool of the session of `runtime` wrote the file `real`, and tell the
        front end (a custom stream event: agent/events.py's FilesWritten)."""
        self.context(runtime).scope.record_written(real)  # type: ignore[union-attr]
        writer = getattr(runtime, "stream_writer", None)
        if callable(writer):
            writer({"files_written": [str(real)]})

    def context(self, runtime: ToolRuntime | None) -> RunContext:
        """The run's context (tools/run_context.py); one made here for a run that brought none."""
        return context_of(runtime, self.served_scope, session_of(runtime))

    def node_context(
        self, runtime: Any, state: Mapping[str, Any], config: Mapping[str, Any] | None
    ) -> RunContext:
        """The context of a node's run (its `runtime`); one made here for a run that brought
        none, for the state's session (its workspace id, else its thread)."""
        session = state.get("workspace_id") or ((config or {}).get("configurable") or {}).get("thread_id")
        return context_of(runtime, self.served_scope, str(session or "default"))

    def cancel_token(self, runtime: ToolRuntime | None) -> threading.Event:
        scope = self.context(runtime).scope
        assert scope is not None  # context_of always gives one
        return scope.cancelled

    def scans(self, runtime: ToolRuntime | None) -> ScanJobs:
        """The background OCR readings of the session of `runtime` (documents/ocr_background.py)."""
        scope = self.context(runtime).scope
        assert scope is not None  # context_of always gives one
        return scope.scans

    def served_scope(self, session_id: str) -> SessionScope:
        """A scope for a run that brought no context (a LangGraph Server run, a tool called
        outside a graph): the process's folder and its hooks, nothing remembered."""
        with self._lock:
            if self._served_hooks is None:
                from generalAgent.config.sources import user_config_dir
                from generalAgent.hooks import load_hooks

                self._served_hooks = load_hooks(
                    user_config_dir(),
                    self.settings.sources.trust,
                    Path.cwd(),
                    self.settings.tools.sandbox,
                    self.settings.paths.data_dir,
                )
            hooks = self._served_hooks
        return SessionScope(session_id, Path.cwd(), hooks=hooks, scans=self._served_scans)

    def workspace(self, runtime: ToolRuntime | None) -> Workspace:
        """The workspace of the session the tool is running in. What its writes replace in
        the working folder and outputs/ is kept first, for /rewind (snapshots.py)."""
        session = session_of(runtime)
        scope = self.context(runtime).scope
        workspace = self.workspace_for(
            session, scope.editor if scope is not None else None, scope.folders if scope is not None else None
        )
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
        scope = self.context(runtime).scope
        assert scope is not None
        state = runtime.state if isinstance(runtime.state, dict) else {}
        if state.get("parent_context"):
            return scope.turn
        humans = sum(1 for m in state.get("messages") or () if getattr(m, "type", "") == "human")
        scope.turn = max(humans - 1, 0)
        return scope.turn

    def workspace_for(
        self, session_id: str, editor: EditorAccess | None = None, folders: WorkingFolders | None = None
    ) -> Workspace:
        """The session's workspace; with its editor, the user's files are read and written
        through it (tools/editor.py); `folders`: the session's own (SessionScope.folders),
        else the process's."""
        return Workspace.for_session(
            self.settings.paths.workspaces_dir,
            session_id,
            skills_dir=self.settings.paths.skills_dir,
            folders=folders or self.working_folders(),
            editor=editor,
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
