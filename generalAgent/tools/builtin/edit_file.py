"""edit_file: replace an exact, unique piece of text in a file under outputs/ or temp/, or
in the user's working folder after the user approved the diff (tools/approval.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
from generalAgent.tools.errors import ToolError, said_of
from generalAgent.tools.text_files import NotText


def apply_edit(text: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """The edited text and the number of replacements; ValueError says why not."""
    if not old:
        raise ValueError("old_string is empty; give the exact text to replace")
    if old == new:
        raise ValueError("old_string and new_string are the same; nothing to change")
    count = text.count(old)
    if count == 0:
        raise ValueError(
            "old_string was not found; copy it exactly from read_file (without the line numbers)"
        )
    if count > 1 and not replace_all:
        raise ValueError(
            f"old_string occurs {count} times; include more surrounding text to make it unique, "
            "or pass replace_all=true"
        )
    return text.replace(old, new), count


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("edit_file")
    def edit_file(
        path: str, old_string: str, new_string: str, runtime: ToolRuntime, replace_all: bool = False
    ) -> str:
        """Replace `old_string` with `new_string` in a file under outputs/ or temp/, or in the
        working folder (the user approves the change first).

        `old_string` must match exactly once (whitespace included) unless `replace_all` is true.
        """
        workspace = env.workspace(runtime)
        real = workspace.resolve(path, for_writing=True)
        shown = workspace.display(real)
        if not real.is_file():
            raise ToolError(N_("{path} does not exist; create it with write_file."), path=shown)
        try:
            text = workspace.read_text(real)
            edited, count = apply_edit(text, old_string, new_string, replace_all)
            workspace.write_text(real, edited)
            env.record_written(runtime, real)
        except (NotText, ValueError) as exc:
            raise ToolError(N_("{problem}."), problem=said_of(exc)) from exc
        except OSError as exc:
            raise ToolError(
                N_("cannot edit {path}: {reason}; the file is unchanged."),
                path=shown,
                reason=os_error_reason(exc),
            ) from exc
        return f"Edited {shown}: {count} replacement{'s' if count != 1 else ''}."

    def proposed(current: str, args: Mapping[str, Any]) -> str:
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
        return apply_edit(current, old, new, bool(args.get("replace_all", False)))[0]

    edit_file.metadata = {
        **(edit_file.metadata or {}),
        NEEDS_APPROVAL: changes_file(proposed),
        CONFIGURATION_CHECK: writes_folder_configuration,
        CHANGES_FILE: "path",
    }
    return edit_file
