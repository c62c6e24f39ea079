"""The folder-trust question of an editor session, asked through the editor.

The terminal asks once about a folder nobody decided about (cli/folder_trust.py); an editor
session has no terminal, so it asks with a permission request (ACP's
`session/request_permission`, the one question the protocol lets an agent put to the user)
at the start of the session's first prompt, before anything of the folder is used. The
question says what the folder carries and what trusting it does; the answer is remembered
in the terminal's store (config/trust.py), so the terminal, `-p` and every later editor
session follow it. A request the editor cancels (or cannot show) is a "no" for this
session, remembered nowhere, as an interrupted question in the terminal is.

The permission request belongs to a tool call the editor is told about first (a `tool_call`
update of kind "other"), so an editor that shows permission requests inside a tool call's
card has one to show it in; the card ends with what was decided.
"""

from __future__ import annotations

from typing import Any

from acp import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import PermissionOption, ToolCallUpdate

from generalAgent.cli.terminal_text import one_line
from generalAgent.config.trust import FolderTrust
from generalAgent.i18n import _

TRUST, DISTRUST = "trust-folder", "do-not-trust-folder"
# The tool call the question hangs on: one per session (a session asks at most once).
CALL_PREFIX = "folder-trust-"


def trust_call_id(session_id: str) -> str:
    return CALL_PREFIX + session_id


def trust_question(
    session_id: str, trust: FolderTrust
) -> tuple[object, ToolCallUpdate, list[PermissionOption]]:
    """The tool call announcing the question, the request's tool call and its options."""
    assert trust.folder is not None
    folder = one_line(str(trust.folder))  # its name is the author's: one line
    if trust.found:
        lines = [
            _("This folder carries project configuration: {names}").format(names=", ".join(trust.found)),
            _(
                "It can change the model endpoint and key, start programs (MCP servers), relax "
                "approvals and instruct the model. Trust it only if you trust whoever made it."
            ),
        ]
    else:
        lines = [
            _(
                "Trusted, its files are read in place (writing one still asks first); "
                "not trusted, the agent sees only what you attach with #."
            )
        ]
    title = _("Trust this folder? {folder}").format(folder=folder)
    content: list[Any] = [tool_content(text_block("\n\n".join(lines)))]
    call_id = trust_call_id(session_id)
    start = start_tool_call(call_id, title, kind="other", status="pending", content=content)
    request = ToolCallUpdate(
        tool_call_id=call_id, title=title, kind="other", status="pending", content=content
    )
    options = [
        PermissionOption(option_id=TRUST, name=_("Trust this folder"), kind="allow_always"),
        PermissionOption(option_id=DISTRUST, name=_("Do not trust it"), kind="reject_always"),
    ]
    return start, request, options


def trust_answered(session_id: str, trusted: bool | None, remembered: bool) -> object:
    """The end of the question's card: what holds now, and where it is remembered."""
    if trusted is None:
        line = _(
            "Not trusted for now: the agent reads only what you attach with #; a new session asks again."
        )
    elif trusted:
        line = _("Trusted: the folder's files and configuration are used from this message on.")
    else:
        line = _("Not trusted: the folder's configuration is ignored and its files are not read.")
    if trusted is not None and not remembered:
        line += " " + _("The answer holds for this session only (the trust store could not be written).")
    return update_tool_call(
        trust_call_id(session_id),
        status="completed" if trusted else "failed",
        content=[tool_content(text_block(line))],
    )
