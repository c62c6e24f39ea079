"""`generalagent acp`: the agent as an Agent Client Protocol server over stdio (Zed, JetBrains).

The editor is the front end. A prompt is one turn run exactly as the chat and `-p` run it
(`prepare_turn`, then `run_turn` of cli/turns.py), in a worker thread; `AcpView` is the
`TurnView` that turns what the turn reports into session updates (message and reasoning
chunks, tool calls with their status and locations) and its approval questions into
permission requests: the same rules as the terminal (tools/approval.py), asked once per
call by the graph's approval step. Cancellation is the chat's Ctrl-C without the signal:
the cancel event stops the model call at once and the stored history is repaired.

Sessions are the chat's sessions (same ids, same checkpoints, same catalog), so a
session started in the editor can be resumed in the terminal and the other way round.
`session/load` replays the stored conversation to the editor; `session/resume` does not.
The model is a session option (category "model") over MODEL_NAME and MODEL_CHOICES.

stdout carries JSON-RPC and nothing else: the protocol writes to a duplicate of file
descriptor 1, and descriptor 1 itself (and `sys.stdout`) is pointed at stderr, so a stray
print from a library cannot corrupt the stream.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    SetSessionConfigOptionResponse,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    ListSessionsResponse,
    PermissionOption,
    PromptCapabilities,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    ToolCallLocation,
    ToolCallUpdate,
)

from generalAgent.cli.render import short_args
from generalAgent.cli.runtime import LoadedAgent
from generalAgent.config.settings import Settings
from generalAgent.i18n import _
from generalAgent.tools.approval import KEEP, NO, YES

# What the editor shows of one tool result; the model still gets all of it.
RESULT_CHARS = 4_000
# Permission options, by id, and the approval answer each one is (cli/approvals.py).
ALLOW_ONCE, ALLOW_SESSION, REJECT = "allow-once", "allow-session", "reject"
OPTION_ANSWERS = {ALLOW_ONCE: YES, ALLOW_SESSION: KEEP, REJECT: NO}
MODEL_OPTION = "model"
SESSIONS_LISTED = 50  # session/list answers one page: the most recent ones
# How each tool looks in the editor (ACP's ToolKind); tools not listed (MCP tools) are "other".
TOOL_KINDS = {
    "read_file": "read",
    "list_workspace_files": "read",
    "get_knowledge_item": "read",
    "find_files": "search",
    "search_file": "search",
    "search_knowledge": "search",
    "web_search": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "add_knowledge": "edit",
    "update_knowledge": "edit",
    "delete_knowledge": "delete",
    "run_bash_command": "execute",
    "fetch_web": "fetch",
    "todo_write": "think",
    "todo_read": "think",
}
PATH_ARGUMENTS = ("path", "file_path", "filename")


class AcpView:
    """A `TurnView` (cli/turns.py) that reports to the editor.

    `notify(update)` sends one session update and `ask(tool_call, options)` one permission
    request, returning the chosen option id or None (cancelled); both block the turn's
    thread until sent, so updates reach the editor in the order the turn made them.
    """

    def __init__(
        self,
        notify: Callable[[Any], None],
        ask: Callable[[ToolCallUpdate, list[PermissionOption]], str | None],
        workspace_root: Path,
    ) -> None:
        self.notify = notify
        self.ask = ask
        self.workspace_root = workspace_root
        self.calls: dict[str, str] = {}  # call id → tool name, of this turn
        self.asked: list[str] = []  # call ids a permission was requested for, in order

    def on_reasoning(self, text: str) -> None:
        self.notify(update_agent_thought_text(text))

    def on_text(self, text: str) -> None:
        self.notify(update_agent_message_text(text))

    def on_message_end(self) -> None:
        return

    def on_tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self.calls[call_id] = name
        self.notify(
            start_tool_call(
                call_id,
                tool_title(name, args),
                kind=TOOL_KINDS.get(name, "other"),  # type: ignore[arg-type]
                status="pending",
                locations=tool_locations(args, self.workspace_root),
                raw_input=args,
            )
        )

    def on_tool_result(self, call_id: str, name: str, content: str, is_error: bool) -> None:
        shown = content if len(content) <= RESULT_CHARS else content[:RESULT_CHARS] + " …"
        self.notify(
            update_tool_call(
                call_id,
                status="failed" if is_error else "completed",
                content=[tool_content(text_block(shown))],
                raw_output=content[:RESULT_CHARS],
            )
        )

    def on_custom(self, event: Any) -> None:
        return  # sub-agent progress and summaries: the editor sees their tool call's result

    def on_retry(self, status: int | None, delay: float, number: int, limit: int) -> None:
        note = _("The model endpoint failed; retry {number} of {limit} in {delay} s.").format(
            number=number, limit=limit, delay=f"{delay:.0f}"
        )
        self.notify(update_agent_thought_text(note + "\n"))

    def approve(self, request: dict[str, Any]) -> str:
        """One call that needs approval, as a permission request; a cancelled request is no."""
        from generalAgent.cli.approvals import reason_shown

        call_id = str(request.get("call_id", ""))
        tool = str(request.get("tool", "tool"))
        args = request.get("args") or {}
        self.asked.append(call_id)
        update = ToolCallUpdate(
            tool_call_id=call_id,
            title=tool_title(tool, args) + " · " + reason_shown(request),
            kind=TOOL_KINDS.get(tool, "other"),  # type: ignore[arg-type]
            status="pending",
            locations=tool_locations(args, self.workspace_root) or None,
            raw_input=args,
        )
        options = [
            PermissionOption(option_id=ALLOW_ONCE, name=_("Allow once"), kind="allow_once"),
            PermissionOption(
                option_id=ALLOW_SESSION,
                name=_("Always allow {tool} in this session").format(tool=tool),
                kind="allow_always",
            ),
            PermissionOption(option_id=REJECT, name=_("Reject"), kind="reject_once"),
        ]
        answer = OPTION_ANSWERS.get(self.ask(update, options) or "", NO)
        if answer != NO:
            self.notify(update_tool_call(call_id, status="in_progress"))
        return answer

    def close(self) -> None:
        return


def tool_title(name: str, args: dict[str, Any]) -> str:
    return f"{name}({short_args(args)})" if args else name


def tool_locations(args: dict[str, Any], workspace_root: Path) -> list[ToolCallLocation]:
    """The file a call reads or changes, as an absolute path the editor can open."""
    for key in PATH_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            path = Path(value).expanduser()
            return [ToolCallLocation(path=str(path if path.is_absolute() else workspace_root / path))]
    return []


def prompt_text(blocks: Iterable[Any]) -> str:
    """The user's words from ACP content blocks.

    A file the user attached in the editor (a link or an embedded copy with a file: URI)
    becomes a `#"path"` reference, as if typed in the chat: it is copied into the
    workspace and read as a document, so its content is data, never the user's own words
    (a host named inside it is not one the user named). Other embedded text is kept."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("resource_link", "resource"):
            uri = block.uri if kind == "resource_link" else block.resource.uri
            reference = file_reference(uri)
            text = getattr(block.resource, "text", None) if kind == "resource" else None
            if reference:
                parts.append(reference)
            elif isinstance(text, str):
                parts.append(f"{uri}:\n{text}")
            else:
                parts.append(uri)
    return "\n".join(part for part in parts if part)


