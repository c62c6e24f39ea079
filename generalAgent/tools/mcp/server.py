"""One MCP server's connection: started, listed, called, restarted; it lives on the manager's loop.

A server runs as one long-lived task that holds the transport (a child process over
stdio, or a streamable HTTP session) open until it is told to stop, because the SDK's
transports are task-scoped context managers. Its tools are listed once through
langchain-mcp-adapters, bound to a stand-in session that forwards to whichever
connection is current, so a restart changes nothing the model sees.

What can go wrong, and what each becomes:
- it does not start within MCP_STARTUP_TIMEOUT (or cannot start at all): `ServerUnavailable`,
  with a one-line reason, and the process is stopped;
- it died while idle: before a call is sent, a stdio server's process is looked at (its
  exit is certain and costs nothing to learn, whereas the end of its output may not have
  been read yet); a process that has exited, or a connection already seen closed, is
  restarted and the call sent to the new one, once, and the manager tells the user. An
  HTTP server that answers 404 to our session (it restarted and forgot it) refused the
  call unread, and one that cannot be connected to never got it: both are reconnected the
  same way (a server still down is then not running, not "stopped during this call");
- it dies during a call: `ServerStopped` (the call may have half-run, so it is not
  repeated); the next call restarts it;
- a call outlasts its timeout: `CallTimedOut`; the call is abandoned, the server keeps running.

A stdio server's stderr goes, with secrets cut out, to DATA_DIR/logs/mcp-<server>.log;
its last lines explain a failed start.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from signal import Signals
from typing import Any, Literal

import anyio
import anyio.abc
import httpx
import mcp.client.stdio as sdk_stdio
from langchain_core.tools import StructuredTool
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.types import CONNECTION_CLOSED, Implementation

from generalAgent import __version__
from generalAgent.display import N_, Message, carrying, one_line
from generalAgent.private_storage import private_file
from generalAgent.tools.mcp.capped_http import IDENTITY, capping_hook
from generalAgent.tools.mcp.capped_lines import CappedLines
from generalAgent.tools.mcp.config import MCPServerConfig

LOGGER = logging.getLogger(__name__)
State = Literal["off", "starting", "ready", "failed", "stopped"]
CLIENT = Implementation(name="generalAgent", version=__version__)
STDERR_LINES_KEPT = 20
# How long a description of a process that exited waits for its last stderr line to be read.
STDERR_DRAIN_SECONDS = 0.5
LOG_FILE_MAX_BYTES = 1_000_000
HTTP_CONNECT_TIMEOUT = 30.0
# Streamable HTTP keeps a response stream open while a tool runs; the call timeout bounds it.
HTTP_READ_TIMEOUT = 3_600.0
_CLOSED = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)
# Where the SDK's spawn hook (below) leaves the process it started for the connection
# being opened; a ContextVar, because the spawn runs in that connection's own task.
_SPAWNED: ContextVar[list[Any] | None] = ContextVar("mcp_spawned", default=None)
# The bytes one line of the server's output may hold, for the connection's task (capped_lines.py).
_MESSAGE_LIMIT: ContextVar[int | None] = ContextVar("mcp_message_limit", default=None)


def _as_said(why: str | Message) -> Message:
    """A reason as a Message: a config problem is already in the UI language (config.py)."""
    return why if isinstance(why, Message) else Message(N_("{problem}"), {"problem": why})


class ServerUnavailable(Exception):
    """The server could not be started; the message is one line (secrets removed)."""


class StartCancelled(Exception):
    """The start was abandoned because the server is being stopped."""


class ServerStopped(Exception):
    """The server's connection ended during a call."""


class CallTimedOut(Exception):
    """A call took longer than its timeout and was abandoned."""


class CallFailed(Exception):
    """The server refused the call (an unknown tool, invalid arguments); the message says why."""


class ProcessExited(Exception):
    """A stdio server's process had ended before a call was sent to it."""


class SessionLost(Exception):
    """An HTTP server answered 404 to the session's id: it no longer knows the session."""


