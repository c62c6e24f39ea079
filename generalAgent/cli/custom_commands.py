"""The user's own slash commands: Markdown prompt templates, as other terminal agents read them.

`commands/<name>.md` in the user-level config folder and, for a folder the user trusts,
`.generalagent/commands/<name>.md` in it. A sub-folder gives a namespace (`review/pdf.md`
is `/review:pdf`). The optional front matter says what the command is (`description`,
`argument-hint`), which model its turn uses (`model`) and which tools it makes available
(`allowed-tools`, as if @mentioned: a call that asks still asks). The body is the text
sent: `$ARGUMENTS` is what followed the command, `$1`…`$9` its words (a "quoted phrase"
is one word); the result is then handled exactly as a typed line, so `#file` references
and `@mentions` in it work.

A built-in command keeps its name; the user's command wins over a folder's of the same
name (a folder cannot redefine what the user's own command does). Files are read only when
they stay inside their folder (no link out), at most MAX_COMMANDS of them, each at most
MAX_BYTES.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from generalAgent.config.confined import LeavesFolder, read_confined_text
from generalAgent.config.trust import FolderTrust
from generalAgent.display import N_, Message, carrying, said_of_error
from generalAgent.front_matter import FrontMatterError, split_front_matter

COMMANDS_FOLDER = "commands"
FOLDER_CONFIG = ".generalagent"
MAX_COMMANDS = 500
MAX_BYTES = 100_000
MAX_DEPTH = 3  # namespace levels: review/pdf.md, team/review/pdf.md
NAME = re.compile(r"[^\s/:#@\"'`\\]+")  # a command word: no spaces and none of the chat's markers
POSITIONAL = re.compile(r"\$(ARGUMENTS|[1-9])")


@dataclass(frozen=True)
class CustomCommand:
    name: str  # with the slash: /review:pdf
    path: Path
    body: str
    description: str = ""
    argument_hint: str = ""
    model: str = ""
    allowed_tools: tuple[str, ...] = ()
    scope: str = "user"  # "user" or "folder"

    def expand(self, arguments: str) -> str:
        """The body with `$ARGUMENTS` and `$1`…`$9` replaced; with neither in the body and
        arguments given, they are appended on a line of their own (nothing typed is lost)."""
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unclosed quote: plain words
            words = arguments.split()

        def value(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "ARGUMENTS":
                return arguments
            index = int(key) - 1
            return words[index] if index < len(words) else ""

        text = POSITIONAL.sub(value, self.body).strip()
        if arguments and not POSITIONAL.search(self.body):
            text = f"{text}\n\n{arguments}"
        return text


@dataclass(frozen=True)
class CustomCommands:
    commands: tuple[CustomCommand, ...] = ()
    problems: tuple[Message, ...] = ()  # one line per file not read (with the path)


def load_custom_commands(
    user_config: Path, trust: FolderTrust, cwd: Path, reserved: frozenset[str] = frozenset()
) -> CustomCommands:
    """The user's commands, then the folder's (only when trusted); `reserved` are built-in names."""
    found: dict[str, CustomCommand] = {}
    problems: list[Message] = []
    roots = [(user_config / COMMANDS_FOLDER, "user")]
    if trust.covers(cwd):
        roots.append((cwd / FOLDER_CONFIG / COMMANDS_FOLDER, "folder"))
    for root, scope in roots:
        for path in _markdown_files(root):
            if len(found) >= MAX_COMMANDS:
                problems.append(
                    Message(
                        N_("{path}: more than {count} commands; the rest are not read"),
                        {"path": str(root), "count": str(MAX_COMMANDS)},
                    )
                )
                break
            parts = path.relative_to(root).with_suffix("").parts
            name = "/" + ":".join(parts)
            if not all(NAME.fullmatch(part) for part in parts):
                problems.append(
                    Message(
                        N_("{path}: not a command name (no spaces, quotes or / : # @)"), {"path": str(path)}
                    )
                )
                continue
            if name.lower() in reserved or name in found:
                if name.lower() in reserved:
                    problems.append(
                        Message(
                            N_("{path}: {name} is a built-in command; this file is not used"),
                            {"path": str(path), "name": name},
                        )
                    )
                continue
            try:
                command = _read(path, root, name, scope)
            except LeavesFolder as exc:  # an OSError whose sentence names the path itself
                problems.append(Message(N_("{problem}"), {"problem": said_of_error(exc)}))
                continue
            except (OSError, UnicodeDecodeError, FrontMatterError) as exc:
                problem = said_of_error(exc)
                problems.append(Message(N_("{path}: {problem}"), {"path": str(path), "problem": problem}))
                continue
            found[name] = command
    return CustomCommands(tuple(found.values()), tuple(problems))


def _markdown_files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    files: list[Path] = []
    for folder, subfolders, names in os.walk(root):  # links to folders are not followed
        depth = len(Path(folder).relative_to(root).parts)
        subfolders[:] = (
            sorted(s for s in subfolders if not s.startswith(".")) if depth < MAX_DEPTH - 1 else []
        )
        files += [Path(folder) / n for n in sorted(names) if n.endswith(".md") and not n.startswith(".")]
    return files


def _read(path: Path, root: Path, name: str, scope: str) -> CustomCommand:
    if path.stat().st_size > MAX_BYTES:
        raise carrying(OSError, Message(N_("larger than {limit} bytes"), {"limit": f"{MAX_BYTES:,}"}))
    text = read_confined_text(path, root)
    meta: dict[str, object] = {}
    body = text
    if text.lstrip("\ufeff").startswith("---"):
        meta, body = split_front_matter(text)
    listed = meta.get("allowed-tools") or meta.get("allowed_tools") or ()
    tools: list[object] = (
        [t for t in re.split(r"[,\s]+", listed) if t]
        if isinstance(listed, str)
        else list(listed)
        if isinstance(listed, list | tuple)
        else []
    )
    return CustomCommand(
        name=name,
        path=path,
        body=body.lstrip("\ufeff"),
        description=" ".join(str(meta.get("description") or "").split()),
        argument_hint=" ".join(str(meta.get("argument-hint") or meta.get("argument_hint") or "").split()),
        model=str(meta.get("model") or "").strip(),
        allowed_tools=tuple(str(t).lstrip("@") for t in tools),
        scope=scope,
    )
