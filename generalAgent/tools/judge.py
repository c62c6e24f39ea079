"""The one judge of a tool call: may it run now, must the user be asked first, or is it refused.

Every place that decides about a call asks this module, with the same explicit inputs (the
tools the model was offered, the approval policy, what the rules may consult, the tools
approved by name, the only tools a run allows) and the decision the user recorded for the
call, if any: the route after the model's message (is a question due?), the approval step
(what to ask), and the tools node, which judges each call again right before it runs,
after its siblings ran. So a call is always judged against the files as they are when it
runs: an edit whose text a sibling call put there is asked then, not waved through as
"would fail", and a script a sibling just wrote is shown.

What the user approved is exactly what runs: a question carries `shown`, a digest of
everything the judgement saw (the reason, the diff, the whole current text of the file, the
scripts a command runs). A recorded yes lets the call run only while the judgement made now
has the same digest; when a sibling or anyone else changed the file in between, the call
is asked again. A no stays a no whatever changed.

The calls of one message run side by side where no order can be seen (graph/nodes/tools.py):
each call has a `Footprint`, what it may read and change (a file, by its real path and
inode; or anything), and a call waits for every earlier call whose footprint meets its own
(`waits_for`). So calls on the same file, and every command (it can touch anything), run
in the order the model sent them, each judged after the ones before it finished; writes
to different files run at the same time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from generalAgent.display import N_, Message
from generalAgent.tools.approval import (
    ALWAYS,
    CHANGES_FILE,
    COMMAND_ARGS,
    CONFIGURATION_CHECK,
    DECISIONS,
    FILES_RUN,
    KEEP,
    NEEDS_APPROVAL,
    NO,
    OUTSIDE_ONLY_TOOLS,
    READS_FILE,
    YES,
    ApprovalPolicy,
    CallContext,
    Reason,
)
from generalAgent.tools.tools_file import RISK

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

# Recorded, never answered by a person: a sub-agent met a call that needs approval.
CANNOT_ASK = "cannot ask"
# Answered by a PreToolUse hook the user made an approver in the user-level settings.json
# (hooks.py); no other hook can answer for the user.
HOOK_APPROVED = "approved by the user's hook"
RUNS = frozenset({YES, ALWAYS, KEEP, HOOK_APPROVED})

# What the model is told of a call that did not run (English: the model reads it).
# Marked for the catalog: the terminal shows the person the same sentence in the UI language.
REFUSED_BY_USER = N_(
    "refused by the user: {tool} was not run. Do not retry it unchanged; ask the user or choose another way."
)
SUBAGENT_CANNOT_ASK = N_(
    "refused: {tool} needs the user's approval ({reason}), and a sub-agent cannot ask. "
    "Report what you need in your final message instead."
)

# Tools that store text the model wrote (tools/provenance.py): they run after the calls
# before them answered, so that what those calls read marks what they store.
STORES_TEXT = frozenset({"todo_write", "add_knowledge", "update_knowledge"})
# Tools whose approval rule reads only the call's arguments and the session's state, never
# files a sibling call could change: no sibling changes their judgement.
RULE_FROM_ARGUMENTS = frozenset({"fetch_web"})


@dataclass(frozen=True)
class Recorded:
    """The user's answer for one call, and the digest of the question it answered."""

    decision: str
    shown: str = ""

    @staticmethod
    def of(value: Any) -> Recorded | None:
        """A stored decision: `{"decision", "shown"}`, or a bare answer an older release
        stored (it holds for no question: a call it approved is asked again)."""
        if isinstance(value, Mapping):
            decision = value.get("decision")
            return Recorded(str(decision), str(value.get("shown") or "")) if decision else None
        return Recorded(str(value)) if isinstance(value, str) and value else None

    def stored(self) -> dict[str, str]:
        return {"decision": self.decision, "shown": self.shown}


@dataclass(frozen=True)
class Verdict:
    """What happens to a call now: it `run`s, is `refuse`d (`refusal` is the model's answer),
    or the user must be asked first (`question` is what they are shown)."""

    kind: Literal["run", "refuse", "ask"]
    refusal: str = ""
    said: Message | None = None  # the refusal, to show a person in the UI language
    question: dict[str, Any] | None = None
    reason: Reason | None = None


RUN = Verdict("run")

# A footprint key that meets every other: a call that may touch anything.
ANY = "*"


@dataclass(frozen=True)
class Footprint:
    """What a call may read and what it may change, as keys (`file_keys`, or ANY). Two
    calls whose footprints meet run in the order the model sent them; others may overlap."""

    reads: frozenset[str] = frozenset()
    changes: frozenset[str] = frozenset()

    def meets(self, other: Footprint) -> bool:
        """Whether one of the two changes what the other reads or changes."""
        return _overlap(self.changes, other.reads | other.changes) or _overlap(
            other.changes, self.reads | self.changes
        )


def _overlap(one: frozenset[str], other: frozenset[str]) -> bool:
    return bool(one and other) and (ANY in one or ANY in other or not one.isdisjoint(other))


