"""Answering the graph's approval step: one question per call, shown whole and as it will run.

The approval step pauses a turn once for all the calls of a model message that need the
user (graph/nodes/approval.py); the engine's `answer_approval` (agent/turns.py) asks
about each with `ask_in_terminal` and returns the answers by call id. "always" is
remembered by the running process only (the `remembered` set, sent with every run's
context); "keep" is also stored with the session by the graph, so it holds
when the session is resumed. A call of a tool already approved "always" is not asked again.

Everything shown comes from the model, so it goes through `visible_controls`: an escape
sequence in a command cannot redraw the question, it is shown as what it is. Nor can
layout hide part of a value: zero-width and other invisible characters are shown as
marks, long runs of blanks and of empty lines as a count (60 newlines cannot push the
start of a command above the screen), and a command (the tool names its command
arguments) is shown whole, never cut, every newline as ␊; when it is long, its
start is repeated next to the question. A script of the session the command runs
(`bash temp/x.sh`) is shown too: its size and first lines. A write to the folder's own
configuration (`.generalagent/`, `.git/`, `.env`, `mcp.json`, AGENTS.md) is a question of
its own, answered yes or no for that call only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.markup import escape

from generalAgent.cli.terminal_text import typed_answer, visible_controls
from generalAgent.i18n import N_, _
from generalAgent.tools.approval import ALWAYS, KEEP, NO, SHOWN_BY_DIFF, YES, diff_is_whole

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
    # What a Chinese input method types for the same answers (full-width letters are folded
    # by NFKC before the lookup: `ｙ` is `y`).
    "是": YES,
    "好": YES,
    "否": NO,
    "不": NO,
}
# A value longer than this (a whole file to write) is shown in part, saying how much is
# hidden; never a command, which is shown whole.
SHOWN_CHARS = 20_000
# A command longer than this has its start repeated beside the question.
LONG_COMMAND = 400
COMMAND_START = 160
NEWLINE_MARK = "␊"
# Characters that take no room on screen (zero-width spaces and joiners, word joiners,
# invisible operators, line and paragraph separators, BOM, Hangul fillers, tag characters).
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028\u2029"
    "\u2060-\u2064\u206a-\u206f\u3164\ufeff\uffa0\U000e0000-\U000e007f]"
)
# Runs that push text off the screen: blanks, and more than two empty lines in a row.
_BLANK_RUN = re.compile(r"[ \t]{16,}")
_EMPTY_LINES = re.compile(r"\n(?:[ \t]*\n){3,}")

QUESTION = N_("Approve {tool}?")
# The question's colour by the tool's risk in tools.yaml; a high-risk tool also says why to look twice.
RISK_STYLES = {"low": "bold", "medium": "bold yellow", "high": "bold red"}
HIGH_RISK = N_("{tool} is marked high risk (tools.yaml): read every argument before you answer.")
POSITION = N_("({number} of {total})")
# The default (Enter) is no: a capital N says so, as [y/N] does in shells.
CHOICES = N_("[y]es / [N]o (Enter) / [a]lways until you quit / [k]eep approving in this session: ")
# A write to the folder's own configuration: asked every time, for this call only.
CONFIGURATION_CHOICES = N_("[y]es, this change only / [N]o (Enter): ")
CONFIGURATION_WARNING = N_(
    "This changes the folder's own configuration: it can run commands the next time generalAgent "
    "or git starts here, without asking. It cannot be approved for later calls."
)
HIDDEN = N_("… {count} more characters not shown (answer n if you are unsure)")
CANNOT_ASK = N_("{tool} needs approval ({reason}) but this run cannot ask; refused.")
BLANKS = N_("⟨{count} blanks⟩")
EMPTY_LINES = N_("⟨{count} empty lines⟩")
LONG_COMMAND_START = N_("(the command above is {count} characters long; it begins: {start})")
RUNS_FILE = N_("runs {path} ({size} bytes), as it is now; it begins:")
FILE_GOES_ON = N_("… and goes on (answer n if you are unsure)")
IN_THE_DIFF = N_("({count} characters, shown in the diff above)")


def ask_in_terminal(console: Console, request: dict[str, Any]) -> str:
    """The chat's question for one call: the tool, why it asks, every argument in full."""
    of = request.get("of", 1)
    position = _(POSITION).format(number=request.get("number", 1), total=of) + " " if of > 1 else ""
    question = _(QUESTION).format(tool=visible_controls(str(request.get("tool", "tool"))))
    reason = visible_controls(reason_shown(request))
    style = RISK_STYLES.get(str(request.get("risk")), RISK_STYLES["medium"])
    console.print(f"[{style}]{escape(question)}[/] [dim]{escape(position + reason)}[/]")
    if request.get("risk") == "high":
        tool = visible_controls(str(request.get("tool", "tool")))
        console.print(f"  [bold red]{escape(_(HIGH_RISK).format(tool=tool))}[/]", highlight=False)
    commands = set(request.get("command_args") or ())
    diff = request.get("diff")
    in_diff: frozenset[str] = frozenset()
    if isinstance(diff, str) and diff:
        print_diff(console, diff)
        in_diff = SHOWN_BY_DIFF if diff_is_whole(diff) else frozenset()
    for key, value in (request.get("args") or {}).items():
        if key in in_diff and isinstance(value, str):  # the diff above shows it, in full
            note = _(IN_THE_DIFF).format(count=f"{len(value):,}")
            console.print(f"  [dim]{escape(visible_controls(str(key)))}: {escape(note)}[/]", highlight=False)
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        command = key in commands
        cut = not command and len(text) > SHOWN_CHARS
        shown = shown_value(text[:SHOWN_CHARS] if cut else text, command=command)
        console.print(f"  [dim]{escape(visible_controls(str(key)))}:[/] {escape(shown)}", highlight=False)
        if cut:
            console.print(f"[dim]  {escape(_(HIDDEN).format(count=f'{len(text) - SHOWN_CHARS:,}'))}[/]")
    for preview in request.get("files") or ():
        show_file_preview(console, preview)
    for key, value in (request.get("args") or {}).items():
        if key in commands and isinstance(value, str) and len(value) > LONG_COMMAND:
            start = shown_value(value[:COMMAND_START], command=True)
            note = _(LONG_COMMAND_START).format(count=f"{len(value):,}", start=start)
            console.print(f"  [bold yellow]{escape(note)}[/]", highlight=False)
    if request.get("configuration"):
        console.print(f"  [bold red]{escape(_(CONFIGURATION_WARNING))}[/]", highlight=False)
        while True:
            answer = ANSWERS.get(
                typed_answer(console.input(f"[bold]  {escape(_(CONFIGURATION_CHOICES))}[/]"))
            )
            if answer in (YES, NO):
                return answer
            console.print("  [yellow]" + escape(_("Answer y or n.")) + "[/]")
    while True:
        typed = console.input(f"[bold]  {escape(_(CHOICES))}[/]")
        answer = typed_answer(typed)
        if answer in ANSWERS:
            return ANSWERS[answer]
        console.print("  [yellow]" + escape(_("Answer y, n, a or k.")) + "[/]")


