"""list_workspace_files: what is in the workspace (or one folder of it), with sizes."""

from __future__ import annotations

from pathlib import Path

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError
from generalAgent.tools.workspace import SKILLS_MOUNT, Workspace

MAX_ENTRIES = 300


def list_tree(workspace: Workspace, folder: Path, depth: int) -> list[str]:
    lines: list[str] = []

    def walk(current: Path, level: int) -> None:
        try:
            entries = sorted(current.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
        except OSError:
            return
        for entry in entries:
            if len(lines) >= MAX_ENTRIES or entry.name.startswith("."):
                continue
            indent = "  " * level
            if entry.is_symlink() and entry.name == SKILLS_MOUNT and current == workspace.root:
                lines.append(f"{indent}{SKILLS_MOUNT}/  (read-only: skill instructions and scripts)")
                continue
            if entry.is_symlink() and not workspace.contains(entry.resolve()):
                # Listing through it would show names and sizes of the user's other files.
                lines.append(f"{indent}{entry.name}  (a link to outside the workspace; not followed)")
                continue
            if entry.is_dir():
                lines.append(f"{indent}{entry.name}/")
                if level + 1 < depth:
                    walk(entry, level + 1)
                continue
            try:
                size = entry.stat().st_size
            except OSError:  # a link to nothing, or a file removed while listing
                if entry.is_symlink():
                    lines.append(f"{indent}{entry.name}  (a broken link)")
                continue
            lines.append(f"{indent}{entry.name}  ({size:,} bytes)")

    walk(folder, 0)
    return lines


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("list_workspace_files")
    def list_workspace_files(runtime: ToolRuntime, path: str = ".", depth: int = 3) -> str:
        """List files under `path` to `depth` levels: the working folder by default, or a
        workspace folder (uploads/, outputs/, temp/, skills/)."""
        workspace = env.workspace(runtime)
        folder = workspace.resolve(path)
        if not folder.is_dir():
            raise ToolError(N_("{path} is not a folder."), path=path)
        lines = list_tree(workspace, folder, max(1, min(depth, 10)))
        if not lines:
            return f"{workspace.display(folder)} is empty."
        more = (
            f"\n[listing stopped at {MAX_ENTRIES} entries; list a subfolder]"
            if len(lines) >= MAX_ENTRIES
            else ""
        )
        if folder != workspace.root and folder == workspace.folders.start:
            more += "\n[the session workspace: uploads/, outputs/, temp/ — list one by name]"
        return f"{workspace.display(folder)}:\n" + "\n".join(lines) + more

    return list_workspace_files
