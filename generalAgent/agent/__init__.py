"""The agent core, below every front end: load an agent once, open sessions, run turns.

    from generalAgent.agent import Agent

    with Agent.from_environment() as agent:
        print(agent.open_session().send("What can you do?").answer)

The public Python API (api.py, docs/api.md) and the engine the terminal, `-p` and the
editor server are views over: loading (loading.py), a session's sequence of a turn
(session.py), the turn runner and its approvals (turns.py), what a message carries
(turn_input.py, chat_input.py). Nothing here imports `generalAgent.cli` (the lint contract).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generalAgent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from generalAgent.agent.api import (
        Agent,
        Approve,
        RewindError,
        RewindResult,
        Session,
        ToolCallRecord,
        TurnReport,
        UserTurn,
        refuse_all,
    )

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

# Loaded on first use (lazy_exports.py): the chat imports agent.session at start-up, which
# must not load LangChain and LangGraph through the API module.
__getattr__, __dir__ = lazy_exports(
    globals(),
    {name: "generalAgent.agent.api" for name in __all__},
)
