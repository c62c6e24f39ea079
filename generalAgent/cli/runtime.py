"""Loads the agent (LangChain, LangGraph, tools, checkpointer) off the start-up path.

Importing LangGraph and the OpenAI client takes longer than the 1 s in which the prompt
must appear, so the chat starts loading them in a background thread and shows the
prompt at once; the first message waits for the load only if it is not done yet.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from generalAgent.config.settings import Settings


@dataclass
class LoadedAgent:
    parts: Any  # generalAgent.graph.builder.AgentParts
    graph: Any  # the compiled graph, checkpointed in DATA_DIR/sessions.db
    checkpointer: Any

    def close(self) -> None:
        self.checkpointer.conn.close()


def load_agent(settings: Settings, model: Any = None) -> LoadedAgent:
    from generalAgent.graph.builder import build_graph, build_parts
    from generalAgent.graph.checkpoints import open_sqlite_checkpointer

    parts = build_parts(settings, model=model)
    checkpointer = open_sqlite_checkpointer(settings.paths.sessions_db)
    graph = build_graph(parts, checkpointer)
    return LoadedAgent(parts=parts, graph=graph, checkpointer=checkpointer)


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
