"""todo_write: replace the session's todo list (stored in the graph state via a Command).

Items written in a turn that read untrusted content are stored with `untrusted: True`
(tools/provenance.py) unless the list already held the same item as trusted: the
reminder that repeats the list never repeats such an item's words in a user-role message.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.types import Command
from pydantic import BaseModel, Field

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError
from generalAgent.tools.provenance import state_read_untrusted

MAX_TODOS = 50


class TodoInput(BaseModel):
    content: str = Field(description="What to do, one short imperative line")
    status: Literal["pending", "in_progress", "completed"] = "pending"
    priority: Literal["high", "medium", "low"] = "medium"


def validate_todos(todos: list[TodoInput]) -> str | None:
    """Why the list cannot be stored, or None."""
    if len(todos) > MAX_TODOS:
        return f"at most {MAX_TODOS} items; merge or drop some"
    empty = [i for i, t in enumerate(todos, 1) if not t.content.strip()]
    if empty:
        return f"item {empty[0]} has no content"
    active = [t.content for t in todos if t.status == "in_progress"]
    if len(active) > 1:
        return f"{len(active)} items are in_progress ({'; '.join(active)}); keep exactly one in_progress, the rest pending"
    return None


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("todo_write")
    def todo_write(todos: list[TodoInput], runtime: ToolRuntime) -> Command | str:
        """Replace the todo list of this session with `todos` (the whole list, every call).

        Use it to plan work of three or more steps: items have content, status
        (pending | in_progress | completed) and priority (high | medium | low). Keep exactly
        one item in_progress while you work, and mark items completed as soon as they are done.
        """
        problem = validate_todos(todos)
        if problem:
            raise ToolError(N_("todo list not saved: {problem}."), problem=problem)
        items: list[dict] = [
            {"content": t.content.strip(), "status": t.status, "priority": t.priority} for t in todos
        ]
        state = runtime.state if isinstance(runtime.state, dict) else {}
        if state_read_untrusted(state):
            trusted = {t.get("content") for t in state.get("todos") or [] if not t.get("untrusted")}
            for item in items:
                if item["content"] not in trusted:
                    item["untrusted"] = True
        done = sum(1 for t in items if t["status"] == "completed")
        summary = f"Todo list saved: {len(items)} items, {done} completed."
        marked = sum(1 for t in items if t.get("untrusted"))
        if marked:
            summary += f" {marked} marked as written after reading untrusted content."
        return Command(
            update={
                "todos": items,
                "messages": [
                    ToolMessage(content=summary, tool_call_id=runtime.tool_call_id, name="todo_write")
                ],
            }
        )

    return todo_write