# A diff line's colour by its first character (a unified diff: headers, hunks, - and +).
DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def print_diff(console: Console, diff: str) -> None:
    """The change a call would make, one line each, coloured; controls shown, not obeyed."""
    for line in diff.splitlines():
        style = next((s for prefix, s in DIFF_STYLES if line.startswith(prefix)), "")
        text = escape(shown_value(line))
        console.print(f"  [{style}]{text}[/]" if style else f"  {text}", highlight=False)


def shown_value(text: str, *, command: bool = False) -> str:
    """`text` as the question shows it: controls and invisible characters as marks, long
    runs of blanks and empty lines as counts, and for a command every newline as ␊."""
    text = _INVISIBLE.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", visible_controls(text))
    text = _BLANK_RUN.sub(lambda m: _(BLANKS).format(count=len(m.group(0))), text)
    text = _EMPTY_LINES.sub(
        lambda m: "\n" + _(EMPTY_LINES).format(count=m.group(0).count("\n") - 1) + "\n", text
    )
    return text.replace("\n", NEWLINE_MARK) if command else text


def show_file_preview(console: Console, preview: Any) -> None:
    """A file the call runs: its path, size and first lines, numbered."""
    if not isinstance(preview, dict):
        return
    size = preview.get("size", 0)
    title = _(RUNS_FILE).format(path=visible_controls(str(preview.get("path", "?"))), size=f"{size:,}")
    console.print(f"  [bold yellow]{escape(title)}[/]", highlight=False)
    for number, line in enumerate(str(preview.get("head", "")).split("\n"), start=1):
        console.print(f"  [dim]{number:>3} │[/] {escape(shown_value(line))}", highlight=False)
    if not preview.get("complete", True):
        console.print(f"  [dim]{escape(_(FILE_GOES_ON))}[/]")


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
