"""write_file: create or overwrite a text file under outputs/ or temp/, or in the user's
working folder after the user approved the diff (tools/approval.py: changes_file)."""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_, os_error_reason
from generalAgent.tools.approval import (
    CHANGES_FILE,
    CONFIGURATION_CHECK,
    NEEDS_APPROVAL,
    changes_file,
    writes_folder_configuration,
)
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError

MAX_WRITE_CHARS = 5_000_000


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("write_file")
    def write_file(path: str, content: str, runtime: ToolRuntime) -> str:
        """Write `content` (UTF-8 text) to `path`: under outputs/ (results for the user) or
        temp/ (scratch), or in the user's working folder (e.g. summary.md; the user approves
        the change first). Creates folders as needed and replaces an existing file."""
        workspace = env.workspace(runtime)
        real = workspace.resolve(path, for_writing=True)
        shown = workspace.display(real)
        if len(content) > MAX_WRITE_CHARS:
            raise ToolError(
                N_("{count} characters is over the {limit} limit; write it in parts."),
                count=f"{len(content):,}",
                limit=f"{MAX_WRITE_CHARS:,}",
            )
        if real.is_dir():
            raise ToolError(N_("{path} is a folder; give a file name inside it."), path=shown)
        existed = real.exists()
        try:
            size = workspace.write_text(real, content)
        except OSError as exc:
            raise ToolError(
                N_("cannot write {path}: {reason}; nothing was changed."),
                path=shown,
                reason=os_error_reason(exc),
            ) from exc
        env.record_written(runtime, real)
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        return f"{'Replaced' if existed else 'Wrote'} {shown} ({size:,} bytes, {lines} lines)."

    rule = changes_file(lambda current, args: str(args.get("content", "")))
    write_file.metadata = {
        **(write_file.metadata or {}),
        NEEDS_APPROVAL: rule,
        CONFIGURATION_CHECK: writes_folder_configuration,
        CHANGES_FILE: "path",
    }
    return write_file
