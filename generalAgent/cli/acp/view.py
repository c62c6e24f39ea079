"""What one turn reports, as the editor sees it: session updates and permission requests.

`AcpView` is the `TurnView` (agent/turns.py) of an editor's turn: message and reasoning
chunks, tool calls with their kind, status and locations, and the approval questions of
the graph's approval step as permission requests (asked once per call, as in the
terminal). `replay_updates` is a stored conversation as the editor would have seen it
live (session/load). `prompt_text` reads the user's words out of ACP content blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import PermissionOption, TerminalToolCallContent, ToolCallLocation, ToolCallUpdate

from generalAgent.agent.events import (
    ApprovalRequest,
    FilesWritten,
    HookNotice,
    MessageEnd,
    ReasoningChunk,
    RetryNotice,
    StreamEvent,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnEvent,
)
from generalAgent.cli.approvals import CONFIGURATION_WARNING
from generalAgent.cli.files_written import files_written_lines
from generalAgent.cli.render import short_args
from generalAgent.i18n import _
from generalAgent.tools.approval import KEEP, NO, OUTSIDE_ONLY_TOOLS, YES

# What the editor shows of one tool result; the model still gets all of it.
RESULT_CHARS = 4_000
# What a permission request shows of the diff of a file change (the change is whole).
DIFF_CHARS = 20_000
# Permission options, by id, and the approval answer each one is (cli/approvals.py).
ALLOW_ONCE, ALLOW_SESSION, REJECT = "allow-once", "allow-session", "reject"
OPTION_ANSWERS = {ALLOW_ONCE: YES, ALLOW_SESSION: KEEP, REJECT: NO}
# How each tool looks in the editor (ACP's ToolKind); tools not listed (MCP tools) are "other".
# The real path a tool's path argument names (Workspace.resolve of the session).
Locate = Callable[[str], Path]

TOOL_KINDS = {
    "read_file": "read",
    "list_workspace_files": "read",
    "get_knowledge_item": "read",
    "find_files": "search",
    "search_file": "search",
    "search_folder": "search",
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
    """A `TurnView` (agent/turns.py) that reports to the editor.

    `notify(update)` sends one session update and `ask(tool_call, options)` one permission
    request, returning the chosen option id or None (cancelled); both block the turn's
    thread until sent, so updates reach the editor in the order the turn made them.
    `terminal_of(call_id)` names the editor terminal a call ran in (editor.py), which its
    result keeps showing. `refuse_all` answers every question "no" without asking.
    """

    def __init__(
        self,
        notify: Callable[[Any], None],
        ask: Callable[[ToolCallUpdate, list[PermissionOption]], str | None],
        workspace_root: Path,
        terminal_of: Callable[[str], str | None] = lambda call_id: None,
        locate: Locate | None = None,
    ) -> None:
        self.notify = notify
        self.ask = ask
        self.workspace_root = workspace_root
        self.locate = locate  # the real path a tool's path argument names (the session's rule)
        self.terminal_of = terminal_of
        self.calls: dict[str, str] = {}  # call id → tool name, of this turn
        self.asked: list[str] = []  # call ids a permission was requested for, in order

    def on_event(self, event: TurnEvent) -> None:
        """One event of the turn (agent/events.py), as the session update its kind is."""
        match event:
            case TextChunk(text):
                self.on_text(text)
            case ReasoningChunk(text):
                self.on_reasoning(text)
            case MessageEnd():
                return
            case ToolStart(call_id, name, args):
                self.on_tool_call(call_id, name, dict(args))
            case ToolEnd(call_id, name, content, is_error, shown):
                self.on_tool_result(call_id, name, content, is_error, shown)
            case RetryNotice(status, delay, number, limit):
                self.on_retry(status, delay, number, limit)
            case _:
                self.on_custom(event)

    def on_reasoning(self, text: str) -> None:
        self.notify(update_agent_thought_text(text))

    def on_text(self, text: str) -> None:
        self.notify(update_agent_message_text(text))

    def on_tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self.calls[call_id] = name
        self.notify(tool_call_start(call_id, name, args, self.workspace_root, self.locate))

    def on_tool_result(
        self, call_id: str, name: str, content: str, is_error: bool, shown: str | None = None
    ) -> None:
        shown = result_shown(name, shown or content, is_error)
        terminal = self.terminal_of(call_id)
        # A command that ran in the editor's terminal keeps showing it: the output is there.
        shown_content: list[Any] = (
            [TerminalToolCallContent(type="terminal", terminal_id=terminal)]
            if terminal
            else [tool_content(text_block(shown))]
        )
        self.notify(
            update_tool_call(
                call_id,
                status="failed" if is_error else "completed",
                content=shown_content,
                raw_output=content[:RESULT_CHARS],
            )
        )

    def on_custom(self, event: StreamEvent) -> None:
        """Hook notices and the files the tools wrote, as the agent's thoughts (the chat's
        lines); a sub-agent's progress and a summary the editor sees in their results."""
        if isinstance(event, HookNotice):
            self.notify(update_agent_thought_text(event.text(_) + "\n"))
        elif isinstance(event, FilesWritten):  # in the chat's words (cli/files_written.py)
            self.notify(update_agent_thought_text("\n".join(files_written_lines(list(event.paths))) + "\n"))

    def on_retry(self, status: int | None, delay: float, number: int, limit: int) -> None:
        note = _("The model endpoint failed; retry {number} of {limit} in {delay} s.").format(
            number=number, limit=limit, delay=f"{delay:.0f}"
        )
        self.notify(update_agent_thought_text(note + "\n"))

    def approve(self, request: ApprovalRequest) -> str:
        """One call that needs approval, as a permission request; a cancelled request is no."""
        from generalAgent.cli.approvals import reason_shown

        call_id, tool, args = request.call_id, request.tool, dict(request.args)
        self.asked.append(call_id)
        diff = request.diff
        content: list[Any] = [tool_content(text_block(f"```diff\n{diff[:DIFF_CHARS]}\n```"))] if diff else []
        # The scripts the command runs, as they are now (the terminal shows them alike).
        content += [tool_content(text_block(script_shown(p))) for p in request.files]
        configuration = request.configuration
        if configuration:
            content.insert(0, tool_content(text_block(_(CONFIGURATION_WARNING))))
        update = ToolCallUpdate(
            tool_call_id=call_id,
            title=tool_title(tool, args) + " · " + reason_shown(request.as_dict()),
            kind=TOOL_KINDS.get(tool, "other"),  # type: ignore[arg-type]
            status="pending",
            locations=tool_locations(args, self.workspace_root, self.locate) or None,
            raw_input=args,
            # The change a file tool would make, as the terminal shows it under the question.
            content=content or None,
        )
        options = [PermissionOption(option_id=ALLOW_ONCE, name=_("Allow once"), kind="allow_once")]
        if not configuration:  # a write to the folder's configuration is approved once at a time
            options.append(
                PermissionOption(
                    option_id=ALLOW_SESSION,
                    name=_("Always allow {tool} in this session").format(tool=tool),
                    kind="allow_always",
                )
            )
        options.append(PermissionOption(option_id=REJECT, name=_("Reject"), kind="reject_once"))
        answer = OPTION_ANSWERS.get(self.ask(update, options) or "", NO)
        if configuration and answer == KEEP:
            answer = YES
        if answer != NO:
            self.notify(update_tool_call(call_id, status="in_progress"))
        return answer

    def close(self) -> None:
        return


