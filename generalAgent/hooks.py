"""Hooks: the user's shell commands, run at fixed points of a session, as other agents run them.

They are configured in `settings.json` in the user-level config folder and, for a folder
the user trusts (config/trust.py), in its `.generalagent/settings.json`, in the shape users
already have from Claude Code, Gemini CLI and Qwen Code:

    {"hooks": {"PreToolUse": [{"matcher": "run_bash_command",
                               "hooks": [{"type": "command", "command": "...", "timeout": 10}]}]}}

The event arrives as one JSON object on the command's stdin. Exit 0 lets things go on;
exit 2 blocks: the hook's stderr is what the model (PreToolUse, PostToolUse) or the user
(UserPromptSubmit, Stop) is shown. Any other exit, a command that cannot start and one that
outlives its timeout (its whole process group is killed) give one notice and the turn goes
on: a failing hook never loses the turn.

A hook never stands in for the user's approval: a call that asks still asks, whatever a
hook prints. Only a hook the user marked `"approver": true` in the *user-level* file may
answer the question instead of the user (by printing Claude Code's
`{"hookSpecificOutput": {"permissionDecision": "allow"}}`); the key is ignored in a folder's
file, which someone else may have written.

What a hook's command sees: a user-level hook the environment without its secrets (names
process_secrets.py counts as secrets: API keys, tokens, passwords); a folder's hook only
the basic variables (PATH, HOME, LANG ...) and those the user listed for folder hooks in
the user-level file (`"folderHookVariables": ["NAME", ...]`), and it runs in the sandbox
(sandbox.py): the folder writable, no network, no ancestor visible, the home and the data
home hidden. Someone else wrote a folder's hooks; trusting the folder lets them run, not
read the user's keys.

Pure parts (parsing, matching) are separate from the one function that runs a command, so
they are tested without processes. Notices are `N_` templates with fields: the terminal
words them in the UI language.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from generalAgent.config.confined import LeavesFolder, read_confined_text
from generalAgent.config.trust import FolderTrust
from generalAgent.display import N_, Message, os_error_reason, said_of_error
from generalAgent.file_formats import accepts, describe_errors, json_line, problem
from generalAgent.i18n import _
from generalAgent.process_secrets import child_environment
from generalAgent.regex_errors import regex_error_said
from generalAgent.sandbox import (
    Confinement,
    SandboxMode,
    SandboxUnavailable,
    agent_runtime_folders,
    find_sandbox,
)

Event = Literal["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
EVENTS: tuple[Event, ...] = get_args(Event)
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})  # the events whose matcher is a tool name
SETTINGS_FILE = "settings.json"
FOLDER_CONFIG = ".generalagent"  # a folder's own configuration folder (config/trust.py)
BLOCK = 2  # the exit status that blocks, as in every agent that has hooks
DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code's default
MAX_TIMEOUT = 600.0  # a typo (timeout: 36000) must not freeze a turn for hours
MAX_MATCHER = 200  # characters: a matcher is a tool name or a short pattern
OUTPUT_LIMIT = 4000  # characters of stderr shown; a hook that prints a book is cut
SETTINGS_LIMIT = 1_000_000  # bytes of settings.json read
# A matcher of only these characters is a name or `a|b` alternatives (exact, case-sensitive);
# anything else is a regular expression matched against the whole tool name.
PLAIN_MATCHER = re.compile(r"[A-Za-z0-9_|-]*")
ALLOW = "allow"
# The user-level file's list of variables a folder's hooks may see besides BASE_VARIABLES.
FOLDER_HOOK_VARIABLES = "folderHookVariables"
BASE_VARIABLES = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TZ", "TERM")


class HookCommand(BaseModel):
    """One hook: a shell command run with the event on stdin."""

    # strict: "10" is not a number of seconds nor "true" a yes; other agents' keys are kept aside.
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    type: Literal["command"] = Field(
        default="command",
        description='Only `"command"` hooks run',
        json_schema_extra=accepts(N_('"command"')),
    )
    command: str = Field(
        description="The shell command (`/bin/sh -c`); exit 2 blocks, its stderr says why",
        json_schema_extra=accepts(N_("a shell command"), minLength=1),
    )
    timeout: float = Field(
        default=DEFAULT_TIMEOUT,
        gt=0,
        description=f"Seconds before its process group is killed (at most {MAX_TIMEOUT:g})",
        json_schema_extra=accepts(N_("a number of seconds above 0")),
    )
    approver: bool = Field(
        default=False,
        description="User-level file only: it may answer an approval question instead of you "
        "(ignored in a folder's file)",
        json_schema_extra=accepts(N_("true or false")),
    )

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise problem(N_("a hook without a command"))
        return value


class HookGroup(BaseModel):
    """The hooks of one event that share a matcher."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    matcher: str = Field(
        default="",
        max_length=MAX_MATCHER,
        description="PreToolUse/PostToolUse: which tools (empty or `*` all; `a|b` exact names; "
        "else a regular expression for the whole name)",
        json_schema_extra=accepts(N_("a tool name, names joined by |, or a regular expression")),
    )
    hooks: list[HookCommand] = Field(
        default_factory=list,
        description="The commands, run one after another",
        json_schema_extra=accepts(N_("a list of hooks")),
    )

    @field_validator("matcher", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("matcher")
    @classmethod
    def _a_pattern(cls, value: str) -> str:
        if PLAIN_MATCHER.fullmatch(value) or value == "*":
            return value
        try:
            re.compile(value)
        except re.error as exc:
            raise problem(
                N_("matcher {matcher!r} is not a valid pattern ({problem})"),
                matcher=value[:40],
                problem=regex_error_said(exc),
            ) from None
        return value


class HookSettings(BaseModel):
    """The keys of settings.json about hooks (the file may hold others)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    hooks: dict[Event, list[HookGroup]] = Field(
        default_factory=dict,
        description="The hooks of each event: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop",
        json_schema_extra=accepts(N_("an object of event names and lists of hook groups")),
    )
    folderHookVariables: list[str] = Field(  # noqa: N815  (a key of the file)
        default_factory=list,
        description="User-level file only: variables a trusted folder's hooks may see besides the basic ones",
        json_schema_extra=accepts(N_("a list of variable names")),
    )


class ProcessTracker(Protocol):
    """Who kills running commands on Ctrl-C (the tools' environment): a hook is one of them."""

    def track(self, process: subprocess.Popen) -> None: ...
    def untrack(self, process: subprocess.Popen) -> None: ...


@dataclass(frozen=True)
class Notice:
    """One line for the user about a hook: an `N_` template and its fields (a field may be
    a Message itself, e.g. why a settings file was not read)."""

    template: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def said(self) -> Message:
        """The line as a Message: `.shown(_, ngettext)` for a person, `.english()` for the log."""
        return Message(self.template, self.fields)

    def english(self) -> str:
        return self.said().english()


@dataclass(frozen=True)
class Hook:
    event: str
    command: str
    source: Path  # the settings.json it came from
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    approver: bool = False  # may answer an approval question (user-level file only)
    from_folder: bool = False  # a trusted folder's file: sandboxed, listed variables only

    def matches(self, tool_name: str | None) -> bool:
        if self.event not in TOOL_EVENTS:
            return True
        return matcher_matches(self.matcher, tool_name or "")


def matcher_matches(matcher: str, tool_name: str) -> bool:
    """Claude Code's rule: empty or `*` matches every tool, a plain name or `a|b` matches
    exactly (case-sensitive), anything else is a regular expression for the whole name."""
    if matcher in ("", "*"):
        return True
    if PLAIN_MATCHER.fullmatch(matcher):
        return tool_name in matcher.split("|")
    try:
        return re.fullmatch(matcher, tool_name) is not None
    except re.error:
        return False  # reported when the file was read


@dataclass(frozen=True)
class HookResult:
    """What the hooks of one event decided."""

    blocked: bool = False
    reason: str = ""  # the blocking hook's stderr (or its JSON reason)
    allowed: bool = False  # an approver hook answered the approval question with yes
    notices: tuple[Notice, ...] = ()


@dataclass(frozen=True)
class HookSet:
    """The hooks in effect for this process, and what was wrong with their files."""

    hooks: tuple[Hook, ...] = ()
    problems: tuple[Notice, ...] = ()
    cwd: Path | None = None  # the folder hooks run in (the project folder)
    # What a folder's hooks may see and where they run (module docstring).
    folder_variables: tuple[str, ...] = ()
    sandbox: SandboxMode = "auto"
    data_dir: Path | None = None

    def matching(self, event: str, tool_name: str | None = None, approvers_only: bool = False) -> list[Hook]:
        return [
            hook
            for hook in self.hooks
            if hook.event == event and hook.matches(tool_name) and (hook.approver or not approvers_only)
        ]

    def run(
        self,
        event: str,
        payload: Mapping[str, Any],
        tool_name: str | None = None,
        approvers_only: bool = False,
        tracker: ProcessTracker | None = None,
    ) -> HookResult:
        """Run the matching hooks one after another; the first that blocks ends the run."""
        hooks = self.matching(event, tool_name, approvers_only)
        if not hooks:
            return HookResult()
        data = json.dumps(
            {"hook_event_name": event, "cwd": str(self.cwd or Path.cwd()), **payload},
            ensure_ascii=False,
            default=str,
        )
        notices: list[Notice] = []
        allowed = False
        for hook in hooks:
            outcome = run_hook(hook, data, self.cwd, tracker, self)
            notices.extend(outcome.notices)
            if outcome.blocked:
                return HookResult(True, outcome.reason, False, tuple(notices))
            allowed = allowed or (outcome.allowed and hook.approver)
        return HookResult(False, "", allowed, tuple(notices))


def run_hook(
    hook: Hook,
    data: str,
    cwd: Path | None = None,
    tracker: ProcessTracker | None = None,
    hooks: HookSet | None = None,
) -> HookResult:
    """Run one command with the event on stdin, in a process group of its own (so a timeout
    kills whatever it started too); `tracker` lets Ctrl-C kill it like a tool's command."""
    folder = cwd or Path.cwd()
    extra = {"GENERALAGENT_PROJECT_DIR": str(folder), "GENERALAGENT_HOOK": hook.event}
    argv = ["/bin/sh", "-c", hook.command]
    if hook.from_folder:
        listed = hooks.folder_variables if hooks is not None else ()
        env = child_environment(BASE_VARIABLES, extra, granted=listed)
        try:
            sandbox = find_sandbox(hooks.sandbox if hooks is not None else "auto")
        except SandboxUnavailable as exc:
            return HookResult(
                notices=(
                    Notice(
                        N_("{event} hook not run ({error}): {command}"),
                        {"event": hook.event, "error": str(exc), "command": hook.command},
                    ),
                )
            )
        data_dir = (hooks.data_dir,) if hooks is not None and hooks.data_dir is not None else ()
        confinement = Confinement(
            writable=(folder,),
            readable=agent_runtime_folders(),
            hidden=(Path.home(), *data_dir),
            cwd=folder,
        )
        argv = sandbox.wrap(argv, confinement)
    else:
        env = child_environment(("*",), extra)
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return HookResult(
            notices=(
                Notice(
                    N_("{event} hook could not start ({error}): {command}"),
                    {"event": hook.event, "error": exc.strerror or str(exc), "command": hook.command},
                ),
            )
        )
    if tracker is not None:
        tracker.track(process)
    try:
        out, err = process.communicate(data.encode("utf-8"), timeout=hook.timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        if tracker is not None:
            tracker.untrack(process)
        return HookResult(
            notices=(
                Notice(
                    N_("{event} hook stopped after {seconds:g} s (its timeout): {command}"),
                    {"event": hook.event, "seconds": hook.timeout, "command": hook.command},
                ),
            )
        )
    if tracker is not None:
        tracker.untrack(process)
    stderr = err.decode("utf-8", "replace").strip()[:OUTPUT_LIMIT]
    if process.returncode == BLOCK:
        return HookResult(blocked=True, reason=stderr)
    if process.returncode != 0:
        return HookResult(
            notices=(
                Notice(
                    N_("{event} hook failed (exit {status}): {error}"),
                    {
                        "event": hook.event,
                        "status": process.returncode,
                        "error": stderr.splitlines()[-1] if stderr else hook.command,
                    },
                ),
            )
        )
    decision, reason = _json_decision(out)
    if decision == "deny":
        return HookResult(blocked=True, reason=reason)
    return HookResult(allowed=decision == ALLOW)


def _json_decision(out: bytes) -> tuple[str, str]:
    """Claude Code's structured answer on stdout: hookSpecificOutput.permissionDecision."""
    text = out.decode("utf-8", "replace").strip()
    if not text.startswith("{") or len(text) > SETTINGS_LIMIT:
        return "", ""
    try:
        answer = json.loads(text)
    except ValueError:
        return "", ""
    specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    if not isinstance(specific, dict):
        return "", ""
    return str(specific.get("permissionDecision") or ""), str(specific.get("permissionDecisionReason") or "")


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        process.communicate(timeout=5)


def parse_hooks(
    data: Any, source: Path, user_level: bool, text: str | None = None
) -> tuple[list[Hook], list[Notice]]:
    """The hooks of one settings.json's parsed JSON (its `text` gives lines to errors); what
    is wrong, as notices. Each group and each hook is validated alone (`HookGroup`,
    `HookCommand`), so one mistake costs that hook, not the file."""
    hooks: list[Hook] = []
    problems: list[Notice] = []
    line_of = partial(json_line, text) if text is not None else None

    def check(model: type[BaseModel], value: Any, location: tuple[str | int, ...]) -> Any:
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            said = describe_errors(exc, model, str(source), line_of, location)[0]
            problems.append(Notice(N_("{problem}; that hook is ignored"), {"problem": said}))
            return None

    table = data.get("hooks") if isinstance(data, dict) else None
    if table is None:
        return hooks, problems
    if check(HookSettings, {"hooks": table if not isinstance(table, dict) else {}}, ()) is None:
        return hooks, problems
    for event, groups in table.items():
        if event not in EVENTS:
            said = _("{where}: unknown event {event!r} (known: {events})").format(
                where=str(source), event=event, events=", ".join(EVENTS)
            )
            problems.append(Notice(N_("{problem}; that hook is ignored"), {"problem": said}))
            continue
        for g, group in enumerate(groups if isinstance(groups, list) else [groups]):
            at: tuple[str | int, ...] = ("hooks", event, g)
            # The group's own keys here; its hooks one by one below (a list of them is checked as a whole only
            # when it is not a list).
            outer = group
            if isinstance(group, dict):
                outer = {k: v for k, v in group.items() if k != "hooks" or not isinstance(v, list)}
            shared = check(HookGroup, outer, at)
            entries = group.get("hooks") if isinstance(group, dict) else None
            if shared is None:
                continue
            for e, entry in enumerate(entries if isinstance(entries, list) else []):
                hook = check(HookCommand, entry, (*at, "hooks", e))
                if hook is None:
                    continue
                hooks.append(
                    Hook(
                        event=event,
                        command=hook.command,
                        source=source,
                        matcher=shared.matcher,
                        timeout=min(hook.timeout, MAX_TIMEOUT),
                        # Only the user's own file may let a hook answer for the user.
                        approver=user_level and hook.approver,
                        from_folder=not user_level,
                    )
                )
    return hooks, problems


def load_hooks(
    user_config: Path,
    trust: FolderTrust,
    cwd: Path,
    sandbox: SandboxMode = "auto",
    data_dir: Path | None = None,
) -> HookSet:
    """The user's hooks, then the folder's (only when the user trusts this folder).
    `sandbox` and `data_dir`: how a folder's hooks are confined (module docstring)."""
    hooks: list[Hook] = []
    problems: list[Notice] = []
    listed: tuple[str, ...] = ()
    files = [(user_config / SETTINGS_FILE, user_config, True)]
    folder = cwd / FOLDER_CONFIG
    if trust.covers(cwd):
        files.append((folder / SETTINGS_FILE, folder, False))
    for path, home, user_level in files:
        if not path.is_file():
            continue
        try:
            if path.stat().st_size > SETTINGS_LIMIT:
                problems.append(
                    Notice(
                        N_(
                            "{path} not read: it is larger than {limit:,} bytes (the most a settings file may be)"
                        ),
                        {"path": str(path), "limit": SETTINGS_LIMIT},
                    )
                )
                continue
            text = read_confined_text(path, home)
            data = json.loads(text)
        except json.JSONDecodeError as exc:  # the parser's own words stay inside our sentence
            problems.append(
                Notice(
                    N_("{path} not read: it is not valid JSON ({error}, line {line}, column {column})"),
                    {"path": str(path), "error": exc.msg, "line": exc.lineno, "column": exc.colno},
                )
            )
            continue
        except UnicodeDecodeError:
            problems.append(Notice(N_("{path} not read: it is not UTF-8 text"), {"path": str(path)}))
            continue
        except LeavesFolder as exc:  # its sentence names the path: not twice
            problems.append(Notice(N_("{problem}; not read"), {"problem": said_of_error(exc)}))
            continue
        except OSError as exc:
            problems.append(
                Notice(N_("{path} not read: {error}"), {"path": str(path), "error": os_error_reason(exc)})
            )
            continue
        except ValueError as exc:
            problems.append(Notice(N_("{path} not read: {error}"), {"path": str(path), "error": str(exc)}))
            continue
        found, wrong = parse_hooks(data, path, user_level, text)
        hooks += found
        problems += wrong
        if user_level and isinstance(data, dict) and isinstance(data.get(FOLDER_HOOK_VARIABLES), list):
            listed = tuple(str(name) for name in data[FOLDER_HOOK_VARIABLES] if isinstance(name, str))
    return HookSet(tuple(hooks), tuple(problems), cwd, listed, sandbox, data_dir)