class NotReached(Exception):
    """An HTTP server could not be connected to for the one call in flight: it never got it."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class MCPServer:
    """One configured server. Every coroutine here runs on the manager's event loop."""

    def __init__(
        self,
        config: MCPServerConfig,
        startup_timeout: float,
        log_dir: Path | None,
        restarted: Callable[[Message], None] | None = None,
        message_limit: int | None = None,
    ) -> None:
        self.config = config
        self.message_limit = message_limit  # bytes of one message (capped_lines.py, capped_http.py)
        self.startup_timeout = startup_timeout
        self.log_dir = log_dir
        # Told (with why it had stopped) when a server found dead while idle is running again.
        self._restarted = restarted
        self._idle_death: Message | None = (
            None  # why the server was found dead before a call, until it restarts
        )
        self._process: Any = None  # a stdio server's child process (anyio's), once spawned
        self._session_lost = False  # an HTTP server answered 404 to this connection's session
        self._ended_by: BaseException | None = None  # what ended the current connection
        self._in_flight = 0  # calls sent on the current connection and not answered yet
        self.state: State = "off"
        self._said = _as_said(config.problem or "")  # why it failed or stopped
        self.started_in: float | None = None  # seconds the last successful start took
        self.listed: dict[str, StructuredTool] = {}  # the adapter's tools by the server's own names
        self._session: ClientSession | None = None
        self._stop: asyncio.Event | None = None
        self._ended = asyncio.Event()  # set when the current connection has ended
        self._task: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None
        self._stderr: StderrLog | None = None
        self._stand_in = _CurrentSession(self)

    @property
    def handle(self) -> str:
        return self.config.handle

    @property
    def detail(self) -> str:
        """Why it failed or stopped, in English (the log, the model); `said_detail` for a person."""
        return self._said.english()

    @detail.setter
    def detail(self, why: str | Message) -> None:
        self._said = _as_said(why)

    @property
    def said_detail(self) -> Message:
        return self._said

    # -- lifecycle ------------------------------------------------------------------
    async def start(self) -> None:
        """Start (or restart) the server and list its tools; `ServerUnavailable` if it cannot."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.state == "ready":
                return
            if self.config.problem:
                self.state, self.detail = "failed", self.config.problem
                raise carrying(ServerUnavailable, self._said)
            await self._shutdown()
            self.state, self.detail = "starting", ""
            started = time.monotonic()
            ready: asyncio.Future[dict[str, StructuredTool]] = asyncio.get_running_loop().create_future()
            self._stop, self._ended = asyncio.Event(), asyncio.Event()
            self._session_lost, self._ended_by = False, None
            self._task = asyncio.create_task(
                self._serve(ready, self._stop, self._ended), name=f"mcp-{self.handle}"
            )
            idle_death, self._idle_death = self._idle_death, None
            try:
                self.listed = await ready
            except Exception as exc:
                self.state, self.detail = "failed", self.describe_failure(exc)
                stopping = isinstance(exc, StartCancelled)  # the process is ending: not worth a warning
                LOGGER.log(
                    logging.INFO if stopping else logging.WARNING,
                    "MCP server %s did not start: %s",
                    self.handle,
                    self.detail,
                )
                raise carrying(ServerUnavailable, self._said) from None
            self.started_in = time.monotonic() - started
            self.state = "ready"
            LOGGER.info(
                "MCP server %s ready in %.2f s with %d tools", self.handle, self.started_in, len(self.listed)
            )
            if idle_death and self._restarted is not None:
                self._restarted(idle_death)

    async def stop(self) -> None:
        await self._shutdown()
        if self.state in {"ready", "starting"}:
            self.state = "off"

    async def _shutdown(self) -> None:
        """End the connection task, if any, and wait until its process is gone."""
        task, self._task = self._task, None
        if self._stop is not None:
            self._stop.set()
        if task is not None and not task.done() and self.state == "starting":
            task.cancel()  # still waiting for the server to answer: it may never do so
        if task is not None and not task.done():
            try:
                await task
            except BaseException as exc:  # already reported; a stop must not fail
                LOGGER.debug("MCP server %s stopped with %r", self.handle, exc)

    async def _serve(
        self, ready: asyncio.Future[dict[str, StructuredTool]], stop: asyncio.Event, ended: asyncio.Event
    ) -> None:
        try:
            async with self._connect() as session:
                try:
                    with anyio.fail_after(self.startup_timeout):
                        await session.initialize()
                        self._session = session
                        tools = await load_mcp_tools(
                            self._stand_in,  # type: ignore[arg-type]  # forwards to the current session
                            server_name=self.handle,
                            handle_tool_errors=False,
                        )
                except Exception as exc:
                    # Reported now: closing the transport may take a few seconds more. (A transport
                    # failure arrives here as a cancellation; its cause is in the group raised below.)
                    _fail(ready, exc)
                    raise
                # The adapter builds StructuredTools (a coroutine, no sync function).
                ready.set_result({tool.name: tool for tool in tools if isinstance(tool, StructuredTool)})
                await stop.wait()
        except BaseException as exc:
            _fail(ready, exc)
            self._ended_by = _leaf(exc)
            if self.state == "ready" and not stop.is_set():
                self.state, self.detail = "stopped", self.describe_failure(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._session = None
            self._process = None
            ended.set()

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[ClientSession]:
        config = self.config
        if config.transport == "stdio":
            self._stderr = StderrLog(self._log_path(), config.redact)
            parameters = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env), cwd=config.cwd
            )
            _hook_sdk_spawn()
            spawned: list[Any] = []
            _SPAWNED.set(spawned)  # this connection's task only: a task has its own context
            _MESSAGE_LIMIT.set(self.message_limit)
            try:
                async with stdio_client(parameters, errlog=self._stderr.writer) as (read, write):
                    self._process = spawned[-1] if spawned else None
                    async with ClientSession(read, write, client_info=CLIENT) as session:
                        yield session
            finally:
                self._stderr.close_writer()
        else:
            hooks: list[Callable[[httpx.Response], Awaitable[None]]] = [self._watch_session]
            if self.message_limit:
                hooks.append(capping_hook(self.message_limit))
            client = httpx.AsyncClient(
                headers={**IDENTITY, **dict(config.headers)},
                timeout=httpx.Timeout(HTTP_CONNECT_TIMEOUT, read=HTTP_READ_TIMEOUT),
                event_hooks={"response": hooks},
            )
            async with (
                client,
                streamable_http_client(config.url, http_client=client) as (read, write, _),
                ClientSession(read, write, client_info=CLIENT) as session,
            ):
                yield session

    # -- calls ----------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        """The adapter's (content, artifact) for one call, restarting the server if it is down.

        A server that died while idle is restarted once per call and the call goes to the new
        process; one that is found dead again right after its restart is not running, and
        nothing was sent to it. Only a death after the call was sent is `ServerStopped`.
        """
        for attempt in (1, 2):
            await self.start()
            listed = self.listed.get(tool)
            if listed is None or listed.coroutine is None:
                raise CallFailed(f"the server no longer offers the tool {tool!r}")
            try:
                if self.process_exited():
                    # Seen before anything is written: the SDK may not have read the end of the
                    # process's output yet, and would send the call to a dead server.
                    raise ProcessExited
                return await self._call_while_connected(listed.coroutine(**arguments), timeout)
            except (ProcessExited, SessionLost, NotReached, *_CLOSED) as exc:
                # Nothing reached the server (_CLOSED: the connection had already ended).
                self._died_while_idle(exc)
                if attempt == 2:
                    raise carrying(ServerUnavailable, self._said) from None
            except McpError as exc:
                if exc.error.code != CONNECTION_CLOSED:
                    raise CallFailed(exc.error.message) from None
                self._mark_stopped(exc)
                raise ServerStopped from None
            except (httpx.TransportError, OSError) as exc:
                self._mark_stopped(exc)
                raise ServerStopped from None
        raise ServerStopped

    async def _call_while_connected(self, call: Any, timeout: float) -> Any:
        """`call`'s result, unless the timeout passes or the connection ends first.

        When an HTTP transport fails, the SDK cancels the session without answering the
        requests in flight, so a call would wait for its whole timeout; the connection's end
        is watched instead.
        """
        ended = self._ended
        call_task = asyncio.ensure_future(call)
        end_task = asyncio.ensure_future(ended.wait())
        self._in_flight += 1
        try:
            done, _ = await asyncio.wait(
                {call_task, end_task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            alone = self._in_flight == 1
        finally:
            self._in_flight -= 1
            end_task.cancel()
            if not call_task.done():
                call_task.cancel()
        if call_task in done:
            if self._session_lost and isinstance(call_task.exception(), McpError):
                # Refused unread (404 to our session: the server restarted while idle). The SDK
                # words that error differently by version; the 404 itself is certain.
                raise SessionLost
            return call_task.result()
        if end_task in done:
            if alone and isinstance(self._ended_by, (httpx.ConnectError, httpx.ConnectTimeout)):
                # A request's connection was never opened, and this call is the only request:
                # it never left. (With others in flight, whose it was is not known.)
                raise NotReached(self._ended_by)
            if self.state == "ready":
                self.state, self.detail = "stopped", Message(N_("the connection closed"))
            raise ServerStopped
        raise CallTimedOut

    def process_exited(self) -> bool:
        """Whether a stdio server's process has ended (HTTP servers: never known, False).

        The exit status is asked of the system without collecting it (WNOWAIT), so a process
        that has died is seen at once, before the event loop's child watcher gets to it.
        """
        process = self._process
        if process is None:
            return False
        if getattr(process, "returncode", None) is not None:
            return True
        waitid = getattr(os, "waitid", None)
        if waitid is None:  # Windows, macOS: the child watcher's returncode is all there is
            return False
        try:
            status = waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # already collected by the child watcher: it has exited
            return True
        return status is not None

    async def _watch_session(self, response: httpx.Response) -> None:
        """Every HTTP answer: a 404 to a request that carried our session id means the server
        no longer knows the session, which the MCP specification answers with a new one."""
        if response.status_code == 404 and "mcp-session-id" in response.request.headers:
            self._session_lost = True

    def _died_while_idle(self, exc: BaseException) -> None:
        """Nothing reached the server: the restart that follows is told to the user, once."""
        self._mark_stopped(exc)
        if self.state == "stopped":
            self._idle_death = self._said

    def _mark_stopped(self, exc: BaseException) -> None:
        if self.state == "ready":
            self.state, self.detail = "stopped", self.describe_failure(exc)
            LOGGER.warning("MCP server %s stopped: %s", self.handle, self.detail)

    # -- reporting ------------------------------------------------------------------
    def describe_failure(self, exc: BaseException) -> Message:
        """One line: what went wrong, with the server's last stderr line when it exited; in
        English for the log and the model, in the UI language for a person."""
        exc = _leaf(exc)
        if isinstance(exc, NotReached):
            exc = exc.cause
        config = self.config
        command = repr(config.command)
        fields: dict[str, str] = {}
        if isinstance(exc, StartCancelled):
            template, fields = N_("{problem}"), {"problem": str(exc)}
        elif isinstance(exc, TimeoutError):
            template = N_("did not start within {seconds} s (MCP_STARTUP_TIMEOUT)")
            fields = {"seconds": f"{self.startup_timeout:g}"}
        elif isinstance(exc, FileNotFoundError) and config.transport == "stdio":
            template = N_("cannot run {command}: no such program (check 'command' and PATH)")
            fields = {"command": command}
        elif isinstance(exc, PermissionError) and config.transport == "stdio":
            template, fields = N_("cannot run {command}: permission denied"), {"command": command}
        elif isinstance(exc, OSError) and config.transport == "stdio" and exc.strerror:
            template, fields = (
                N_("cannot run {command}: {problem}"),
                {"command": command, "problem": exc.strerror},
            )
        elif isinstance(exc, httpx.HTTPStatusError):
            status = exc.response.status_code
            template = (
                N_("answered HTTP {status} (check its 'headers')")
                if status in {401, 403}
                else N_("answered HTTP {status}")
            )
            fields = {"status": str(status)}
        elif isinstance(exc, SessionLost):
            template = N_("the server had ended its session")
        elif isinstance(exc, httpx.ConnectError):
            template, fields = N_("cannot connect to {target}"), {"target": config.shown_target}
        elif isinstance(exc, (McpError, httpx.TransportError, ProcessExited, *_CLOSED)):
            template = N_("the connection closed") if config.transport == "http" else N_("the process exited")
        else:
            template, fields = N_("{problem}"), {"problem": f"{type(exc).__name__}: {exc}"}
        # Secrets out of every field (a command's arguments, the server's own words), each one line.
        said = Message(
            template, {name: one_line(config.redact(value), 400) for name, value in fields.items()}
        )
        exited = template == N_("the process exited")
        last = self._stderr.last_line(wait=STDERR_DRAIN_SECONDS if exited else 0.0) if self._stderr else ""
        if last and not isinstance(exc, TimeoutError):
            said = Message(
                N_("{problem} ({last})"), {"problem": said, "last": one_line(config.redact(last), 400)}
            )
        return said

    def _log_path(self) -> Path | None:
        return self.log_dir / f"mcp-{self.handle}.log" if self.log_dir is not None else None


class _CurrentSession:
    """What the adapter's tools hold instead of a session: forwards to the server's current one."""

    def __init__(self, server: MCPServer) -> None:
        self._server = server

    def _current(self) -> ClientSession:
        session = self._server._session
        if session is None:
            raise anyio.ClosedResourceError
        return session

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        return await self._current().list_tools(*args, **kwargs)

    async def call_tool(self, *args: Any, **kwargs: Any) -> Any:
        return await self._current().call_tool(*args, **kwargs)


class StderrLog:
    """A stdio server's stderr: lines written, secrets cut out, to its log file; the last kept."""

    def __init__(self, path: Path | None, redact: Any) -> None:
        self._redact = redact
        self._tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
        read_end, write_end = os.pipe()
        self.writer = os.fdopen(write_end, "w")
        self._file = _open_log(path)
        self._thread = threading.Thread(target=self._pump, args=(read_end,), daemon=True, name="mcp-stderr")
        self._thread.start()

    def _pump(self, read_end: int) -> None:
        with os.fdopen(read_end, "rb") as pipe:
            for raw in pipe:
                line = self._redact(raw.decode("utf-8", errors="replace").rstrip())
                if line.strip():
                    self._tail.append(line)
                if self._file is not None:
                    try:
                        self._file.write(line + "\n")
                        self._file.flush()
                    except OSError:
                        self._file = None
        if self._file is not None:
            self._file.close()

    def close_writer(self) -> None:
        """Our copy of the pipe's write end; the reader ends once the process has exited too."""
        with suppress(OSError):
            self.writer.close()

    def last_line(self, wait: float = 0.0) -> str:
        """The last line written; with `wait`, first up to that many seconds for the reader to
        reach the pipe's end: a process that has just exited wrote its last words a moment
        ago, and the reader may not have taken them in yet."""
        if wait:
            self._thread.join(wait)
        return self._tail[-1][:200] if self._tail else ""


