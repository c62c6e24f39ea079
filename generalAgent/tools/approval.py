"""Which tool calls need the user's approval: a policy each tool declares, never code inside it.

A tool states its rule in `tool.metadata["needs_approval"]` (`NEEDS_APPROVAL`):

- `True`: every call asks (run_bash_command; MCP tools of servers the user does not trust);
- a function `(args, context) -> str | None`: asks when it returns a reason, e.g. fetch_web
  for a host the user did not name, write_file when it would replace a file outside
  outputs/;
- absent or `False`: never asks.

The one judge (tools/judge.py) applies the rule to each call at the moment it is about to
run, after its siblings ran; AUTO_APPROVE_TOOLS relaxes it per tool, except for a write to
the folder's own configuration (`folder_configuration`), which always asks. The reason is
shown to the user beside the call, so it says what the call would do.

What the user approves must be what runs, so a tool may say more about how its call is
shown: `metadata["approval_command_args"]` names the arguments that are commands (shown
whole, every newline visible), and `metadata["approval_files"]` is a function
`(args, context) -> [FilePreview]` naming the files a call would run (run_bash_command:
`bash temp/x.sh` shows the start of temp/x.sh, which the agent wrote without a question).
`metadata["approval_configuration"]` is a function `(args, context) -> bool` saying whether
a call writes the folder's configuration, checked even when the tool is approved.
`metadata["changes_file_argument"]` / `["reads_file_argument"]` name the argument holding the
one file a call changes or reads, so calls on different files may run at the same time.
"""

from __future__ import annotations

import hashlib
import itertools
import shlex
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
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
CONFIGURATION_CHECK = "approval_configuration"
# The argument naming the one file a call changes (write_file, edit_file) or only reads
# (read_file): the calls of one message on different files run side by side, those on the
# same file one after the other (tools/judge.py `Footprint`).
CHANGES_FILE = "changes_file_argument"
READS_FILE = "reads_file_argument"
# What the question shows of a file a command runs: enough to see what it does.
PREVIEW_LINES = 12
PREVIEW_CHARS = 2_000
# A person's answer for one call: this call, this call and the rest of the process, this
# call and the rest of the session (stored with it), or no.
YES, ALWAYS, KEEP, NO = "yes", "always", "keep", "no"
DECISIONS = frozenset({YES, ALWAYS, KEEP, NO})
# What the model is told of a call outside the only tools a run allows (`RunContext.only_tools`:
# an editor session in its read-only mode, cli/acp/modes.py), refused without a question: not
# that the user refused it (they were never asked) but that the session is read-only, which
# the user can change; for the model, so English.
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
    # A digest of what the judgement read (the file's current text): the approval holds only
    # while it is unchanged, also past what a cut diff shows.
    basis: str = ""
    # The call writes the folder's own configuration (`folder_configuration`): a stronger
    # question, answered for this call only, never "always" or "keep".
    configuration: bool = False

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
        ("always" for its tool, or AUTO_APPROVE_TOOLS). A write to the folder's configuration
        asks whatever the tool's approval: it can run commands at the next start."""
        if (tool.name in self.auto_approved or tool.name in approved) and not _writes_configuration(
            tool, args, context
        ):
            return None
        return approval_reason(tool, args, context)


def _writes_configuration(tool: BaseTool, args: Mapping[str, Any], context: CallContext) -> bool:
    check = (tool.metadata or {}).get(CONFIGURATION_CHECK)
    if not callable(check):
        return False
    try:
        return bool(check(args, context))
    except Exception:  # arguments the check cannot read: the tool's own rule decides
        return True


# The files and folders of a folder that generalAgent (or git, which a command or a hook may
# run) reads at the next start and that can make it run commands: settings and hooks, keys
# and endpoints, MCP servers, the project's instructions, git's config and hooks.
CONFIGURATION_FOLDERS = frozenset({".generalagent", ".git"})
CONFIGURATION_FILES = frozenset({".env", "mcp.json", ".mcp.json", "agents.md"})


def folder_configuration(real: Path, workspace: Workspace) -> bool:
    """Whether the real path `real` is configuration of one of the user's folders (compared
    without case: a case-insensitive file system opens `.GIT/config` as `.git/config`)."""
    for root in workspace.folders.roots:
        if real != root and root not in real.parents:
            continue
        parts = [part.casefold() for part in real.relative_to(root).parts]
        if any(part in CONFIGURATION_FOLDERS for part in parts[:-1]) or (
            parts
            and (
                parts[-1] in CONFIGURATION_FILES
                or parts[-1] in CONFIGURATION_FOLDERS
                or parts[-1].startswith(".env.")
            )
        ):
            return True
    return False


def writes_folder_configuration(args: Mapping[str, Any], context: CallContext) -> bool:
    """The `CONFIGURATION_CHECK` of write_file and edit_file: the path is the configuration
    of one of the user's folders."""
    from generalAgent.tools.workspace import WorkspaceError

    workspace = context.workspace
    if workspace is None:
        return False
    try:
        real = workspace.resolve(str(args.get("path", "")), for_writing=True)
    except WorkspaceError:
        return False
    return workspace.in_place(real) and folder_configuration(real, workspace)


@dataclass(frozen=True)
class FilePreview:
    """A file a call would run, as the approval question shows it."""

    path: str  # as the workspace shows it (temp/x.sh)
    size: int  # bytes
    head: str  # its first PREVIEW_LINES lines, at most PREVIEW_CHARS characters
    complete: bool  # the head is the whole file
    # A digest of the whole file (up to DIGEST_BYTES): an approval holds while it is unchanged.
    digest: str = ""


