"""Builds the real graph around a scripted model, for unit tests and benchmarks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from generalAgent.config.settings import Settings
from generalAgent.graph.builder import AgentParts, build_graph, build_parts
from generalAgent.graph.turn import main_turn_input, thread_config
from generalAgent.tools.named_hosts import hosts_typed


def build_test_agent(
    settings: Settings, model: Any, checkpointer: BaseCheckpointSaver | None = None
) -> tuple[AgentParts, Any]:
    parts = build_parts(settings, model=model)
    return parts, build_graph(parts, checkpointer or InMemorySaver())


def user_turn(
    text: str,
    settings: Settings,
    *,
    session_id: str = "t1",
    mentions: Sequence[str] = (),
    uploads: Sequence[Any] = (),
    typed: bool = True,
) -> dict[str, Any]:
    """A turn's input exactly as the chat builds it (graph/turn.py): a line the user
    `typed` names the hosts in it (text piped to `-p -` does not)."""
    return main_turn_input(
        text,
        session_id=session_id,
        max_loops=settings.governance.max_loops,
        mentions=mentions,
        uploads=uploads,
        named_hosts=hosts_typed(text) if typed else (),
    )


def thread(thread_id: str = "t1") -> dict[str, Any]:
    return thread_config(thread_id)
