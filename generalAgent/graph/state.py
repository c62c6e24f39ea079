"""The agent state that LangGraph checkpoints per thread.

Only what cannot be derived is a key: the loop count of a turn is counted from the history
(`model_calls_this_turn`), and what only a sub-agent has lives in `SubagentState`.
History fields accumulate for the whole session (their reducers merge what a turn adds,
so a client sends only this turn's names and files); the `new_*` fields hold only what this
turn added and are cleared by the planner once its reminders have been sent, so each
reminder fires exactly once while tools stay available for the rest of the session.
graph/turn.py builds a turn's input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langgraph.graph.message import add_messages

from generalAgent.tools.named_hosts import NamedHost, merge_named_hosts


class TodoItem(TypedDict):
    content: str
    status: str  # pending | in_progress | completed
    priority: str  # high | medium | low
    # Written in a turn that read untrusted content (tools/provenance.py): never repeated
    # to the model as a reminder, only read back with todo_read, as data.
    untrusted: NotRequired[bool]


class UploadedFile(TypedDict, total=False):
    name: str  # file name as the user gave it
    path: str  # workspace path, e.g. uploads/report.pdf
    type: str  # pdf, docx, xlsx, pptx, text, code, image, other
    size: int  # bytes
    pages: int  # pages / slides / sheets, when the format has them


class ConversationSummary(TypedDict, total=False):
    """Where the history sent to the model starts, and what stands in for the turns before it.

    Written at each cut (graph/compaction.py), by `/compact` and by `/clear`; the head of
    every request is this summary followed by the messages after `through`, so it only
    changes when the start of the history moves.
    """

    text: str  # the summary of every message up to `through`; "" after /clear
    through: str  # id of the last message it stands for; the history sent starts after it
    messages: int  # messages it stands for, all cuts together
    unsummarised: int  # of those, dropped without a summary (the summariser failed or was skipped)
    question: str  # id of the question still being answered when the cut fell inside its turn
    tokens: int  # estimated tokens of `text`


class ContextRequest(TypedDict, total=False):
    """A run that only changes the context: `/compact [focus]` or `/clear` (graph/turn.py)."""

    action: str  # "compact" or "clear"
    focus: str  # what a /compact summary should keep above all


def merge_names(current: list[str] | None, added: list[str] | None) -> list[str]:
    """Names seen so far, then the new ones, each once, in the order first seen."""
    return list(dict.fromkeys([*(current or []), *(added or [])]))


def merge_uploads(current: list[UploadedFile] | None, added: list[UploadedFile] | None) -> list[UploadedFile]:
    """Files by workspace path, in the order first attached; attaching a path again updates it."""
    by_path: dict[str, UploadedFile] = {}
    for upload in [*(current or []), *(added or [])]:
        by_path[upload.get("path", "")] = upload
    return list(by_path.values())


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    todos: list[TodoItem]
    mentions: Annotated[list[str], merge_names]  # every @name of the session (tools, skills, agents)
    new_mentions: list[str]  # this turn's @names: reminders only
    uploaded_files: Annotated[list[UploadedFile], merge_uploads]
    new_uploaded_files: list[UploadedFile]
    workspace_id: str  # shared by a session and its sub-agents
    mcp_servers: Annotated[list[str], merge_names]  # MCP servers whose tools this session is offered
    # Tools the user chose to keep approving in this session, also when it is resumed. A
    # reducer, because several calls of one step may add to it. Approvals for the running
    # process only ("always") are not state: they come with each run's config.
    approved_tools: Annotated[list[str], merge_names]
    # The user's decisions for the calls of the last model message, by call id, each with
    # the digest of the question it answered (tools/judge.py): the tools node runs a call
    # that needs approval only with a yes for what the call would do when it runs.
    approvals: dict[str, Any]
    # The session read content from outside (a file, a page, a command's output) in some
    # turn: what the model stores from then on is marked untrusted (tools/provenance.py),
    # until the user clears the conversation or rewinds to before it.
    read_untrusted: bool
    # Who named which host in this session (the user, --allow-host, a web search): what
    # fetch_web's approval rule reads (tools/named_hosts.py). Sub-agents get the parent's.
    named_hosts: Annotated[list[NamedHost], merge_named_hosts]
    max_loops: int  # model calls a run may make; a sub-agent's are fewer (SUBAGENT_MAX_LOOPS)
    summary: ConversationSummary | None  # the compacted start of the history (graph/compaction.py)
    context_request: ContextRequest | None  # /compact or /clear, cleared once done
    # What the user saw of an answer they stopped (Ctrl-C) on a served deployment, sent with
    # their next message because a client may not write a thread's state: the repair step
    # stores it before that message, marked as interrupted, and clears it (graph/history.py).
    interrupted_answer: str | None


# State keys renamed since a thread may have been stored: old name -> new name.
RENAMED_KEYS = {"mentioned_agents": "mentions"}


class StoredState(AgentState, total=False):
    """What a stored main thread may hold: the state, and what an older release stored
    under a key renamed since (RENAMED_KEYS). The graph declares the old keys only so that
    it reads them from the checkpoint and its `repair` step carries them to the new name
    before anything else runs (`renamed_values`), which leaves the old key empty (None).
    A client never sends them, nor gets them from a run: the graph's input and output are
    AgentState."""

    mentioned_agents: list[str] | None  # `mentions` before release 0.2


def renamed_values(state: Mapping[str, Any]) -> dict[str, Any]:
    """The update that moves values stored under an old key to the new one (whose reducer
    merges them in) and empties the old key; {} when no old key holds anything."""
    update: dict[str, Any] = {}
    for old, new in RENAMED_KEYS.items():
        if state.get(old):
            update |= {new: state[old], old: None}
    return update


class SubagentState(AgentState, total=False):
    """A sub-agent's state: the agent's, plus what only a sub-agent has (graph/subagents.py).

    The main graph's state has none of these keys: a main thread is always "main", has no
    parent, runs the default prompt and may use every visible tool.
    """

    context_id: str  # "subagent-xxxxxxxx", the sub-agent's own thread
    parent_context: str  # the context that delegated ("main")
    agent_profile: str | None  # which profile (agents/*.md) it runs
    allowed_tools: list[str] | None  # that profile's allow-list


def model_calls_this_turn(messages: Sequence[BaseMessage]) -> int:
    """AI messages since the user's last message: the turn's loop count, derived from the
    history so that a turn started by any client (CLI, LangGraph Server) begins at zero."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage):
            count += 1
    return count
