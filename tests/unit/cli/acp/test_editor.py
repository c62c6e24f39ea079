"""EditorBridge: the tools' blocking calls, answered by the editor on the connection's loop.

The connection here is an in-process editor (the SDK's Client methods, as coroutines) on
a loop of its own thread, as the server's loop is while a turn runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import errno
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    FileSystemCapabilities,
    ReadTextFileResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from generalAgent.cli.acp.editor import EditorBridge

EVERYTHING = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)


class Editor:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.exit = asyncio.Event()

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        self.calls.append(f"read {path}")
        if path.endswith("missing.md"):
            raise RequestError.resource_not_found(path)
        if path.endswith("hang.md"):
            await asyncio.Event().wait()
        return ReadTextFileResponse(content="buffer text")

    async def create_terminal(self, session_id: str, command: str, args: list[str], **kwargs: Any):
        self.calls.append("create " + " ".join([command, *args]))
        return CreateTerminalResponse(terminal_id="t1")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.calls.append(f"shown {update.content[0].terminal_id}")

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any):
        await self.exit.wait()
        return WaitForTerminalExitResponse(exit_code=0)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any):
        status = TerminalExitStatus(exit_code=0) if self.exit.is_set() else None
        return TerminalOutputResponse(output="done\n", truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.calls.append(f"kill {terminal_id}")

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.calls.append(f"release {terminal_id}")


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_it_offers_what_the_client_advertised(loop: asyncio.AbstractEventLoop) -> None:
    editor: Any = Editor()
    assert EditorBridge(editor, loop, "s", EVERYTHING).offers_anything
    reads_only = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True))
    bridge = EditorBridge(editor, loop, "s", reads_only)
    assert (bridge.reads_files, bridge.writes_files, bridge.runs_commands) == (True, False, False)
    assert not EditorBridge(editor, loop, "s", None).offers_anything
    assert not EditorBridge(editor, loop, "s", ClientCapabilities()).offers_anything


def test_reads_answer_or_fail_as_os_errors(loop: asyncio.AbstractEventLoop) -> None:
    cancelled = threading.Event()
    bridge = EditorBridge(Editor(), loop, "s", EVERYTHING, cancelled)  # type: ignore[arg-type]
    assert bridge.read_text(Path("/p/notes.md")) == "buffer text"
    with pytest.raises(OSError, match="could not read it") as failed:
        bridge.read_text(Path("/p/missing.md"))
    assert failed.value.errno == errno.EIO
    threading.Timer(0.3, cancelled.set).start()
    with pytest.raises(OSError, match="stopped") as stopped:
        bridge.read_text(Path("/p/hang.md"))  # an editor that never answers holds it until Stop
    assert stopped.value.errno == errno.ECANCELED


def test_a_command_runs_in_a_terminal_shown_with_its_call(loop: asyncio.AbstractEventLoop) -> None:
    editor = Editor()
    bridge = EditorBridge(editor, loop, "s", EVERYTHING)  # type: ignore[arg-type]
    loop.call_soon_threadsafe(lambda: loop.call_later(0.2, editor.exit.set))
    outcome = bridge.run_command(
        "call_1", ["env", "-i", "bash", "-c", "make"], Path("/w"), 30, threading.Event()
    )
    assert (outcome.output, outcome.exit_code, outcome.timed_out, outcome.cancelled) == (
        "done\n",
        0,
        False,
        False,
    )
    assert editor.calls == ["create env -i bash -c make", "shown t1", "release t1"]
    assert bridge.terminals == {"call_1": "t1"}


def test_a_command_past_its_timeout_is_killed(loop: asyncio.AbstractEventLoop) -> None:
    editor = Editor()
    bridge = EditorBridge(editor, loop, "s", EVERYTHING)  # type: ignore[arg-type]
    outcome = bridge.run_command("call_1", ["sleep", "9"], Path("/w"), 0.3, threading.Event())
    assert outcome.timed_out and outcome.exit_code is None
    assert editor.calls[-2:] == ["kill t1", "release t1"]


def test_stop_kills_the_command_and_frees_the_terminal(loop: asyncio.AbstractEventLoop) -> None:
    editor = Editor()
    cancelled = threading.Event()
    bridge = EditorBridge(editor, loop, "s", EVERYTHING)  # type: ignore[arg-type]
    threading.Timer(0.3, cancelled.set).start()
    outcome = bridge.run_command("call_1", ["sleep", "9"], Path("/w"), 30, cancelled)
    assert outcome.cancelled
    for _ in range(1200):  # the kill and release run on the loop once the wait is cancelled
        if "release t1" in editor.calls:
            break
        threading.Event().wait(0.05)
    assert editor.calls[-2:] == ["kill t1", "release t1"]
