"""delegate_task: hand a self-contained task to an isolated sub-agent and get its report.

Visible only after the user @mentions an agent; never offered to a sub-agent.
"""

from __future__ import annotations

import json

from langchain_core.tools import BaseTool, tool

from generalAgent.tools.environment import ToolEnvironment, ToolRuntime


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("delegate_task")
    def delegate_task(
        task: str, runtime: ToolRuntime, agent: str = "agent", max_loops: int | None = None
    ) -> str:
        """Run `task` in an isolated sub-agent (`agent` is the @mentioned agent's name).

        The sub-agent sees only the task text, shares the workspace (uploads/, outputs/),
        works with its own tools for up to `max_loops` steps, and returns JSON
        {"ok", "result", "context_id", "loops"} or {"ok": false, "error"}. Write the task so
        that it stands alone: the goal, the files, what to return.
        """
        context = env.context(runtime)
        run_subagent = context.run_subagent
        if run_subagent is None:
            return json.dumps({"ok": False, "error": "sub-agents are not available in this process"})
        state = runtime.state if isinstance(runtime.state, dict) else {}
        if state.get("parent_context"):
            return json.dumps({"ok": False, "error": "a sub-agent cannot delegate further"})
        parent = {
            **state,
            "workspace_id": state.get("workspace_id") or runtime.config["configurable"].get("thread_id"),
        }
        env.note_turn(runtime)  # the sub-agent's writes belong to this turn (/rewind)
        result = run_subagent(task, agent, max_loops, parent, runtime.stream_writer, context)
        return json.dumps(result, ensure_ascii=False)

    return delegate_task
