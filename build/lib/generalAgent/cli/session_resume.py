"""Picking a session up again: the picker `--resume` opens, and the recap of its last turns.

`--resume` without an id (and `/resume` alone) lists the recent sessions, newest first, one
line each (when, turns, the folder it was started in, its first message); the arrow keys
choose, Enter resumes, Esc starts a new session instead. Once resumed, the chat shows the
last few turns (what was asked, the start of the answer), so the user sees where they left
off. Titles, folders and answers are stored text (from the user and the model): they
reach the terminal through `terminal_safe`, on one line each in the picker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from generalAgent.cli.terminal_text import terminal_safe
from generalAgent.i18n import _, ngettext
from generalAgent.sessions import SessionInfo

PICKER_SESSIONS = 20
RECAP_TURNS = 3
# A recap shows where the conversation stood, not the whole answer.
RECAP_QUESTION_LINES = 2
RECAP_ANSWER_LINES = 4
RECAP_LINE_CHARS = 160
PICKER_TITLE_CHARS = 60


def picker_line(info: SessionInfo, folder: str | None = None) -> str:
    """One session in the picker: when, turns, its first message, and where."""
    turns = ngettext("{count} turn", "{count} turns", info.turns).format(count=info.turns)
    where = _home_relative(folder) if folder else ""
    # The first message before the folder: it is what the user recognises, and a long path
    # must not push it past the terminal's edge.
    title = (
        info.title if len(info.title) <= PICKER_TITLE_CHARS else info.title[: PICKER_TITLE_CHARS - 1] + "…"
    )
    parts = [info.id, f"{info.age():>8}", f"{turns:>9}", title, where]
    return terminal_safe("  ".join(part for part in parts if part)).replace("\n", " ").replace("\t", " ")


def _home_relative(folder: str) -> str:
    path = Path(folder)
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return folder


def pick_session(
    sessions: Sequence[SessionInfo], folder_of: Callable[[SessionInfo], str | None] = lambda info: None
) -> SessionInfo | None:
    """The session chosen with the arrow keys and Enter; None for Esc, Ctrl-C or Ctrl-D."""
    lines = [picker_line(info, folder_of(info)) for info in sessions]
    header = _("Resume which session? ↑/↓ choose · Enter resumes · Esc starts a new one")
    chosen = pick_line(lines, header)
    return None if chosen is None else sessions[chosen]


def pick_line(lines: Sequence[str], header: str) -> int | None:
    """The index of the line chosen with the arrow keys and Enter, below `header`; None for
    Esc, Ctrl-C or Ctrl-D. The lines must already be safe for the terminal, one line each.
    The session picker and /rewind's (cli/rewind.py) are this one."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    chosen = [0]

    def shown() -> StyleAndTextTuples:
        fragments: StyleAndTextTuples = [("bold", header + "\n")]
        for index, line in enumerate(lines):
            if index == chosen[0]:
                fragments.append(("reverse", "▸ " + line + "\n"))
            else:
                fragments.append(("", "  " + line + "\n"))
        return fragments

    keys = KeyBindings()

    @keys.add("up")
    @keys.add("c-p")
    def _up(event: Any) -> None:
        chosen[0] = max(0, chosen[0] - 1)

    @keys.add("down")
    @keys.add("c-n")
    def _down(event: Any) -> None:
        chosen[0] = min(len(lines) - 1, chosen[0] + 1)

    @keys.add("enter")
    def _pick(event: Any) -> None:
        event.app.exit(result=chosen[0])

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    @keys.add("c-d")
    def _leave(event: Any) -> None:
        event.app.exit(result=None)

    window = Window(FormattedTextControl(shown), wrap_lines=False, dont_extend_height=True)
    app: Application[int | None] = Application(
        layout=Layout(window), key_bindings=keys, full_screen=False, erase_when_done=True
    )
    return app.run()


def last_turns(messages: Sequence[Any], count: int = RECAP_TURNS) -> list[tuple[str, str]]:
    """(question, answer) of the last `count` turns: each human message and the last text an
    AI message gave before the next one ("" when the turn has no answer, e.g. cancelled)."""
    turns: list[tuple[str, str]] = []
    for message in messages:
        kind = getattr(message, "type", "")
        if kind == "human":
            turns.append((_text(message), ""))
        elif kind == "ai" and turns and _text(message).strip():
            turns[-1] = (turns[-1][0], _text(message))
    return turns[-count:]


def _text(message: Any) -> str:
    text = getattr(message, "text", "")
    return text if isinstance(text, str) else str(message.content)


def _clip(text: str, lines: int) -> str:
    kept = [line[:RECAP_LINE_CHARS] for line in text.strip().splitlines() if line.strip()]
    clipped = "\n".join(kept[:lines])
    return clipped + ("\n…" if len(kept) > lines else "")


def show_recap(console: Console, turns: Sequence[tuple[str, str]]) -> None:
    """The last turns of a resumed session, dim, before the prompt."""
    if not turns:
        return
    console.print("[dim]" + _("Where you left off:") + "[/]")
    for question, answer in turns:
        console.print(Text("› " + terminal_safe(_clip(question, RECAP_QUESTION_LINES)), style="bold"))
        shown = _clip(answer, RECAP_ANSWER_LINES) if answer else _("(no answer)")
        console.print(Text(terminal_safe(shown), style="dim"))
