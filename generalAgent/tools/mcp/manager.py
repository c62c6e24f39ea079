"""The MCP servers of one process: started in the background, offered as tools, stopped at exit.

Enabled servers start the moment the agent starts loading, on an event loop of their own
(one daemon thread), so neither the prompt nor a turn ever waits for them. A server whose
tools are listed is *loaded*; when its tools become visible to the model is decided by
tools/visibility.py (at the start of a turn, so a server that finishes starting mid-turn
does not change the tool list under a running turn). A server that fails to start leaves
one notice line for the chat to show, and so does one that had died while idle and was
restarted by the next call; a server with `"enabled": false` starts when the user
@mentions it (`load`).

Calls from the graph's worker threads are handed to the loop and waited for, in short
slices, so that cancelling the caller's turn (its session's cancel token, found in the
run's context: tools/run_context.py) abandons them at once; another session's calls go on.
Nothing here imports the MCP SDK until a server is configured.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generalAgent.config.settings import MCPSettings, Settings
from generalAgent.display import N_, Message
from generalAgent.sandbox import Confinement, SandboxUnavailable, agent_runtime_folders, find_sandbox
from generalAgent.tools.errors import ToolError, said_of
from generalAgent.tools.mcp.config import MCPConfig, MCPServerConfig, environment_variables, load_mcp_config

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from generalAgent.tools.mcp.server import MCPServer

LOGGER = logging.getLogger(__name__)
# How often a waiting call looks at the cancel event: short enough that Ctrl-C feels immediate.
WAIT_SLICE = 0.1
# A stopped stdio server gets 2 s to exit after its stdin closes, then SIGTERM, then SIGKILL.
SHUTDOWN_WAIT = 6.0

# Notices are the terminal's (translated where shown); tool answers below are the model's (English).
FAILED_NOTICE = N_("MCP server {handle}: {detail}; its tools are skipped (/mcp lists servers).")
RESTARTED_NOTICE = N_("MCP server {handle} had stopped while idle ({detail}); the next call restarted it.")
STOPPED_DURING_CALL = N_(
    "the MCP server {handle} stopped during this call ({detail}); it may not have finished. "
    "Calling one of its tools again restarts the server."
)
NOT_RUNNING = N_(
    "the MCP server {handle} is not running and could not be restarted: {detail}. Tell the user."
)
TIMED_OUT = N_(
    "no answer from the MCP server {handle} within {timeout} s; the call was abandoned and may "
    'still finish on the server. Try a smaller request, or tell the user (mcp.json\'s "timeout" '
    "or MCP_CALL_TIMEOUT allow more time)."
)
CANCELLED = N_("cancelled: the user pressed Ctrl-C before the MCP server {handle} answered.")


@dataclass(frozen=True)
class ServerStatus:
    """What `/mcp`, `doctor` and mentions need to know about one server, at one moment."""

    handle: str
    name: str
    transport: str
    target: str  # the command line or URL, without secrets
    source: Path
    enabled: bool
    trust: bool
    state: str  # off | starting | ready | failed | stopped
    detail: str  # why it failed or stopped (English)
    tools: tuple[tuple[str, str], ...]  # (name offered to the model, description)
    started_in: float | None
    warnings: tuple[str, ...]
    said: Message | None = None  # `detail` as a Message, for the UI language

    def shown_detail(self, translate: Callable[[str], str]) -> str:
        """Why it failed or stopped, in the language of `translate` (the terminal's `_`)."""
        return self.said.shown(translate) if self.said is not None else self.detail


class MCPServerManager:
    def __init__(self, config: MCPConfig, settings: MCPSettings, log_dir: Path | None = None) -> None:
        self.config = config
        self.settings = settings
        self._log_dir = log_dir
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: dict[str, MCPServer] = {}
        self._tools: dict[str, tuple[BaseTool, ...]] = {}
        self._startups: dict[str, concurrent.futures.Future[Any]] = {}
        self._setup_error = ""  # why the servers could not even be set up (their loop still runs)
        self._notices: list[Callable[[Callable[[str], str]], str]] = []  # each: translate → line
        # Servers `add` gave the agent while it runs (an editor's sessions), by handle: how
        # many sessions hold each (two passing the same server share it). The last to let
        # go stops it, so a server lives as long as the sessions that asked for it.
        self._held: dict[str, int] = {}

    @classmethod
    def from_settings(cls, settings: Settings, cwd: Path | None = None) -> MCPServerManager:
        """The servers `settings` configure: a folder's files (of `cwd`, default the folder
        the settings were read for) only when the folder is trusted."""
        folder = cwd or settings.working_folder
        config = load_mcp_config(
            settings.mcp,
            folder,
            environment_variables(settings.sources.in_order),
            folder_trusted=settings.sources.trust.covers(folder),
            explicit_scope="folder" if settings.from_folder("MCP_CONFIG") else "user",
        )
        config.servers = [confined_server(server, settings, folder) for server in config.servers]
        manager = cls(config, settings.mcp, settings.paths.log_file.parent)
        for problem in config.problems:  # English, as the configuration's checks word them
            manager._notices.append(_as_is(problem))
        return manager

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> MCPServerManager:
        """Start every enabled server in the background; returns at once."""
        for config in self.config.servers:
            if config.enabled:
                self._startups[config.handle] = self._submit(self._start(config.handle, quiet=False))
        return self

    def wait_for_startup(self) -> None:
        """Wait until every enabled server is loaded or has failed (`-p`, LangGraph Server)."""
        concurrent.futures.wait(list(self._startups.values()))

    def load(self, handle: str) -> ServerStatus:
        """Start `handle` if it is not running (an @mention) and wait for the outcome."""
        self._submit(self._start(handle, quiet=True)).result()
        return self.status(handle)

    def add(self, config: MCPServerConfig) -> ServerStatus:
        """A server given while the agent runs (an editor's session, cli/acp/mcp_servers.py),
        started at once and waited for. A handle already configured keeps what it has.
        Each `add` is a hold on the server, ended by `let_go`."""
        with self._lock:
            added_here = self.config.get(config.handle) is None
            if added_here:
                self.config.servers.append(config)
            if added_here or config.handle in self._held:
                self._held[config.handle] = self._held.get(config.handle, 0) + 1
        if added_here:
            self._submit(self._register(config)).result()
        if self.config.get(config.handle) is not config or config.problem or not config.enabled:
            return self.status(config.handle)
        self._startups[config.handle] = self._submit(self._start(config.handle, quiet=True))
        self._startups[config.handle].result()
        return self.status(config.handle)

    async def _register(self, config: MCPServerConfig) -> None:
        self._servers.setdefault(config.handle, self._server(config))

    def let_go(self, handle: str) -> None:
        """A session that `add`ed `handle` closed: when it was the last to hold it, the
        server is stopped and forgotten. A server of the configuration is never touched."""
        with self._lock:
            holders = self._held.get(handle, 0)
            if holders == 0:
                return
            if holders > 1:
                self._held[handle] = holders - 1
                return
            del self._held[handle]
            config = self.config.get(handle)
            if config is not None:
                self.config.servers.remove(config)
            self._tools.pop(handle, None)
            self._startups.pop(handle, None)
        try:
            self._submit(self._forget(handle)).result(timeout=SHUTDOWN_WAIT)
        except concurrent.futures.TimeoutError:
            LOGGER.warning("the MCP server %s did not stop within %s s", handle, SHUTDOWN_WAIT)

    async def _forget(self, handle: str) -> None:
        server = self._servers.pop(handle, None)
        if server is not None:
            await server.stop()

    def load_all(self) -> list[ServerStatus]:
        """Start every enabled server at once and wait (`doctor`). A server marked
        `"enabled": false` starts only when the user @mentions it, never here."""
        futures = [self._submit(self._start(s.handle, quiet=True)) for s in self.config.servers if s.enabled]
        concurrent.futures.wait(futures)
        return self.statuses()

    def close(self) -> None:
        """Stop every server (each gets a moment to exit cleanly) and the loop."""
        loop = self._loop
        if loop is None:
            return
        stops = [asyncio.run_coroutine_threadsafe(s.stop(), loop) for s in self._servers.values()]
        concurrent.futures.wait(stops, timeout=SHUTDOWN_WAIT)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    # -- what the rest of the agent asks ------------------------------------------------
    def handles(self) -> list[str]:
        return [s.handle for s in self.config.servers]

    def is_enabled(self, handle: str) -> bool:
        config = self.config.get(handle)
        return config is not None and config.enabled

    def loaded_handles(self) -> list[str]:
        """Servers whose tools are known, in configuration order."""
        return [h for h in self.handles() if h in self._tools]

    def tools_of(self, handles: Iterable[str]) -> list[BaseTool]:
        """The tools of these servers: servers in configuration order, tools by name."""
        wanted = set(handles)
        return [tool for h in self.handles() if h in wanted for tool in self._tools.get(h, ())]

    def tool_names(self, handle: str) -> list[str]:
        return [tool.name for tool in self._tools.get(handle, ())]

    def drain_notices(self, translate: Callable[[str], str] = str) -> list[str]:
        """Lines for the user that have not been shown yet (start-up failures, restarts), each
        once; `translate` is the terminal's `_`."""
        with self._lock:
            notices, self._notices = self._notices, []
        return [line(translate) for line in notices]

    def status(self, handle: str) -> ServerStatus:
        config = self.config.get(handle)
        if config is None:
            raise KeyError(handle)
        server = self._servers.get(handle)
        tools = tuple((t.name, t.description) for t in self._tools.get(handle, ()))
        if server is None:
            problem = config.problem or self._setup_error
            state, detail, started_in = ("failed" if problem else "off"), problem or "", None
            said = None
        else:
            state, detail, started_in = server.state, server.detail, server.started_in
            said = server.said_detail
        if state == "off" and config.enabled and not config.problem and handle in self._startups:
            state = "starting"
        return ServerStatus(
            handle=handle,
            name=config.name,
            transport=config.transport,
            target=config.shown_target,
            source=config.source,
            enabled=config.enabled,
            trust=config.trust,
            state=state,
            detail=detail,
            tools=tools,
            started_in=started_in,
            warnings=config.warnings,
            said=said,
        )

    def statuses(self) -> list[ServerStatus]:
        return [self.status(h) for h in self.handles()]

    # -- calls (from the graph's worker threads) -----------------------------------------------
    def call(self, handle: str, tool: str, arguments: dict[str, Any]) -> str:
        """Run one tool call on the server's loop; every failure becomes a `ToolError`."""
        from langchain_core.tools import ToolException

        from generalAgent.tools.mcp.server import CallFailed, CallTimedOut, ServerStopped, ServerUnavailable
        from generalAgent.tools.mcp.tool import result_text

        server = self._servers[handle]
        config = server.config
        timeout = config.timeout or self.settings.mcp_call_timeout
        future = self._submit(server.call(tool, arguments, timeout))
        try:
            content, artifact = self._wait(future, handle)
        except CallTimedOut:
            raise ToolError(TIMED_OUT, handle=handle, timeout=f"{timeout:g}") from None
        except ServerStopped:
            raise ToolError(STOPPED_DURING_CALL, handle=handle, detail=server.said_detail) from None
        except ServerUnavailable as exc:
            raise ToolError(NOT_RUNNING, handle=handle, detail=said_of(exc)) from None
        except (CallFailed, ToolException) as exc:
            raise ToolError(
                config.redact(str(exc)) or "the tool reported an error without a message"
            ) from None
        except (NotImplementedError, ValueError) as exc:  # content the adapter cannot convert (audio)
            raise ToolError(
                N_("the answer could not be read: {problem}"), problem=config.redact(str(exc))
            ) from None
        return config.redact(result_text(content, artifact))

    def _wait(self, future: concurrent.futures.Future[Any], handle: str) -> Any:
        from generalAgent.tools.run_context import current_cancel_token

        cancelled = current_cancel_token()  # of the session whose tool call this is
        while True:
            try:
                return future.result(timeout=WAIT_SLICE)
            except concurrent.futures.TimeoutError:
                if cancelled is not None and cancelled.is_set():
                    future.cancel()
                    raise ToolError(CANCELLED, handle=handle) from None

    # -- the loop -----------------------------------------------------------------------------
    async def _start(self, handle: str, quiet: bool) -> None:
        from generalAgent.tools.mcp.server import ServerUnavailable

        server = self._servers.get(handle)
        if server is None:
            if not quiet:
                self._notice(FAILED_NOTICE, handle=handle, detail=self._setup_error)
            return
        try:
            await server.start()
        except ServerUnavailable as exc:
            if not quiet:
                self._notice(FAILED_NOTICE, handle=handle, detail=said_of(exc))
            return
        if handle not in self._tools:
            self._tools[handle] = self._public_tools(server)

    def _public_tools(self, server: MCPServer) -> tuple[BaseTool, ...]:
        """The server's tools as offered, once: later restarts keep these names and objects."""
        from generalAgent.tools.mcp.naming import tool_names
        from generalAgent.tools.mcp.tool import build_mcp_tool

        config = server.config
        listed = server.listed
        allowed = set(config.tools) if config.tools is not None else None
        names = tool_names(config.handle, [n for n in listed if allowed is None or n in allowed])
        tools = [
            build_mcp_tool(
                public, config.handle, listed[remote], config.trust, self._caller(config.handle, remote)
            )
            for remote, public in names.items()
        ]
        return tuple(sorted(tools, key=lambda tool: tool.name))

    def _caller(self, handle: str, remote: str) -> Callable[[dict[str, Any]], str]:
        def call(arguments: dict[str, Any]) -> str:
            return self.call(handle, remote, arguments)

        return call

    def _notice(self, template: str, **fields: str | Message) -> None:
        said = Message(template, fields)
        with self._lock:
            self._notices.append(said.shown)

    def _server(self, config: MCPServerConfig) -> MCPServer:
        from generalAgent.tools.mcp.server import MCPServer

        def restarted(detail: Message) -> None:
            self._notice(RESTARTED_NOTICE, handle=config.handle, detail=detail)

        return MCPServer(
            config,
            self.settings.mcp_startup_timeout,
            self._log_dir,
            restarted,
            message_limit=self.settings.mcp_message_max_bytes,
        )

    def _submit(self, coroutine: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._running_loop())

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._run_loop, name="mcp-servers", daemon=True)
                self._thread.start()
            return self._loop

    def _run_loop(self) -> None:
        """The loop thread: imports the MCP SDK here (a second or two), not in the caller's thread.

        The loop runs whatever the setup does: callers wait on futures only it completes, so
        a failed import must turn into failed servers, never a thread that is gone."""
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        try:
            self._servers = {c.handle: self._server(c) for c in self.config.servers}
        except Exception as exc:
            LOGGER.exception("MCP servers could not be set up")
            self._setup_error = f"could not be set up ({type(exc).__name__}: {exc})"
        self._loop.run_forever()