# A call that touches nothing of the user's (refused, or a tool the model was not offered).
TOUCHES_NOTHING = Footprint()
# A tool that may read anything and changes nothing a sibling's judgement reads (searches,
# listings, the clock, fetch_web, a trusted MCP server's tools, delegate_task): beside each
# other and beside reads of one file, after the changes before it, before those after it.
READS_ANYTHING = Footprint(reads=frozenset({ANY}))
# A call that may change anything (a command, an untrusted MCP tool, a note whose question
# names what it changes) or stores text that every answer before it may have steered
# (STORES_TEXT): after every call before it, before every call after it.
TOUCHES_ANYTHING = Footprint(reads=frozenset({ANY}), changes=frozenset({ANY}))


def waits_for(footprints: Sequence[Footprint]) -> list[tuple[int, ...]]:
    """For each call (in the model's order), the earlier calls it must wait for: those
    whose footprint meets its own."""
    return [tuple(j for j in range(i) if footprints[j].meets(mine)) for i, mine in enumerate(footprints)]


def file_keys(path: Any, context: CallContext, *, for_writing: bool) -> frozenset[str] | None:
    """The keys of the file `path` names, as the tool will resolve it: its real path (in
    NFKC, case-folded: a case-insensitive disk or a name in another Unicode form is the
    same file) and, when it exists, its device and inode (a hard link is the same file).
    None when it cannot be resolved now (the tool may find it once a sibling made it)."""
    from generalAgent.tools.workspace import WorkspaceError

    workspace = context.workspace
    if workspace is None or not isinstance(path, str):
        return None
    try:
        real = workspace.resolve(path, for_writing=for_writing)
    except (WorkspaceError, OSError, ValueError, RuntimeError):
        return None
    keys = {"path:" + unicodedata.normalize("NFKC", str(real)).casefold()}
    try:
        info = real.stat()
    except OSError:
        pass
    else:
        keys.add(f"inode:{info.st_dev}:{info.st_ino}")
    return frozenset(keys)


def _refused(said: Message, reason: Reason | None = None) -> Verdict:
    return Verdict("refuse", "Error: " + said.english(), said=said, reason=reason)


@dataclass(frozen=True)
class Judge:
    """The inputs of every judgement in one step, given explicitly (no config, no state):
    `tools` the model was offered by name, the `policy`, what the rules may consult
    (`context`), the tools approved by name (kept with the session or "always" in this
    process), and the `only` tools a run allows (None: no limit)."""

    tools: Mapping[str, BaseTool]
    policy: ApprovalPolicy
    context: CallContext
    approved: frozenset[str] = frozenset()
    only: frozenset[str] | None = None

    def verdict(self, call: Mapping[str, Any], recorded: Recorded | None = None) -> Verdict:
        """The judgement of `call` against the files as they are now (module docstring)."""
        name = str(call.get("name") or "")
        tool = self.tools.get(name)
        if tool is None:
            return RUN  # not a tool the model was offered: the ToolNode answers so
        if self.only is not None and name not in self.only:
            return Verdict("refuse", OUTSIDE_ONLY_TOOLS.format(tool=name))
        if not has_approval_rule(tool):
            return RUN
        if recorded is not None and recorded.decision == NO:
            # A no stays a no, also when the tool was approved by name since ("keep").
            return _refused(Message(REFUSED_BY_USER, {"tool": name}))
        reason = self.policy.reason(tool, call.get("args") or {}, self.context, self.approved)
        if reason is None:
            return RUN
        if recorded is not None and recorded.decision == CANNOT_ASK:
            return _refused(Message(SUBAGENT_CANNOT_ASK, {"tool": name, "reason": reason.text}), reason)
        question = approval_question(call, tool, reason, self.context)
        if recorded is not None and recorded.decision in RUNS and recorded.shown == question["shown"]:
            return Verdict("run", reason=reason)
        return Verdict("ask", question=question, reason=reason)

    def questions_due(
        self, calls: Sequence[Mapping[str, Any]], recorded: Mapping[str, Recorded]
    ) -> list[dict[str, Any]]:
        """The questions to ask now about `calls` (those of a message not answered yet, in
        order): each call that needs one, up to the first call that will run first without
        a question and may change what the calls after it do (a write_file of the script a
        later command runs). Those after it are asked when they are about to run, as they
        will be then, not twice."""
        questions = []
        for call in calls:
            verdict = self.verdict(call, recorded.get(str(call.get("id") or "")))
            if verdict.question is not None:
                questions.append(verdict.question)
            elif verdict.kind == "run" and not self.independent(call):
                break
        return questions

    def independent(self, call: Mapping[str, Any]) -> bool:
        """Whether nothing a sibling call does can change this call's judgement, so the
        calls after it can be asked about now (`questions_due`): a tool without an approval
        rule, or approved by name (unless the call could write the folder's configuration),
        or one whose rule reads only its arguments. Text-storing tools wait for the calls
        before them. (Which calls run side by side is `footprint`'s.)"""
        name = str(call.get("name") or "")
        tool = self.tools.get(name)
        if tool is None or (self.only is not None and name not in self.only):
            return True
        if name in STORES_TEXT:
            return False
        if not has_approval_rule(tool) or name in RULE_FROM_ARGUMENTS:
            return True
        by_name = name in self.policy.auto_approved or name in self.approved
        return by_name and not callable((tool.metadata or {}).get(CONFIGURATION_CHECK))

    def footprint(self, call: Mapping[str, Any]) -> Footprint:
        """What `call` may read and change, as the files are now (module docstring). A tool
        declares the one file it changes or reads (`CHANGES_FILE`, `READS_FILE`); without
        that, a tool without an approval rule (or one that reads only its arguments) may
        read anything, and any other may touch anything. A path that cannot be resolved
        now touches anything: it may be a file a sibling is about to make."""
        name = str(call.get("name") or "")
        tool = self.tools.get(name)
        if tool is None or (self.only is not None and name not in self.only):
            return TOUCHES_NOTHING
        if name in STORES_TEXT:
            return TOUCHES_ANYTHING
        metadata = tool.metadata or {}
        args = call.get("args") or {}
        for declared, changes in ((CHANGES_FILE, True), (READS_FILE, False)):
            argument = metadata.get(declared)
            if not argument:
                continue
            keys = file_keys(args.get(argument), self.context, for_writing=changes)
            if keys is None:
                return TOUCHES_ANYTHING
            return Footprint(changes=keys) if changes else Footprint(reads=keys)
        if not has_approval_rule(tool) or name in RULE_FROM_ARGUMENTS:
            return READS_ANYTHING
        return TOUCHES_ANYTHING


