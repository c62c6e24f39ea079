"""Slash commands as frozen records: name, aliases, argument hint, description, handler.

One registry holds the built-in commands (cli/chat.py) and the user's own
(cli/custom_commands.py); the chat dispatches through it, /help and Tab completion list
from it. A record's handler takes the chat and the text after the command; returning False
ends the chat. After langchain-ai/deepagents' command_registry.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from generalAgent.i18n import _


@dataclass(frozen=True)
class SlashCommand:
    name: str  # with the slash: /help, /review:pdf
    description: str  # an N_ template for a built-in; the user's own words for theirs
    handler: Callable[[Any, str], Any]  # (chat, argument) -> False to leave
    aliases: tuple[str, ...] = ()
    argument_hint: str = ""
    builtin: bool = True  # a built-in's description goes through the catalog

    def described(self) -> str:
        """The description in the UI language, with the argument hint in front."""
        text = _(self.description) if self.builtin and self.description else self.description
        return f"{self.argument_hint}: {text}" if self.argument_hint and text else text or self.argument_hint


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

    def menu(self) -> list[tuple[str, str]]:
        """(name, description) per command, for /help and Tab completion."""
        return [(command.name, command.described()) for command in self.commands]
