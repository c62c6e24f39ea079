"""The agent state that LangGraph checkpoints per thread.

History fields accumulate for the whole session; the `new_*` fields hold only what this
turn added and are cleared by the planner once its reminders have been sent, so each
reminder fires exactly once while tools stay available for the rest of the session.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langgraph.graph.message import add_messages


class TodoItem(TypedDict):
    content: str
    status: str  # pending | in_progress | completed
    priority: str  # high | medium | low


class UploadedFile(TypedDict, total=False):
    name: str  # file name as the user gave it
    path: str  # workspace path, e.g. uploads/report.pdf
    type: str  # pdf, docx, xlsx, pptx, text, code, image, other
    size: int  # bytes
    pages: int  # pages / slides / sheets, when the format has them


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    todos: list[TodoItem]
    mentioned_agents: list[str]  # every @name of the session (tools, skills, agents)
    new_mentioned_agents: list[str]  # this turn's @names: reminders only
    uploaded_files: list[UploadedFile]
    new_uploaded_files: list[UploadedFile]
    context_id: str  # "main" or "subagent-xxxxxxxx"
    parent_context: str | None  # set for sub-agents
    workspace_id: str  # shared by a session and its sub-agents
    approved_tools: list[str]  # tools the user approved "always" for this session
    allowed_tools: list[str] | None  # a sub-agent profile's allow-list
    agent_profile: str | None  # which profile a sub-agent runs
    loops: int  # model calls in this turn (derived from the history by the planner)
    max_loops: int


def turn_input(text: str | list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """The state update for a new user turn: its message and any other fields (new_*, ...).

    No loop counter to reset: the planner derives it from the history."""
    update: dict[str, Any] = {"messages": [HumanMessage(content=text)]}
    update.update(fields)
    return update


def model_calls_this_turn(messages: list[BaseMessage]) -> int:
    """AI messages since the user's last message: the turn's loop count, derived from the
    history so that a turn started by any client (CLI, LangGraph Server) begins at zero."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage):
            count += 1
    return count
