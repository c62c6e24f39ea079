"""The editor's files and terminals (ACP `fs/*`, `terminal/*`) for the tools of one session.

`EditorBridge` is the `EditorAccess` of tools/editor.py over the protocol connection:
the tools call it from the turn's worker thread and it runs the request on the
connection's event loop, waiting for the answer. What it offers is what the client
advertised at `initialize` (`clientCapabilities.fs`, `.terminal`); a session whose editor
offers nothing gets no bridge and the tools work locally.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any

from acp import RequestError, update_tool_call
from acp.interfaces import Client
from acp.schema import ClientCapabilities, TerminalToolCallContent

from generalAgent.tools.editor import CommandOutcome

# What the editor's terminal keeps of a command's output (its start is dropped beyond);
# the model reads at most run_bash_command's MAX_OUTPUT_CHARS of it anyway.
OUTPUT_BYTES = 1_000_000
# How often a thread waiting for a command looks whether the turn was cancelled (seconds).
WAIT_SLICE = 0.1


class EditorBridge:
    """One session's editor, as the tools reach it."""

    def __init__(
        self,
        conn: Client,
        loop: asyncio.AbstractEventLoop,
        session_id: str,
        capabilities: ClientCapabilities | None,
        cancelled: threading.Event | None = None,
    ) -> None:
        self.conn = conn
        # The turn's cancel event (ToolEnvironment.cancelled): Stop ends a wait for the editor.
        self.cancelled = cancelled or threading.Event()
        self.loop = loop
        self.session_id = session_id
        fs = capabilities.fs if capabilities is not None else None
        self.reads_files = bool(fs is not None and fs.read_text_file)
        self.writes_files = bool(fs is not None and fs.write_text_file)
        self.runs_commands = bool(capabilities is not None and capabilities.terminal)
        # Tool call id → the terminal its command ran in, so its result keeps showing it.
        self.terminals: dict[str, str] = {}

    @property
    def offers_anything(self) -> bool:
        return self.reads_files or self.writes_files or self.runs_commands

    def read_text(self, path: Path) -> str:
        request = self.conn.read_text_file(session_id=self.session_id, path=str(path))
        return self._wait(request, "the editor could not read it").content

    def write_text(self, path: Path, text: str) -> None:
        request = self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)
        self._wait(request, "the editor could not write it")

    def run_command(
        self, call_id: str, argv: Sequence[str], cwd: Path, timeout: float, cancelled: threading.Event
    ) -> CommandOutcome:
        future = asyncio.run_coroutine_threadsafe(self._run(call_id, list(argv), cwd, timeout), self.loop)
        while True:
            try:
                return future.result(timeout=WAIT_SLICE)
            except concurrent.futures.TimeoutError:
                if cancelled.is_set():
                    future.cancel()  # _run kills and releases the terminal
                    return CommandOutcome(output="", cancelled=True)
            except RequestError as exc:
                raise OSError(errno.EIO, describe(exc)) from None

    async def _run(self, call_id: str, argv: list[str], cwd: Path, timeout: float) -> CommandOutcome:
        conn, session = self.conn, self.session_id
        created = await conn.create_terminal(
            session_id=session, command=argv[0], args=argv[1:], cwd=str(cwd), output_byte_limit=OUTPUT_BYTES
        )
        terminal = created.terminal_id
        self.terminals[call_id] = terminal
        timed_out = False
        try:
            shown = TerminalToolCallContent(type="terminal", terminal_id=terminal)
            await conn.session_update(
                session, update_tool_call(call_id, status="in_progress", content=[shown])
            )
            try:
                await asyncio.wait_for(
                    conn.wait_for_terminal_exit(session_id=session, terminal_id=terminal), timeout
                )
            except TimeoutError:
                timed_out = True
                await conn.kill_terminal(session_id=session, terminal_id=terminal)
            output = await conn.terminal_output(session_id=session, terminal_id=terminal)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await conn.kill_terminal(session_id=session, terminal_id=terminal)
            raise
        finally:
            # Release frees the editor's side; the terminal stays shown with the tool call.
            with contextlib.suppress(Exception):
                await conn.release_terminal(session_id=session, terminal_id=terminal)
        status = output.exit_status
        return CommandOutcome(
            output=output.output,
            exit_code=status.exit_code if status is not None else None,
            signal=status.signal if status is not None else None,
            truncated=output.truncated,
            timed_out=timed_out,
        )

    def _wait(self, request: Coroutine[Any, Any, Any], failure: str) -> Any:
        """The editor's answer; an editor that does not answer holds the turn only until Stop."""
        future = asyncio.run_coroutine_threadsafe(request, self.loop)
        while True:
            try:
                return future.result(timeout=WAIT_SLICE)
            except concurrent.futures.TimeoutError:
                if self.cancelled.is_set():
                    future.cancel()
                    raise OSError(errno.ECANCELED, f"{failure}: the user stopped the turn") from None
            except RequestError as exc:
                raise OSError(errno.EIO, f"{failure}: {describe(exc)}") from None


def describe(exc: RequestError) -> str:
    """The editor's error in one line (its message, and the detail it sent)."""
    detail = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
    return f"{exc} ({detail})" if detail and str(detail) not in str(exc) else str(exc)
