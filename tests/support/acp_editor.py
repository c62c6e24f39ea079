"""An editor for the ACP tests: the SDK's client side, as Zed plays it, over a pipe.

`EditorClient` records every session update and answers permission requests from a
script. `FileEditor` is one that also offers its files (a buffer can hold unsaved text,
which a read returns) and real terminals (commands run as subprocesses of the editor).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from acp import spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.support.environment import decline_if_plain


class EditorClient:
    """What the editor does: records every update, answers permissions from a script."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.answers: list[str | None] = []  # option ids to pick, in order; None = cancelled
        self.on_update: Any = None
        self.conn: Any = None

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any):
        self.permissions.append((tool_call, options))
        choice = self.answers.pop(0)
        if choice == "cancel and never answer":
            await self.conn.cancel(session_id=session_id)
            await asyncio.Event().wait()
        outcome = (
            DeniedOutcome(outcome="cancelled")
            if choice is None
            else AllowedOutcome(option_id=choice, outcome="selected")
        )
        return RequestPermissionResponse(outcome=outcome)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if self.on_update is not None:
            await self.on_update(update)

    def of_kind(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind))


class _Terminal:
    def __init__(self, process: asyncio.subprocess.Process, limit: int | None) -> None:
        self.process = process
        self.limit = limit
        self.output = b""
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(4096):
            self.output += chunk

    def status(self) -> TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        return TerminalExitStatus(
            exit_code=code if code >= 0 else None, signal=None if code >= 0 else str(-code)
        )


class FileEditor(EditorClient):
    """An editor that reads and writes files for the agent and runs its commands."""

    def __init__(self) -> None:
        super().__init__()
        self.buffers: dict[str, str] = {}  # open files with unsaved text, by absolute path
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, _Terminal] = {}
        self.commands: list[list[str]] = []  # command + args of each terminal
        self.released: list[str] = []

    capabilities = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
    )

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any):
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content, encoding="utf-8")  # saved, as Zed does after a write
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        argv = [command, *(args or [])]
        self.commands.append(argv)
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = _Terminal(process, output_byte_limit)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any):
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        await terminal.reader
        status = terminal.status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any):
        terminal = self.terminals[terminal_id]
        output = terminal.output
        truncated = terminal.limit is not None and len(output) > terminal.limit
        if truncated:
            output = output[-(terminal.limit or 0) :]
        return TerminalOutputResponse(
            output=output.decode("utf-8", errors="replace"),
            truncated=truncated,
            exit_status=terminal.status(),
        )

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is None:
            terminal.process.kill()
        return None

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        self.released.append(terminal_id)
        await self.kill_terminal(session_id, terminal_id)
        return None


def spawn(env: dict[str, str], workdir: Path, client: EditorClient):
    """`generalagent acp` started as an editor starts it, connected to `client`.

    stderr is inherited (an editor reads it into its log; an unread pipe would fill and
    stall the agent), and the agent gets time to close its databases when stdin ends. A
    plain `workdir` is one the user already declined (as for the chat), so its sessions
    are not asked about it; a test that trusts it, or writes configuration into it first,
    meets the question (tests/e2e/test_acp_trust.py)."""
    decline_if_plain(workdir)
    return spawn_agent_process(
        lambda agent: client,
        sys.executable,
        "-m",
        "generalAgent",
        "acp",
        env=env,
        cwd=str(workdir),
        transport_kwargs={"stderr": None, "shutdown_timeout": 20.0},
    )
