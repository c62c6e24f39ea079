"""Answering the graph's approval step: one question per call, shown whole and as it will run.

The approval step pauses a turn once for all the calls of a model message that need the
user (graph/nodes/approval.py); `answer_approval` asks about each and returns the answers
by call id. "always" is remembered by the running process only (the `remembered` set, sent
with every run's config); "keep" is also stored with the session by the graph, so it holds
when the session is resumed. A call of a tool already approved "always" is not asked again.

Everything shown comes from the model, so it goes through `visible_controls`: an escape
sequence in a command cannot redraw the question, it is shown as what it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, MutableSet
from typing import Any

from rich.console import Console
from rich.markup import escape

from generalAgent.cli.i18n import N_, _
from generalAgent.cli.terminal_text import visible_controls
from generalAgent.tools.approval import ALWAYS, KEEP, NO, YES

ANSWERS = {
    "y": YES,
    "yes": YES,
    "n": NO,
    "no": NO,
    "": NO,
    "a": ALWAYS,
    "always": ALWAYS,
    "k": KEEP,
    "keep": KEEP,
}
# A value longer than this (a whole file to write) is shown in part, saying how much is hidden.
SHOWN_CHARS = 20_000

QUESTION = N_("Approve {tool}?")
POSITION = N_("({number} of {total})")
# The default (Enter) is no: a capital N says so, as [y/N] does in shells.
CHOICES = N_("[y]es / [N]o (Enter) / [a]lways until you quit / [k]eep approving in this session: ")
HIDDEN = N_("… {count} more characters not shown (answer n if you are unsure)")
CANNOT_ASK = N_("{tool} needs approval ({reason}) but this run cannot ask; refused.")

Approver = Callable[[dict[str, Any]], str]


def answer_approval(payload: Any, approve: Approver, remembered: MutableSet[str]) -> dict[str, str]:
    """The answers to one approval pause, by call id (see the module docstring)."""
    requests = payload.get("requests", []) if isinstance(payload, dict) else []
    answers: dict[str, str] = {}
    for number, request in enumerate(requests, start=1):
        tool = str(request.get("tool", ""))
        if tool in remembered:
            answers[request["call_id"]] = ALWAYS
            continue
        answer = approve({**request, "number": number, "of": len(requests)})
        if answer in (ALWAYS, KEEP):
            remembered.add(tool)
        answers[request["call_id"]] = answer
    return answers


def ask_in_terminal(console: Console, request: dict[str, Any]) -> str:
    """The chat's question for one call: the tool, why it asks, every argument in full."""
    of = request.get("of", 1)
    position = _(POSITION).format(number=request.get("number", 1), total=of) + " " if of > 1 else ""
    question = _(QUESTION).format(tool=visible_controls(str(request.get("tool", "tool"))))
    reason = visible_controls(reason_shown(request))
    console.print(f"[bold yellow]{escape(question)}[/] [dim]{escape(position + reason)}[/]")
    diff = request.get("diff")
    if isinstance(diff, str) and diff:
        print_diff(console, diff)
    for key, value in (request.get("args") or {}).items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        shown = visible_controls(text[:SHOWN_CHARS])
        console.print(f"  [dim]{escape(visible_controls(str(key)))}:[/] {escape(shown)}", highlight=False)
        if len(text) > SHOWN_CHARS:
            console.print(f"[dim]  {escape(_(HIDDEN).format(count=f'{len(text) - SHOWN_CHARS:,}'))}[/]")
    while True:
        answer = console.input(f"[bold]  {escape(_(CHOICES))}[/]").strip().lower()
        if answer in ANSWERS:
            return ANSWERS[answer]


# A diff line's colour by its first character (a unified diff: headers, hunks, - and +).
DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def print_diff(console: Console, diff: str) -> None:
    """The change a call would make, one line each, coloured; controls shown, not obeyed."""
    for line in diff.splitlines():
        style = next((s for prefix, s in DIFF_STYLES if line.startswith(prefix)), "")
        text = escape(visible_controls(line))
        console.print(f"  [{style}]{text}[/]" if style else f"  {text}", highlight=False)


def refuse_without_asking(console: Console, request: dict[str, Any]) -> str:
    """`-p` and other runs nobody can answer: say so, and refuse."""
    refused = _(CANNOT_ASK).format(
        tool=visible_controls(str(request.get("tool", "tool"))),
        reason=visible_controls(reason_shown(request)),
    )
    console.print(f"[yellow]{escape(refused)}[/]")
    return NO


def reason_shown(request: dict[str, Any]) -> str:
    """The approval reason in the UI language (the tool's template translated, then filled);
    the English text when the request carries no template."""
    template = request.get("reason_template")
    fields = request.get("reason_fields")
    if isinstance(template, str) and isinstance(fields, dict):
        try:
            return _(template).format(**fields)
        except (KeyError, IndexError, ValueError):
            pass  # a catalog entry that does not fit: the English says the same
    return str(request.get("reason", ""))
