"""Tab completion in the chat: `/` commands, `@` tools, skills and agents, `#` file paths.

Completion looks at the word under the cursor (from the last whitespace), so it works
inside Chinese sentences written without spaces (`总结#报` completes to `总结#报告.pdf`).
Names come from a callable, because the agent's tools load in the background: before they
are loaded, `@` completes nothing rather than waiting. Paths are listed relative to the
current folder, at most MAX_PATHS per key press, hidden files only when asked for with a
leading dot; a name with a space is completed in quotes (`#"my report.pdf"`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from generalAgent.cli.command_registry import MenuEntry
from generalAgent.i18n import N_, _

MAX_PATHS = 200


# What a mentionable name is, as the Tab menu says it.
NAME_KINDS = {"tool": N_("tool"), "skill": N_("skill"), "agent": N_("agent"), "server": N_("server")}


@dataclass(frozen=True)
class Name:
    """Something that can be @mentioned, with what it is (shown beside it in the menu)."""

    name: str
    kind: str  # tool | skill | agent | server (NAME_KINDS)
    description: str = ""


class ChatCompleter(Completer):
    def __init__(
        self,
        commands: Sequence[MenuEntry],
        names: Callable[[], Iterable[Name]],
        cwd: Callable[[], Path] = Path.cwd,
    ) -> None:
        self.commands = list(commands)
        self.names = names
        self.cwd = cwd

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        if not before or before[-1].isspace():
            return
        word = before.split()[-1]
        if before.lstrip() == word and word.startswith("/"):
            yield from self._commands(word)
            return
        marker = max(word.rfind("@"), word.rfind("#"))
        if marker < 0:
            return
        prefix = word[marker + 1 :]
        if word[marker] == "@":
            if marker > 0 and (word[marker - 1].isascii() and word[marker - 1].isalnum()):
                return  # user@example.com is an address, not a mention
            yield from self._mentions(prefix)
        else:
            yield from self._paths(prefix)

    def _commands(self, word: str) -> Iterator[Completion]:
        for command in self.commands:
            if command.name.lower().startswith(word.lower()):
                # The menu shows how it is typed (`/resume [ID]`); Tab inserts the name.
                yield Completion(
                    command.name,
                    start_position=-len(word),
                    display=command.usage,
                    display_meta=command.description,
                )

    def _mentions(self, prefix: str) -> Iterator[Completion]:
        for entry in sorted(self.names(), key=lambda n: n.name):
            if entry.name.lower().startswith(prefix.lower()):
                kind = _(NAME_KINDS.get(entry.kind, entry.kind))
                meta = _("{kind}: {description}").format(kind=kind, description=entry.description)
                meta = meta if entry.description else kind
                yield Completion(entry.name, start_position=-len(prefix), display_meta=meta)

    def _paths(self, prefix: str) -> Iterator[Completion]:
        typed = prefix.lstrip("\"'")
        quoted = typed != prefix
        folder_part, _, name_part = typed.rpartition("/")
        base = Path(folder_part).expanduser() if folder_part else Path()
        folder = base if base.is_absolute() else self.cwd() / base
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            hidden = entry.name.startswith(".") and not name_part.startswith(".")
            if hidden or not entry.name.startswith(name_part):
                continue
            try:
                is_folder = entry.is_dir()
            except OSError:
                continue
            path = f"{folder_part}/{entry.name}" if folder_part else entry.name
            text = path + ("/" if is_folder else "")
            if quoted or " " in path:
                text = f'"{path}' + ("/" if is_folder else '"')
            yield Completion(
                text, start_position=-len(prefix), display=entry.name + ("/" if is_folder else "")
            )
            shown += 1
            if shown >= MAX_PATHS:
                return