def file_reference(uri: str) -> str | None:
    """`#"/abs/path"` for a file: URI (line anchors dropped); None for anything else."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or not parts.path:
        return None
    path = unquote(parts.path)
    return f'#"{path}"' if '"' not in path and "\n" not in path else None


@dataclass
class AcpSession:
    id: str
    cwd: Path
    model: str
    running: threading.Event = field(default_factory=threading.Event)
    approved: set[str] = field(default_factory=set)  # tools allowed "always" while the process lives
    # Permission requests waiting for the editor: a cancel ends them (as a "no") even if the
    # editor never answers them, so the turn can stop. Only touched on the event loop.
    asking: set[asyncio.Task] = field(default_factory=set)


class GeneralAgentACP:
    """The ACP `Agent`: one loaded agent serving the editor's sessions, one turn at a time."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sessions: dict[str, AcpSession] = {}
        self._agent: LoadedAgent | None = None
        self._load_lock = asyncio.Lock()
        self._turn_lock = asyncio.Lock()
        self._conn: Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    # --- protocol methods ---------------------------------------------------------------

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        from importlib.metadata import version

        self._loop = asyncio.get_running_loop()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                # Attached files come as links and are read from disk like #paths (prompt_text).
                prompt_capabilities=PromptCapabilities(embedded_context=False),
                session_capabilities=SessionCapabilities(
                    resume=SessionResumeCapabilities(), list=SessionListCapabilities()
                ),
            ),
            agent_info=Implementation(
                name="generalagent", title="generalAgent", version=version("generalAgent")
            ),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        from generalAgent.sessions import SessionCatalog

        await self._loaded()
        session = self._open(SessionCatalog.new_id(), cwd)
        return NewSessionResponse(session_id=session.id, config_options=self._options(session))

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        session = await self._stored(session_id, cwd)
        await self._replay(session)
        return LoadSessionResponse(config_options=self._options(session))

    async def resume_session(self, cwd: str, session_id: str, **kwargs: Any) -> ResumeSessionResponse:
        session = await self._stored(session_id, cwd)
        return ResumeSessionResponse(config_options=self._options(session))

    async def list_sessions(self, cwd: str | None = None, **kwargs: Any) -> ListSessionsResponse:
        """The most recent sessions of the catalog, the terminal's included (one page)."""
        from datetime import UTC, datetime

        from generalAgent.sessions import SessionCatalog

        catalog = SessionCatalog(self.settings.paths.sessions_db)
        try:
            recent = catalog.recent(SESSIONS_LISTED)
        finally:
            catalog.close()
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=str(self.sessions[info.id].cwd if info.id in self.sessions else cwd or Path.cwd()),
                    title=info.title,
                    updated_at=datetime.fromtimestamp(info.updated_at, UTC).isoformat(timespec="seconds"),
                )
                for info in recent
            ]
        )

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id != MODEL_OPTION or value not in self.settings.model.choices:
            raise RequestError.invalid_params(
                {"value": _("choose one of: {names}").format(names=", ".join(self.settings.model.choices))}
            )
        session.model = str(value)
        return SetSessionConfigOptionResponse(config_options=self._options(session))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"prompt": _("The prompt is empty.")})
        agent = await self._loaded()
        async with self._turn_lock:
            session.running.set()
            try:
                result = await asyncio.to_thread(self._run_turn, agent, session, text)
            finally:
                session.running.clear()
        if result.cancelled:
            return PromptResponse(stop_reason="cancelled")
        if result.error:
            raise RequestError.internal_error({"message": result.error})
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.running.is_set() and self._agent is not None:
            self._agent.cancel()
            for waiting in list(session.asking):
                waiting.cancel()

    # --- one turn, in a worker thread ---------------------------------------------------

    def _run_turn(self, agent: LoadedAgent, session: AcpSession, text: str) -> Any:
        from generalAgent.cli.turn_input import prepare_turn
        from generalAgent.cli.turns import TurnResult, run_turn
        from generalAgent.graph.turn import thread_config
        from generalAgent.providers.errors import describe_model_error
        from generalAgent.sessions import SessionCatalog

        if session.model != agent.parts.settings.model.model_name:
            model = agent.parts.settings.model.model_copy(update={"model_name": session.model})
            agent.switch_model(replace(agent.parts.settings, model=model))
        config = thread_config(session.id)
        prepared = prepare_turn(text, agent, config, session.id, session.cwd)
        for warning in prepared.warnings:
            self._notify(session.id, update_agent_thought_text(warning + "\n"))
        if prepared.graph_input is None:
            return TurnResult(error=" ".join(prepared.errors))
        catalog = SessionCatalog(self.settings.paths.sessions_db)
        try:
            catalog.open_session(session.id, text.splitlines()[0])
            view = AcpView(
                lambda update: self._notify(session.id, update),
                lambda call, options: self._ask(session, call, options),
                agent.parts.env.workspace_for(session.id).root,
            )
            agent.parts.env.start_turn()
            result = run_turn(
                agent.graph,
                config,
                prepared.graph_input,
                view,
                lambda exc: describe_model_error(exc, agent.parts.settings.model, _),
                approved=session.approved,
            )
            catalog.record_turn(session.id, text.splitlines()[0], result.usage)
        finally:
            catalog.close()
        return result

    def _notify(self, session_id: str, update: Any) -> None:
        assert self._conn is not None and self._loop is not None
        future = asyncio.run_coroutine_threadsafe(self._conn.session_update(session_id, update), self._loop)
        future.result()

    def _ask(self, session: AcpSession, call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        assert self._conn is not None and self._loop is not None
        conn = self._conn

        async def ask() -> Any:
            # Registered on the loop before the request goes out, so a cancel that follows
            # it (also handled on the loop) always finds it.
            task = asyncio.current_task()
            assert task is not None
            session.asking.add(task)
            try:
                return await conn.request_permission(session_id=session.id, tool_call=call, options=options)
            finally:
                session.asking.discard(task)

        try:
            outcome = asyncio.run_coroutine_threadsafe(ask(), self._loop).result().outcome
        except concurrent.futures.CancelledError:
            return None  # the turn was cancelled while the editor had the question
        return getattr(outcome, "option_id", None)  # a cancelled request has none: no

    # --- sessions -----------------------------------------------------------------------

    async def _loaded(self) -> LoadedAgent:
        async with self._load_lock:
            if self._agent is None:
                from generalAgent.cli.runtime import load_agent

                self._agent = await asyncio.to_thread(load_agent, self.settings)
            return self._agent

    def _open(self, session_id: str, cwd: str) -> AcpSession:
        session = AcpSession(session_id, Path(cwd), self.settings.model.model_name or "")
        self.sessions[session_id] = session
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        return session

    async def _stored(self, session_id: str, cwd: str) -> AcpSession:
        """A session of the catalog (the chat's and the editor's), opened for the editor."""
        from generalAgent.sessions import SessionCatalog

        await self._loaded()
        catalog = SessionCatalog(self.settings.paths.sessions_db)
        try:
            known = catalog.get(session_id)
        finally:
            catalog.close()
        if known is None:
            raise RequestError.resource_not_found(session_id)
        return self.sessions.get(session_id) or self._open(session_id, cwd)

    async def _replay(self, session: AcpSession) -> None:
        """The stored conversation, as the editor would have seen it live."""
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        from generalAgent.graph.turn import thread_config

        assert self._conn is not None and self._agent is not None
        state = await asyncio.to_thread(self._agent.graph.get_state, thread_config(session.id))
        root = self._agent.parts.env.workspace_for(session.id).root
        for message in state.values.get("messages", []):
            text = message.text if isinstance(message.text, str) else ""
            if isinstance(message, HumanMessage):
                await self._conn.session_update(session.id, update_user_message_text(text))
            elif isinstance(message, AIMessage):
                if text:
                    await self._conn.session_update(session.id, update_agent_message_text(text))
                for call in message.tool_calls:
                    args = call.get("args") or {}
                    start = start_tool_call(
                        call.get("id") or "",
                        tool_title(call["name"], args),
                        kind=TOOL_KINDS.get(call["name"], "other"),  # type: ignore[arg-type]
                        status="pending",
                        locations=tool_locations(args, root),
                        raw_input=args,
                    )
                    await self._conn.session_update(session.id, start)
            elif isinstance(message, ToolMessage):
                done = update_tool_call(
                    message.tool_call_id,
                    status="failed" if message.status == "error" else "completed",
                    content=[tool_content(text_block(text[:RESULT_CHARS]))],
                )
                await self._conn.session_update(session.id, done)

    def _options(self, session: AcpSession) -> list[Any]:
        choices = self.settings.model.choices or (session.model,)
        return [
            SessionConfigOptionSelect(
                id=MODEL_OPTION,
                name=_("Model"),
                category="model",
                type="select",
                current_value=session.model,
                options=[SessionConfigSelectOption(value=name, name=name) for name in choices],
            )
        ]

    def close(self) -> None:
        if self._agent is not None:
            self._agent.close()


async def _serve(server: GeneralAgentACP, protocol_out: int) -> None:
    """The SDK's connection on stdin and a private copy of stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)  # a prompt may embed a whole file
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    pipe = os.fdopen(protocol_out, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(_WriteProtocol, pipe)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    # session/resume is in the SDK's "unstable" set: routed only with the flag.
    await run_agent(server, writer, reader, use_unstable_protocol=True)  # type: ignore[arg-type]


class _WriteProtocol(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """Back-pressure for the protocol's writer (what `StreamWriter.drain` waits on)."""


def run_acp_server(settings: Settings) -> int:
    """Serve the editor until it closes stdin; the exit status."""
    protocol_out = os.dup(1)
    os.dup2(2, 1)  # whatever else writes to stdout lands on stderr
    sys.stdout = sys.stderr
    server = GeneralAgentACP(settings)
    try:
        asyncio.run(_serve(server, protocol_out))
    except (KeyboardInterrupt, BrokenPipeError, ConnectionResetError):
        pass
    finally:
        server.close()
    return 0


__all__ = ["AcpView", "GeneralAgentACP", "prompt_text", "run_acp_server", "tool_locations"]
