"""The editor's own files and terminals, for the tools of a session an editor drives (ACP).

An editor that speaks the Agent Client Protocol may offer to read and write files for the
agent (so a file it has open is read as its unsaved buffer, and a write lands in that
buffer, undoable there) and to run commands in its own terminal (so the user watches
them). `ToolEnvironment.editors` maps a session to what its editor offers; the
workspace (tools/workspace.py) reads and writes the user's own files through it, and
run_bash_command runs there. Every path rule, approval and limit stays as without an
editor: the editor is only the hand that does it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class CommandOutcome:
    """How a command run in the editor's terminal ended."""

    output: str  # what the terminal kept of stdout and stderr
    exit_code: int | None = None
    signal: str | None = None  # the signal that ended it, when one did
    truncated: bool = False  # the editor dropped the start of a longer output
    timed_out: bool = False  # killed after the tool's timeout
    cancelled: bool = False  # killed because the user cancelled the turn


class EditorAccess(Protocol):
    """What one session's editor offers, as blocking calls from a tool's thread."""

    reads_files: bool
    writes_files: bool
    runs_commands: bool

    def read_text(self, path: Path) -> str:
        """The file's text as the editor has it (an open buffer with unsaved changes);
        OSError when the editor cannot read it."""
        ...

    def write_text(self, path: Path, text: str) -> None:
        """Write the file through the editor; OSError when it refuses."""
        ...

    def run_command(
        self,
        call_id: str,
        argv: Sequence[str],
        cwd: Path,
        timeout: float,
        cancelled: threading.Event,
    ) -> CommandOutcome:
        """Run `argv` (its environment set by `argv` itself: `env -i ...`) in a terminal of
        the editor, shown with the tool call `call_id`, until it exits, `timeout` seconds
        pass or `cancelled` is set (then it is killed); OSError when the editor refuses."""
        ...
