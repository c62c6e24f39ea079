"""Which tool calls need the user's approval: a policy each tool declares, never code inside it.

A tool states its rule in `tool.metadata["needs_approval"]` (`NEEDS_APPROVAL`):

- `True`: every call asks (run_bash_command; MCP tools of servers the user does not trust);
- a function `(args, context) -> str | None`: asks when it returns a reason, e.g. fetch_web
  for a host the user did not name, write_file when it would replace a file outside
  outputs/;
- absent or `False`: never asks.

The graph's approval step (graph/nodes/approval.py) applies the rule to every call of a
model message before any of them runs; AUTO_APPROVE_TOOLS relaxes it per tool. The
reason is shown to the user beside the call, so it says what the call would do.

What the user approves must be what runs, so a tool may say more about how its call is
shown: `metadata["approval_command_args"]` names the arguments that are commands (shown
whole, every newline visible), and `metadata["approval_files"]` is a function
`(args, context) -> [FilePreview]` naming the files a call would run (run_bash_command:
`bash temp/x.sh` shows the start of temp/x.sh, which the agent wrote without a question).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from generalAgent.display import N_
from generalAgent.tools.named_hosts import NamedHosts

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from generalAgent.config.settings import Settings
    from generalAgent.tools.workspace import Workspace

NEEDS_APPROVAL = "needs_approval"
COMMAND_ARGS = "approval_command_args"
FILES_RUN = "approval_files"
# What the question shows of a file a command runs: enough to see what it does.
PREVIEW_LINES = 12
PREVIEW_CHARS = 2_000
# A person's answer for one call: this call, this call and the rest of the process, this
# call and the rest of the session (stored with it), or no.
YES, ALWAYS, KEEP, NO = "yes", "always", "keep", "no"
DECISIONS = frozenset({YES, ALWAYS, KEEP, NO})
# The run's config key (`configurable`) listing the tools the user approved "always" in the
# running process: not state, so a later process (a resume, `-p`) asks again.
PROCESS_APPROVALS = "approved_tools"
# The run's config key naming the only tools whose calls may run (an editor session in its
# read-only mode, cli/acp/modes.py): a call of any other tool is refused without a question.
ONLY_TOOLS = "only_tools"
# What the model is told of such a call: not that the user refused it (they were never
# asked) but that the session is read-only, which the user can change; for the model, so English.
OUTSIDE_ONLY_TOOLS = (
    "Error: refused: this session is read-only (the user chose the editor's Read only mode), so "
    "only tools that read or search run and {tool} is not one of them; the user was not asked. "
    "Do not retry it: say what you would do instead, and that the user can switch the session "
    "to the Ask or Accept edits mode to let it run."
)
ALWAYS_ASKS = N_("asks before every call")


@dataclass(frozen=True)
class Reason:
    """Why a call asks: an English template (marked for the terminal's catalog) and its
    fields. `text` is what the model and the logs read; the terminal shows the template in
    the UI language, filled with the same fields."""

    template: str
    fields: Mapping[str, str] = field(default_factory=dict)
    # What the call would change, shown under the question (a unified diff for a file).
    diff: str = ""

    @property
    def text(self) -> str:
        return self.template.format(**self.fields)


@dataclass(frozen=True)
class CallContext:
    """What a rule may consult besides the call's arguments."""

    workspace: Workspace | None = None
    # Who named which host (the user, --allow-host, a web search): tools/named_hosts.py.
    named_hosts: NamedHosts = field(default_factory=NamedHosts)


ApprovalRule = Callable[[Mapping[str, Any], CallContext], Reason | None]


def approval_reason(tool: BaseTool, args: Mapping[str, Any], context: CallContext) -> Reason | None:
    """Why this call needs the user's approval, or None when it may run without asking.

    A rule that fails (arguments it cannot read) asks: approval is the safe side.
    """
    rule = (tool.metadata or {}).get(NEEDS_APPROVAL)
    if rule is True:
        return Reason(ALWAYS_ASKS)
    if not callable(rule):
        return None
    try:
        return rule(args, context)
    except Exception as exc:  # a bad argument must not let a call through unasked
        return Reason(N_("its arguments could not be checked ({error})"), {"error": type(exc).__name__})


@dataclass(frozen=True)
class ApprovalPolicy:
    """The tools' own rules, minus the tools the user lets run without asking."""

    auto_approved: frozenset[str] = frozenset()

    def reason(
        self,
        tool: BaseTool,
        args: Mapping[str, Any],
        context: CallContext,
        approved: Collection[str] = (),
    ) -> Reason | None:
        """Why the call must be approved now; None if it needs no approval or already has it
        ("always" for its tool, or AUTO_APPROVE_TOOLS)."""
        if tool.name in self.auto_approved or tool.name in approved:
            return None
        return approval_reason(tool, args, context)


@dataclass(frozen=True)
class FilePreview:
    """A file a call would run, as the approval question shows it."""

    path: str  # as the workspace shows it (temp/x.sh)
    size: int  # bytes
    head: str  # its first PREVIEW_LINES lines, at most PREVIEW_CHARS characters
    complete: bool  # the head is the whole file


def files_run_by(command: str, workspace: Workspace | None, limit: int = 5) -> list[FilePreview]:
    """The files in outputs/ or temp/ a shell command names (`bash temp/x.sh`, `./temp/x.py`,
    `. temp/env`): files the agent wrote in this session, without a question, that the
    command would run. The command's own words are in the question; these are not."""
    from generalAgent.tools.workspace import WRITABLE_DIRS, WorkspaceError

    if workspace is None or not command:
        return []
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # an open quote: the words as they are
        words = command.split()
    previews: list[FilePreview] = []
    seen: set[str] = set()
    for word in words[:200]:
        word = word.lstrip("<").strip()
        if "/" not in word or len(word) > 4096:
            continue
        try:
            real = workspace.resolve(word)
        except (WorkspaceError, OSError, ValueError):
            continue
        if not any(workspace.in_folder(real, folder) for folder in WRITABLE_DIRS):
            continue
        try:
            shown = workspace.display(real)
            if shown in seen or not real.is_file():
                continue
            with workspace.open_for_reading(real) as handle:
                data = handle.read(PREVIEW_CHARS * 4)
            size = real.stat().st_size
        except (WorkspaceError, OSError):
            continue
        seen.add(shown)
        text = data.decode("utf-8", errors="replace")
        head = "\n".join(text.splitlines()[:PREVIEW_LINES])[:PREVIEW_CHARS]
        complete = size == len(data) and head.rstrip("\n") == text.rstrip("\n")
        previews.append(FilePreview(path=shown, size=size, head=head, complete=complete))
        if len(previews) >= limit:
            break
    return previews


def replaces_user_file(args: Mapping[str, Any], context: CallContext) -> Reason | None:
    """The rule of the file-changing tools: asks before a file that exists outside
    outputs/ (the agent's results for the user) is replaced or edited. A path the tool
    would refuse anyway (outside the workspace, read-only) needs no question."""
    from generalAgent.tools.workspace import RESULTS_DIR, WorkspaceError

    workspace = context.workspace
    if workspace is None:
        return Reason(N_("the workspace could not be checked"))
    try:
        real = workspace.resolve(str(args.get("path", "")), for_writing=True)
    except WorkspaceError:
        return None
    if not real.is_file() or workspace.in_folder(real, RESULTS_DIR):
        return None
    return Reason(
        N_("changes {path}, an existing file outside {folder}/"),
        {"path": workspace.display(real), "folder": RESULTS_DIR},
    )


# A diff longer than this is cut in the question (the whole change is still what runs).
MAX_DIFF_LINES = 400
# Current content read for the diff: a bigger file is described, not diffed.
MAX_DIFF_SOURCE_BYTES = 2 * 1024 * 1024

ProposedText = Callable[[str, Mapping[str, Any]], str]


def changes_file(proposed: ProposedText) -> ApprovalRule:
    """The rule of write_file and edit_file. A file in the user's own folders (the working
    folder, --add-dir folders: `Workspace.in_place`) is written only after the user approved
    the change, shown as a unified diff of the text before and after (`proposed(current,
    args)` gives the text after; ValueError: the tool will refuse the call anyway). In the
    session workspace, `replaces_user_file` applies."""

    def rule(args: Mapping[str, Any], context: CallContext) -> Reason | None:
        from generalAgent.tools.text_files import NotText
        from generalAgent.tools.workspace import WorkspaceError

        workspace = context.workspace
        if workspace is None:
            return Reason(N_("the workspace could not be checked"))
        try:
            real = workspace.resolve(str(args.get("path", "")), for_writing=True)
        except WorkspaceError:
            return None
        if not workspace.in_place(real):
            return replaces_user_file(args, context)
        shown = str(real)
        current = ""
        if real.is_file():
            if real.stat().st_size > MAX_DIFF_SOURCE_BYTES:
                return Reason(N_("changes {path}, a large file in your folder"), {"path": shown})
            try:
                current = workspace.read_text(real)
            except (NotText, OSError):
                return Reason(N_("replaces {path}, a file in your folder that is not text"), {"path": shown})
        try:
            after = proposed(current, args)
        except ValueError:
            return None
        template = (
            N_("changes {path} in your folder") if real.exists() else N_("creates {path} in your folder")
        )
        return Reason(template, {"path": shown}, diff=unified_diff(current, after, real.name))

    return rule


def unified_diff(before: str, after: str, name: str) -> str:
    """The change from `before` to `after` as a unified diff (3 lines of context), cut at
    MAX_DIFF_LINES lines with a line saying how many more there are."""
    import difflib

    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{name}", f"b/{name}", lineterm="", n=3
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES:,} {DIFF_CUT}"]
    return "\n".join(lines)


DIFF_CUT = "more diff lines"
# The arguments of write_file and edit_file that a whole diff shows in full.
SHOWN_BY_DIFF = frozenset({"content", "old_string", "new_string"})


def diff_is_whole(diff: str) -> bool:
    """Whether `diff` (from unified_diff) shows the whole change, or was cut at MAX_DIFF_LINES."""
    last = diff.rsplit("\n", 1)[-1]
    return not (last.startswith("… ") and last.endswith(DIFF_CUT))


def describe_knowledge_item(settings: Settings, item_id: str) -> str:
    """`"Title" (id …)` of a knowledge item, for the question about changing it; its id
    alone when it cannot be looked up."""
    from generalAgent.knowledge import STORE_ERRORS, open_store

    try:
        with open_store(settings) as store:
            item = store.get_knowledge_item(item_id)
    except STORE_ERRORS:
        item = None
    return f'"{item.title}" (id {item_id})' if item is not None else f"item {item_id!r}"
