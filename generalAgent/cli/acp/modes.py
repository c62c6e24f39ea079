"""A session's approval mode, as the editor offers it (ACP session modes).

Each mode is a view onto the approval settings the user already has, never a new rule:

- `ask`: what the terminal does: every call the tools' rules ask for is asked
  (AUTO_APPROVE_TOOLS and the session's "always" answers apply);
- `accept-edits`: the same, and changes to files (write_file, edit_file) run without a
  question, as if they were in AUTO_APPROVE_TOOLS. Only where writing is allowed at all:
  the working folder once it is trusted, the workspace's outputs/ and temp/ (the
  workspace's path rule is unchanged). Commands, MCP tools and sending data out still ask;
- `read-only`: only the tools that read or search run (READ_ONLY_TOOLS); a call of any
  other tool is refused without a question (the run context's `only_tools`, tools/run_context.py), and what
  those tools ask (fetch_web for a host nobody named) is still asked.

No mode lets a call run that the configured rules would refuse, or skips a question
other than a file change's.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp.schema import SessionMode, SessionModeState

from generalAgent.agent.session import TurnRules
from generalAgent.display import N_
from generalAgent.i18n import _

ASK, ACCEPT_EDITS, READ_ONLY = "ask", "accept-edits", "read-only"
# The tools `accept-edits` lets run without asking: they change files, shown as a diff.
EDIT_TOOLS = frozenset({"write_file", "edit_file"})
# What `read-only` lets run: the tools that only read, search or keep the todo list.
READ_ONLY_TOOLS = frozenset(
    {
        "now",
        "todo_read",
        "todo_write",
        "read_file",
        "list_workspace_files",
        "find_files",
        "search_file",
        "search_folder",
        "search_knowledge",
        "get_knowledge_item",
        "query_table",
        "view_page",
        "web_search",
        "fetch_web",
    }
)


@dataclass(frozen=True)
class Mode:
    id: str
    name: str  # N_() templates, translated when shown
    description: str


MODES = (
    Mode(ASK, N_("Ask"), N_("Asks before every call the terminal would ask for")),
    Mode(
        ACCEPT_EDITS,
        N_("Accept edits"),
        N_("File changes run without asking; commands, MCP tools and sending data out still ask"),
    ),
    Mode(READ_ONLY, N_("Read only"), N_("Only reads and searches; every other call is refused")),
)
MODE_IDS = frozenset(mode.id for mode in MODES)


def mode_state(current: str) -> SessionModeState:
    """The modes for the editor, names in the UI language."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=mode.id, name=_(mode.name), description=_(mode.description)) for mode in MODES
        ],
    )


def mode_choices() -> list[tuple[str, str]]:
    """(id, name shown) of each mode, for the session's config option."""
    return [(mode.id, _(mode.name)) for mode in MODES]


def turn_rules(mode: str) -> TurnRules:
    """What the mode changes in a turn's approvals: the file tools asked for no more in
    `accept-edits`, only the reading tools in `read-only`. The mode's id goes with the
    rules, so the session is stored in it (agent/session.py)."""
    if mode == ACCEPT_EDITS:
        return TurnRules(approved=EDIT_TOOLS, mode=mode)
    if mode == READ_ONLY:
        return TurnRules(only_tools=READ_ONLY_TOOLS, mode=mode)
    return TurnRules(mode=ASK)


def restored_mode(stored: str | None) -> str:
    """The mode a stored session comes back in: the one it was left in, while this release
    still has it; else (none chosen, or a mode since removed or renamed) `ask`, the
    default, which asks for everything the terminal asks for and so is never looser."""
    return stored if stored in MODE_IDS else ASK
