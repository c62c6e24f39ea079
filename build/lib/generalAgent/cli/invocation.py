"""How the user started this command and what its words mean: hints we print name the
command as it was typed; a first word that is no sub-command is the chat's first message.

`make run` starts `.venv/bin/generalagent`, which is not on PATH: a hint that says
`generalagent --resume ID` would fail there. The hint names the command the way it was
run: `generalagent` when that is what PATH finds, else the path that was used, or
`python -m generalAgent`.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

COMMAND = "generalagent"


def command_hint(argv0: str | None = None) -> str:
    """What to type to run this command again from the current folder."""
    started = argv0 if argv0 is not None else sys.argv[0]
    if not started or started.endswith(("__main__.py", "-c")) or Path(started).name == "__main__.py":
        return "python -m generalAgent"
    found = shutil.which(COMMAND)
    if found and Path(started).name == COMMAND and _same_file(found, started):
        return COMMAND
    shown = Path(started)
    if not shown.is_absolute() and shown.parent == Path("."):
        return f"./{shown}"
    try:
        relative = os.path.relpath(Path(started).resolve(), Path.cwd())
    except ValueError:  # another drive on Windows
        return str(Path(started).resolve())
    return relative if not relative.startswith("..") else str(Path(started).resolve())


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def first_message_argv(argv: list[str], command: Any) -> list[str]:
    """`generalagent "question"` as `generalagent --message "question"`: the first word that
    is neither an option, an option's value nor a sub-command is the chat's first message.

    `command` is the click group of the app: its options say which ones take a value, its
    sub-commands which words are commands (`generalagent index …` stays a command). After
    `--` the next word is the message whatever it looks like (`generalagent -- "-v?"`).
    """
    takes_value = {
        name
        for param in getattr(command, "params", [])
        if not getattr(param, "is_flag", False) and not getattr(param, "count", False)
        for name in (*getattr(param, "opts", []), *getattr(param, "secondary_opts", []))
    }
    commands = set(getattr(command, "commands", {}))
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            if index + 1 < len(argv):
                return [*argv[:index], "--message", argv[index + 1], *argv[index + 2 :]]
            return argv
        if arg.startswith("-") and len(arg) > 1:
            index += 2 if arg in takes_value else 1
            continue
        if arg in commands:
            return argv
        return [*argv[:index], "--message", arg, *argv[index + 1 :]]
    return argv


def split_tool_names(values: list[str]) -> tuple[str, ...]:
    """`--allowed-tools a,b --allowed-tools "c d"` as ("a", "b", "c", "d"), each once."""
    names = [name for value in values for name in value.replace(",", " ").split()]
    return tuple(dict.fromkeys(names))
