"""Turns a chat line into the graph input of a turn: its @mentions and #attachments, checked
and copied, then the state update built by graph/turn.py (which says how fields merge).
An @mention of an MCP server that is not running starts it here, before the turn.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from generalAgent.agent.chat_input import (
    UploadReport,
    find_image_paths,
    find_references,
    missing_reference,
    parse_mentions,
    spaced_reference,
    unescape,
    upload,
)
from generalAgent.agent.loading import LoadedAgent
from generalAgent.display import Message
from generalAgent.graph.history import settle_unfinished_step
from generalAgent.graph.images import TurnImages, turn_images
from generalAgent.graph.state import UploadedFile, merge_names
from generalAgent.graph.turn import TurnInput, main_turn_input
from generalAgent.i18n import _, ngettext
from generalAgent.providers.vision import image_limits, knows_vision, takes_images
from generalAgent.tools.named_hosts import NamedHost, hosts_typed
from generalAgent.tools.visibility import classify_mentions, servers_joining, visible_tools_for_state


@dataclass
class PreparedTurn:
    """A turn ready to send (`graph_input`), or `errors` that stop it before anything is sent."""

    graph_input: TurnInput | None
    uploads: list[UploadedFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown; the turn goes on (an unknown @name)
    errors: list[str] = field(default_factory=list)  # the turn is not sent (a #file that is not there)


def prepare_turn(
    text: str,
    agent: LoadedAgent,
    config: dict[str, Any],
    session_id: str,
    cwd: Path,
    pending_uploads: list[UploadedFile] | None = None,
    progress: Callable[[str], AbstractContextManager[Any]] | None = None,
    *,
    references: bool = True,
    typed: bool = True,
    allowed_hosts: Sequence[NamedHost] = (),
    piped: str = "",
    piped_references: bool = False,
    extra_mentions: Sequence[str] = (),
) -> PreparedTurn:
    """The graph input of a turn. `progress(text)` wraps a wait the user should see (an MCP
    server starting); `references=False` takes the text as it is, without acting on its
    @mentions and #paths (text piped to `-p -`). Only text the user `typed` names hosts
    (piped text never does, whatever `references` says); `allowed_hosts` are --allow-host's.
    `piped` is data appended to the message after a blank line (stdin of `-p`): its
    @mentions and #paths are acted on only with `piped_references`, and it never names
    hosts; `extra_mentions` count as @mentions of the turn (`--allowed-tools`)."""
    parts = agent.parts
    acted_on = f"{text}\n\n{piped}" if piped and piped_references else text
    # extra_mentions: --allowed-tools, or the tools a custom command names (allowed-tools).
    names = list(dict.fromkeys([*extra_mentions, *(parse_mentions(acted_on) if references else [])]))
    mentions = classify_mentions(
        names, parts.registry.names(), parts.skills.ids(), parts.agents.names(), parts.registry.mcp_handles()
    )
    warnings = [_unknown_mention(name, suggestions) for name, suggestions in mentions.unknown.items()]
    failed = start_mentioned_servers(agent, mentions.servers, progress)
    warnings += failed.values()
    known = [name for name in names if name not in mentions.unknown and name not in failed]

    found = find_references(acted_on, cwd) if references else []
    missing = [
        spaced_reference(r.spaced) if r.spaced else missing_reference(unescape(r.typed), cwd)
        for r in found
        if r.path is None
    ]
    if missing:  # nothing is copied and nothing is sent: the user meant a file that is not there
        hint = _('Nothing was sent. Check the name; quote one with spaces: #"my report.pdf".')
        return PreparedTurn(None, warnings=warnings, errors=[*missing, hint])
    pasted = find_image_paths(text, cwd) if references else []  # a dragged-in screenshot
    named = [r.path for r in found if r.path]
    report = attach_files(agent, session_id, [*named, *(p for p in pasted if p not in named)], cwd)
    warnings += report.notices
    if report.problems:  # as for a name that is not there: the user sees the turn did not go
        hint = _("Nothing was sent. Fix or leave out the file above and send the message again.")
        return PreparedTurn(None, warnings=warnings, errors=[*report.problems, hint])
    files = [*(pending_uploads or []), *report.files]
    images = attached_images(agent, session_id, [f["path"] for f in files if f.get("type") == "image"])
    # Hosts count as named by the user only in what the user typed, never in what OCR read.
    named_hosts = [*allowed_hosts, *(hosts_typed(text) if typed else [])]
    if images.lines and isinstance(text, str):
        text = f"{text}\n\n" + "\n".join(images.lines)
    warnings += [
        _("{path}: this model does not take images; the text OCR read in it was sent instead").format(
            path=path
        )
        for path in images.ocr
    ]
    warnings += [
        _("{path}: not sent as an image ({reason})").format(
            path=path, reason=why.shown(_, ngettext) if isinstance(why, Message) else why
        )
        for path, why in images.unread
    ]
    if (images.ocr or images.unread) and not knows_vision(parts.settings.model):
        warnings.append(unknown_model_line(parts.settings.model.model_name or ""))

    # A turn that stopped half-way (process killed, disk full) may have left what its tools
    # finished beside the checkpoint: stored now, before the new message would discard it.
    # Calls still open are answered by the graph's repair step (graph/history.py).
    settle_unfinished_step(agent.graph, config)
    graph_input = main_turn_input(
        f"{text}\n\n{piped}" if text and piped else text or piped,
        session_id=session_id,
        max_loops=parts.settings.governance.max_loops,
        mentions=known,
        uploads=files,
        images=images.refs,
        named_hosts=named_hosts,
    )
    return PreparedTurn(graph_input, uploads=report.files, warnings=warnings)


def unknown_model_line(model: str) -> str:
    """The line for a model no provider table knows: whether it sees images and its window
    are guesses, and the settings that make them facts."""
    return _(
        "{model} is a model generalAgent does not know: images go to it as OCR text and its context "
        "window is a guess; set MODEL_VISION=on if it takes images and MODEL_CONTEXT_WINDOW to its window."
    ).format(model=model)


def attached_images(agent: LoadedAgent, session_id: str, paths: list[str]) -> TurnImages:
    """This turn's images for the model: image parts if it sees, else OCR text (graph/images.py)."""
    if not paths:
        return TurnImages()
    model = agent.parts.settings.model
    root = agent.parts.env.workspace_for(session_id).root
    return turn_images(paths, root, takes_images(model), image_limits(model))


