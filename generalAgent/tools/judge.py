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
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from generalAgent.display import N_, Message
from generalAgent.tools.approval import (
    ALWAYS,
    COMMAND_ARGS,
    CONFIGURATION_CHECK,
    DECISIONS,
    FILES_RUN,
    KEEP,
    NEEDS_APPROVAL,
    NO,
    OUTSIDE_ONLY_TOOLS,
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
# files a sibling call could change: their calls run side by side with their neighbours.
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
        """Whether nothing a sibling call does can change this call's judgement, so it may
        run side by side with its neighbours: a tool without an approval rule, or approved
        by name (unless the call could write the folder's configuration), or one whose rule
        reads only its arguments. Text-storing tools wait for the calls before them."""
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