def has_approval_rule(tool: BaseTool) -> bool:
    """Whether the tool declares an approval rule at all (tools/approval.py): a tool without
    one never needs approval, whatever its arguments."""
    rule = (tool.metadata or {}).get(NEEDS_APPROVAL)
    return rule is True or callable(rule)


def approval_question(
    call: Mapping[str, Any], tool: BaseTool, reason: Reason, context: CallContext
) -> dict[str, Any]:
    """What the user is shown about one call, and `shown`: its digest (module docstring)."""
    args = call.get("args") or {}
    metadata = tool.metadata or {}
    files: list[dict[str, Any]] = []
    preview = metadata.get(FILES_RUN)
    if callable(preview):
        try:
            files = [dataclasses.asdict(p) for p in preview(args, context)]
        except Exception:  # what is shown must never stop the question being asked
            files = []
    question: dict[str, Any] = {
        "call_id": str(call.get("id") or ""),
        "tool": tool.name,
        "args": args,
        "reason": reason.text,
        # For the terminal, which words the reason in the UI language.
        "reason_template": reason.template,
        "reason_fields": dict(reason.fields),
        **({"diff": reason.diff} if reason.diff else {}),
        "command_args": list(metadata.get(COMMAND_ARGS) or ()),
        "files": [{k: v for k, v in f.items() if k != "digest"} for f in files],
        # A write to the folder's configuration: answered for this call only.
        "configuration": reason.configuration,
        # tools.yaml's risk: how the question is shown (red with a warning when high).
        "risk": str(metadata.get(RISK, "medium")),
    }
    seen = {
        "tool": tool.name,
        "args": args,
        "reason": reason.text,
        "diff": reason.diff,
        "basis": reason.basis,
        "files": files,
    }
    encoded = json.dumps(seen, sort_keys=True, ensure_ascii=False, default=str)
    question["shown"] = hashlib.sha256(encoded.encode("utf-8", errors="surrogatepass")).hexdigest()
    return question


def decision_of(answer: Any, question: Mapping[str, Any]) -> Recorded:
    """A person's answer for one question, recorded with the digest of what they saw.

    An answer is a decision, or `{"decision", "shown"}` from a front end that echoes what
    it showed (the question may have been judged again when the step resumed: a yes is
    bound to what the person saw, not to the file as it is now). Anything unexpected is no;
    a configuration write is approved for this call only."""
    call_id = str(question.get("call_id") or "")
    value = answer.get(call_id) if isinstance(answer, Mapping) else answer
    shown = str(question.get("shown") or "")
    if isinstance(value, Mapping):
        shown = str(value.get("shown") or shown)
        value = value.get("decision")
    decision = value if value in DECISIONS else NO
    if question.get("configuration") and decision in (ALWAYS, KEEP):
        decision = YES
    return Recorded(decision, shown)


def tools_kept(questions: Collection[Mapping[str, Any]], decisions: Mapping[str, Recorded]) -> list[str]:
    """The tools the user chose to keep approving in this session ("keep")."""
    return sorted(
        {
            str(q["tool"])
            for q in questions
            if not q.get("configuration") and decisions[str(q["call_id"])].decision == KEEP
        }
    )
