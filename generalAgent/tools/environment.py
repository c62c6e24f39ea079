"""What a tool may reach besides its arguments: settings, the session's workspace, sub-agents.

Tools are built once per process by `create_tool(env)`; anything that depends on the
session (its workspace) is looked up per call from LangGraph's `ToolRuntime`, so the same
tool objects serve every thread, including a LangGraph Server deployment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generalAgent.config.settings import Settings
from generalAgent.tools.workspace import Workspace

if TYPE_CHECKING:
    from langgraph.prebuilt import ToolRuntime


@dataclass
class ToolEnvironment:
    settings: Settings
    # Set by the graph builder once the graph is compiled (delegate_task needs the graph
    # that contains it); None until then and in processes that never delegate.
    run_subagent: Callable[..., dict[str, Any]] | None = None

    def workspace(self, runtime: ToolRuntime | None) -> Workspace:
        """The workspace of the session the tool is running in."""
        return self.workspace_for(session_of(runtime))

    def workspace_for(self, session_id: str) -> Workspace:
        return Workspace.for_session(
            self.settings.paths.workspaces_dir, session_id, skills_dir=self.settings.paths.skills_dir
        )


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