def script_shown(preview: Any) -> str:
    """A script a command runs, as a permission request shows it: path, size, first lines."""
    from generalAgent.cli.approvals import FILE_GOES_ON, RUNS_FILE

    if not isinstance(preview, dict):
        return ""
    title = _(RUNS_FILE).format(path=str(preview.get("path", "?")), size=f"{preview.get('size', 0):,}")
    more = "" if preview.get("complete", True) else "\n" + _(FILE_GOES_ON)
    return f"{title}\n```\n{preview.get('head', '')}\n```{more}"


def tool_title(name: str, args: dict[str, Any]) -> str:
    return f"{name}({short_args(args)})" if args else name


def tool_locations(
    args: dict[str, Any], workspace_root: Path, locate: Locate | None = None
) -> list[ToolCallLocation]:
    """The file a call reads or changes, as an absolute path the editor can open: the one
    the tool really touches (`locate`: the session's workspace rule, so `notes.txt` of the
    project folder is named there), else the path under the workspace."""
    for key in PATH_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            path = Path(value).expanduser()
            if locate is not None:
                try:
                    return [ToolCallLocation(path=str(locate(value)))]
                except Exception:  # a path the tool refuses (WorkspaceError): named as given
                    pass
            return [ToolCallLocation(path=str(path if path.is_absolute() else workspace_root / path))]
    return []


def tool_call_start(
    call_id: str, name: str, args: dict[str, Any], workspace_root: Path, locate: Locate | None = None
) -> Any:
    return start_tool_call(
        call_id,
        tool_title(name, args),
        kind=TOOL_KINDS.get(name, "other"),  # type: ignore[arg-type]
        status="pending",
        locations=tool_locations(args, workspace_root, locate),
        raw_input=args,
    )


def replay_updates(
    messages: Iterable[Any], workspace_root: Path, locate: Locate | None = None
) -> Iterator[Any]:
    """A stored conversation as the session updates the editor would have seen live."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    for message in messages:
        text = message.text if isinstance(message.text, str) else ""
        if isinstance(message, HumanMessage):
            yield update_user_message_text(text)
        elif isinstance(message, AIMessage):
            if text:
                yield update_agent_message_text(text)
            for call in message.tool_calls:
                yield tool_call_start(
                    call.get("id") or "", call["name"], call.get("args") or {}, workspace_root, locate
                )
        elif isinstance(message, ToolMessage):
            failed = message.status == "error"
            yield update_tool_call(
                message.tool_call_id,
                status="failed" if failed else "completed",
                content=[tool_content(text_block(result_shown(message.name or "tool", text, failed)))],
            )


def result_shown(name: str, content: str, is_error: bool) -> str:
    """What the editor shows of a tool's answer: a call the read-only mode refused is said in
    the UI language with what the user can do; any other answer as the model got it, capped."""
    if is_error and content == OUTSIDE_ONLY_TOOLS.format(tool=name):
        return _(
            "Not run: this session is in Read only mode. Switch it to Ask or Accept edits to let {tool} run."
        ).format(tool=name)
    return content if len(content) <= RESULT_CHARS else content[:RESULT_CHARS] + " …"


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
