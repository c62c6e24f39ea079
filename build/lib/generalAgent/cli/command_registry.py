"""Slash commands as frozen records: name, aliases, argument hint, description, handler.

One registry holds the built-in commands (cli/chat.py) and the user's own
(cli/custom_commands.py); the chat dispatches through it, /help and Tab completion list
from it. A record's handler takes the chat and the text after the command; returning False
ends the chat. After langchain-ai/deepagents' command_registry.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from generalAgent.i18n import _


class MenuEntry(NamedTuple):
    """One command as /help and the Tab menu show it, in the UI language."""

    name: str  # what is typed (and what Tab inserts): /resume
    argument_hint: str  # what may follow it: [ID]; "" when nothing does
    description: str

    @property
    def usage(self) -> str:
        """The command as it is typed: `/resume [ID]`."""
        return f"{self.name} {self.argument_hint}" if self.argument_hint else self.name


@dataclass(frozen=True)
class SlashCommand:
    name: str  # with the slash: /help, /review:pdf
    description: str  # an N_ template for a built-in; the user's own words for theirs
    handler: Callable[[Any, str], Any]  # (chat, argument) -> False to leave
    aliases: tuple[str, ...] = ()
    # What may follow the name: TITLE, [ID] (brackets: optional). An N_ template for a
    # built-in, since its words are translated as the description names them; the user's
    # own words for theirs (`argument-hint` in the command's front matter).
    argument_hint: str = ""
    builtin: bool = True  # a built-in's description and hint go through the catalog

    def entry(self) -> MenuEntry:
        """The command in the UI language, for /help and Tab completion."""

        def shown(text: str) -> str:
            return _(text) if self.builtin and text else text

        return MenuEntry(self.name, shown(self.argument_hint), shown(self.description))


class CommandRegistry:
    def __init__(self, commands: Iterable[SlashCommand]) -> None:
        self.commands = tuple(commands)
        self._by_name: dict[str, SlashCommand] = {}
        for command in self.commands:
            for name in (command.name, *command.aliases):
                # Built-ins are case-insensitive (/HELP); the user's keep their case (/总结).
                self._by_name.setdefault(name.lower() if command.builtin else name, command)

    def find(self, name: str) -> SlashCommand | None:
        return self._by_name.get(name) or self._by_name.get(name.lower())

    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    def menu(self) -> list[MenuEntry]:
        """Each command's name, argument hint and description, for /help and Tab completion."""
        return [command.entry() for command in self.commands]