def start_mentioned_servers(
    agent: LoadedAgent,
    handles: list[str],
    progress: Callable[[str], AbstractContextManager[Any]] | None = None,
) -> dict[str, str]:
    """Start the mentioned MCP servers that are not loaded; {handle: problem} for those that fail."""
    manager = agent.parts.mcp
    failed: dict[str, str] = {}
    for handle in handles:
        if handle in manager.loaded_handles():
            continue
        starting = _("Starting the MCP server @{handle}…").format(handle=handle)
        with progress(starting) if progress else contextlib.nullcontext():
            status = manager.load(handle)
        if status.state != "ready":
            failed[handle] = _(
                "@{handle}: the MCP server did not start ({detail}); its tools are not available."
            ).format(handle=handle, detail=status.shown_detail(_))
    return failed


def attach_files(agent: LoadedAgent, session_id: str, references: list[str], cwd: Path) -> UploadReport:
    if not references:
        return UploadReport()
    workspace = agent.parts.env.workspace_for(session_id)
    return upload(references, workspace, cwd)


def describe_tools(agent: LoadedAgent, config: dict[str, Any]) -> Group:
    """What /tools shows: every tool by tier, and which ones the next call can use."""
    parts = agent.parts
    state = dict(agent.graph.get_state(config).values)
    # The next message would also bring the servers that are loaded by now.
    state["mcp_servers"] = merge_names(state.get("mcp_servers"), servers_joining(parts.registry, state))
    visible = {
        t.name
        for t in visible_tools_for_state(
            parts.registry, parts.skills.ids(), parts.agents.names(), state, parts.skills.tools_by_skill()
        )
    }
    table = Table(box=None, header_style="bold")
    for column in (_("tool"), _("tier"), _("risk"), _("now"), _("description")):
        table.add_column(column)
    labels = {"core": _("core"), "enabled": _("enabled"), "discovered": _("@mention")}
    # tools.yaml's risk levels (tools/registry.py RISKS), in the UI language.
    risks = {"low": _("low"), "medium": _("medium"), "high": _("high")}
    for spec in parts.registry.specs():
        table.add_row(
            spec.name,
            labels[spec.tier],
            risks.get(spec.risk, spec.risk),
            "✓" if spec.name in visible else "",
            spec.shown_description,
        )
    for server in parts.mcp.statuses():
        tier = (
            f"MCP @{server.handle}"
            if server.enabled
            else _("MCP @{handle} (@mention)").format(handle=server.handle)
        )
        for name, description in server.tools:
            summary = Text(description.splitlines()[0][:100] if description else "")  # server text: no markup
            trust = _("trusted") if server.trust else _("asks")
            table.add_row(Text(name), Text(tier), trust, "✓" if name in visible else "", summary)
    hint = Text(
        _(
            "Discovered tools become available for the rest of the session when you @mention them; "
            "MCP tools from the first message after their server has started (/mcp)."
        ),
        style="dim",
    )
    return Group(table, hint)


def _unknown_mention(name: str, suggestions: list[str]) -> str:
    if suggestions:
        return _("Unknown @{name}; did you mean {suggestions}?").format(
            name=name, suggestions=", ".join("@" + s for s in suggestions)
        )
    return _(
        "Unknown @{name}: no tool, skill, agent or MCP server has that name "
        "(/tools, /skills, /agents, /mcp list them)."
    ).format(name=name)