def _open_log(path: Path | None) -> Any:
    if path is None:
        return None
    try:
        mode = "w" if path.is_file() and path.stat().st_size > LOG_FILE_MAX_BYTES else "a"
        return private_file(path).open(mode, encoding="utf-8")  # 0600 in a 0700 folder
    except OSError:
        return None


def _hook_sdk_spawn() -> None:
    """Hand each process the SDK's stdio transport starts to the connection that asked.

    `stdio_client` keeps its child process to itself, yet that process's exit is the one
    certain sign that a server died while idle. Its spawn function is wrapped once; the
    wrapper passes on whatever it is given and returns the process unchanged. Should a
    later SDK rename the function, nothing is hooked and calls go out as before (the
    died-while-idle test in tests/unit/tools/test_mcp_servers.py then fails).
    """
    spawn = getattr(sdk_stdio, "_create_platform_compatible_process", None)
    if spawn is None or getattr(spawn, "hands_over_process", False):
        return

    async def spawn_and_hand_over(*args: Any, **kwargs: Any) -> Any:
        process = await spawn(*args, **kwargs)
        spawned = _SPAWNED.get()
        if spawned is not None:
            spawned.append(process)
        limit = _MESSAGE_LIMIT.get()
        return _CappedProcess(process, limit) if limit and process.stdout is not None else process

    spawn_and_hand_over.hands_over_process = True  # type: ignore[attr-defined]
    sdk_stdio._create_platform_compatible_process = spawn_and_hand_over


class _CappedProcess(anyio.abc.Process):
    """The SDK's child process with its stdout read through `CappedLines`; everything else
    is the process itself (the SDK closes, waits for and terminates it as before; it must
    be an anyio Process for the SDK's termination)."""

    def __init__(self, process: anyio.abc.Process, limit: int) -> None:
        self._process = process
        self._stdout = CappedLines(process.stdout, limit) if process.stdout is not None else None

    async def aclose(self) -> None:
        await self._process.aclose()

    async def wait(self) -> int:
        return await self._process.wait()

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()

    def send_signal(self, signal: Signals) -> None:
        self._process.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream | None:
        return self._process.stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._process.stderr


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc if isinstance(exc, Exception) else StartCancelled("start-up was cancelled"))


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside the task-group exception groups the SDK raises."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
