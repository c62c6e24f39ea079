"""find_files: workspace files matching a glob pattern such as **/*.pdf."""

from __future__ import annotations

import itertools

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError
from generalAgent.tools.workspace import WorkspaceError

MAX_MATCHES = 200
MAX_EXAMINED = 20_000


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("find_files")
    def find_files(pattern: str, runtime: ToolRuntime, path: str = ".") -> str:
        """Find files by glob `pattern` under `path`: the working folder by default, or a
        workspace folder (e.g. pattern="**/*.pdf", path="uploads")."""
        workspace = env.workspace(runtime)
        if not pattern.strip():
            raise ToolError(N_("empty pattern; try **/*.pdf or *.md."))
        if pattern.startswith(("/", "~")) or ".." in pattern.replace("\\", "/").split("/"):
            raise ToolError(
                N_("the pattern must stay inside the folder searched (no absolute paths or '..').")
            )
        base = workspace.resolve(path)
        if not base.is_dir():
            raise ToolError(N_("{path} is not a folder."), path=path)
        matches = []
        # A working folder can be large (a home folder): look at a bounded number of names.
        for candidate in sorted(itertools.islice(base.glob(pattern), MAX_EXAMINED)):
            if any(part.startswith(".") for part in candidate.relative_to(base).parts):
                continue
            try:
                real = workspace.resolve(workspace.display(candidate))
            except (WorkspaceError, ValueError):
                continue  # a symlink that leads out of the workspace
            if real.is_file():
                matches.append(f"{workspace.display(real)}  ({real.stat().st_size:,} bytes)")
            if len(matches) >= MAX_MATCHES:
                break
        if not matches:
            return f"No files match {pattern!r} under {workspace.display(base)}."
        more = f"\n[first {MAX_MATCHES} shown; narrow the pattern]" if len(matches) >= MAX_MATCHES else ""
        return "\n".join(matches) + more

    return find_files