# Programs whose next word (after options) is a script they run; `-c` gives them a command
# line instead, which is read the same way (`bash -c 'source temp/x.sh'`).
SCRIPT_RUNNERS = frozenset(
    {"bash", "sh", "zsh", "dash", "ksh", "source", ".", "python", "python3", "perl", "node", "ruby"}
)
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# A path of the session's outputs/ or temp/ a command names without a runner is shown when
# it is a script by its name (`xargs -a list temp/x.sh`, `env FOO=1 temp/x.py`).
SCRIPT_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".py", ".pl", ".rb", ".js", ".mjs", ".php"})
# How deep `bash -c "sh -c '…'"` is followed, and how many words of a command are read.
MAX_COMMAND_DEPTH = 3
MAX_COMMAND_WORDS = 400
# A file is digested up to this size; beyond, its size and first bytes stand for it.
DIGEST_BYTES = 8 * 1024 * 1024


def script_words(command: str, depth: int = 0) -> list[tuple[str, bool]]:
    """The words of a shell command that may name a file it runs, each with whether a
    runner names it (`bash x`, `sh x`, `source x`, `. x`, `./x`, the words of `bash -c '…'`)
    or it is only a path-like word (`temp/x.sh` as an argument of something else)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(itertools.islice(lexer, MAX_COMMAND_WORDS))
    except ValueError:  # an open quote: the words as they are
        words = command.split()[:MAX_COMMAND_WORDS]
    found: list[tuple[str, bool]] = []
    runner = ""  # the runner whose script is the next plain word
    inline = False  # the next word is a `-c` command line
    target = False  # the next word is where output goes (`> outputs/log`), not a script
    for word in words:
        if target:
            target = False
            continue
        if inline:
            if depth < MAX_COMMAND_DEPTH:
                found.extend(script_words(word, depth + 1))
            inline, runner = False, ""
            continue
        if word and set(word) <= set(";&|()<>"):
            target = ">" in word
            if "<" in word:  # `bash < temp/x.sh`: the input is the script
                runner = "<"
            elif not target:
                runner = ""  # a new command starts
            continue
        name = word.rsplit("/", 1)[-1]
        if word.isdigit() and len(word) < 3:
            continue  # a descriptor before a redirection (`2> temp/err`)
        if runner:
            if word == "-c" and runner in SHELLS:
                inline = True
            elif not word.startswith("-"):
                found.append((word, True))
                runner = ""
            continue
        if name in SCRIPT_RUNNERS and (word == name or word.startswith("/")):
            runner = name
            continue
        found.append((word.lstrip("<").strip(), word.startswith("./")))
    return found


def files_run_by(command: str, workspace: Workspace | None, limit: int = 5) -> list[FilePreview]:
    """The files a shell command runs (`script_words`), as they are now: a script a runner
    names wherever it is in the workspace or the user's folders, and any path-like word in
    outputs/ or temp/ (files the agent wrote without a question). Paths are read as the
    command reads them: relative to the workspace, where commands run. The command's own
    words are in the question; these are not."""
    from generalAgent.tools.workspace import WRITABLE_DIRS, WorkspaceError

    if workspace is None or not command:
        return []
    previews: list[FilePreview] = []
    seen: set[str] = set()
    for word, named in script_words(command):
        if not word or len(word) > 4096 or ("/" not in word and not named):
            continue
        try:
            candidate = Path(word).expanduser() if word.startswith(("/", "~")) else workspace.root / word
            real = candidate.resolve()
        except (OSError, ValueError, RuntimeError):
            continue
        if not workspace.contains(real):
            continue
        if not named and not (
            real.suffix.lower() in SCRIPT_SUFFIXES
            and any(workspace.in_folder(real, folder) for folder in WRITABLE_DIRS)
        ):
            continue  # data a command reads (`cat outputs/a.csv`) is not what it runs
        try:
            shown = workspace.display(real)
            if shown in seen or not real.is_file():
                continue
            preview = file_preview(workspace, real, shown)
        except (WorkspaceError, OSError):
            continue
        seen.add(shown)
        previews.append(preview)
        if len(previews) >= limit:
            break
    return previews


def file_preview(workspace: Workspace, real: Path, shown: str) -> FilePreview:
    """A file as the question shows it: size, first lines, and a digest of all of it."""
    digest = hashlib.sha256()
    head_bytes = b""
    size = 0
    with workspace.open_for_reading(real) as handle:
        while size < DIGEST_BYTES:
            block = handle.read(min(1 << 20, DIGEST_BYTES - size))
            if not block:
                break
            if len(head_bytes) < PREVIEW_CHARS * 4:
                head_bytes += block[: PREVIEW_CHARS * 4 - len(head_bytes)]
            digest.update(block)
            size += len(block)
    size = max(size, real.stat().st_size)
    text = head_bytes.decode("utf-8", errors="replace")
    head = "\n".join(text.splitlines()[:PREVIEW_LINES])[:PREVIEW_CHARS]
    complete = size == len(head_bytes) and head.rstrip("\n") == text.rstrip("\n")
    return FilePreview(
        path=shown, size=size, head=head, complete=complete, digest=f"{size}:{digest.hexdigest()}"
    )


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


# The question about a write to a folder's configuration (`folder_configuration`).
CONFIGURATION_CHANGE = N_(
    "changes {path}, configuration of your folder: it can make generalAgent or git run commands "
    "the next time they start there. Approve only a change you have read"
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
        basis = hashlib.sha256(current.encode("utf-8", errors="surrogatepass")).hexdigest()
        diff = unified_diff(current, after, real.name)
        if folder_configuration(real, workspace):
            return Reason(CONFIGURATION_CHANGE, {"path": shown}, diff=diff, basis=basis, configuration=True)
        template = (
            N_("changes {path} in your folder") if real.exists() else N_("creates {path} in your folder")
        )
        return Reason(template, {"path": shown}, diff=diff, basis=basis)

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