def confined_server(server: MCPServerConfig, settings: Settings, folder: Path) -> MCPServerConfig:
    """A trusted folder's stdio server as it is started: inside the sandbox (generalAgent/
    sandbox.py), writing only to the folder, seeing no ancestor process, the home and the
    data home hidden. It keeps the network: an MCP server usually exists to reach a service.
    The user's own servers start as configured. With SANDBOX=required and no sandbox, the
    folder's server is not started (its problem says why)."""
    if server.scope != "folder" or server.transport != "stdio" or server.problem:
        return server
    try:
        sandbox = find_sandbox(settings.tools.sandbox)
    except SandboxUnavailable as exc:
        return replace(server, problem=str(exc))
    if not sandbox.active:
        return server
    if shutil.which(server.command, path=(server.env or {}).get("PATH")) is None:
        return server  # nothing to confine: starting it fails with "no such program", as unconfined
    start = server.cwd or folder
    confinement = Confinement(
        writable=(folder,),
        readable=(*agent_runtime_folders(), *_files_named(server, start)),
        hidden=(Path.home(), settings.paths.data_dir),
        network=True,
        cwd=start,
    )
    wrapped = sandbox.wrap([server.command, *server.args], confinement)
    return replace(server, command=wrapped[0], args=tuple(wrapped[1:]))


def _files_named(server: MCPServerConfig, start: Path) -> tuple[Path, ...]:
    """The program and the existing files among its arguments: what the configuration names
    to run stays readable inside the sandbox even where it hides the folder they are in (the
    private /tmp, the home)."""
    program = shutil.which(server.command, path=(server.env or {}).get("PATH"))
    named = [Path(program)] if program else []
    for argument in server.args:
        path = Path(argument) if Path(argument).is_absolute() else start / argument
        if not argument.startswith("-") and path.is_file():
            named.append(path.resolve())
    return tuple(named)


def _as_is(line: str) -> Callable[[Callable[[str], str]], str]:
    return lambda _translate: line
