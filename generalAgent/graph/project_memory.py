"""Project memory: AGENTS.md instructions that every session in a folder starts with.

Two files are read, once per process, and added to the static system prompt: the user's
own (AGENTS.md in the user-level config folder, beside its `.env`; USER_AGENTS_FILE
overrides it) and the working folder's `AGENTS.md`. The user's comes first and the project's second, so the more
specific instructions are the last word. Reading them once keeps the prompt's prefix the
same for the whole process (an edit takes effect in the next one), and AGENTS_MD_MAX_CHARS
caps what they may add, so a huge file cannot crowd out the conversation.

The folder's file is read only when the user trusts the folder (config/trust.py): it
instructs the model, and a folder made by someone else could tell it to run a command.
Neither file is read through a link that leaves its folder (config/confined.py), so
`AGENTS.md -> ~/.ssh/id_rsa` never reaches the provider; such a file is skipped with a notice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generalAgent.config.confined import LeavesFolder, read_confined_text
from generalAgent.config.settings import Settings
from generalAgent.config.sources import user_config_dir
from generalAgent.display import N_, Message, os_error_reason, said_of_error

FILE_NAME = "AGENTS.md"


@dataclass(frozen=True)
class MemoryFile:
    scope: str  # "user" or "project"
    path: Path
    text: str  # as added to the prompt (cut to what was left of the cap)
    chars: int  # the file's length in characters

    @property
    def cut(self) -> bool:
        return len(self.text) < self.chars


@dataclass(frozen=True)
class ProjectMemory:
    files: tuple[MemoryFile, ...] = ()
    problems: tuple[Message, ...] = ()  # files that exist but could not be read, said for a person

    def prompt_section(self) -> str:
        """The system prompt's part: each file under a heading naming where it comes from."""
        if not self.files:
            return ""
        parts = [
            "# Instructions from AGENTS.md\n"
            "The user keeps these instructions for you; follow them unless the user says otherwise "
            "in the conversation. Project instructions come last and take precedence."
        ]
        for memory in self.files:
            note = (
                f"\n[cut: the first {len(memory.text):,} of {memory.chars:,} characters]"
                if memory.cut
                else ""
            )
            parts.append(
                f'<agents_md scope="{memory.scope}" path="{memory.path}">\n{memory.text}{note}\n</agents_md>'
            )
        return "\n\n".join(parts)


def user_memory_path(settings: Settings) -> Path:
    """Where the user's AGENTS.md lives on this platform (USER_AGENTS_FILE overrides it)."""
    if settings.paths.user_agents_file is not None:
        return settings.paths.user_agents_file
    return user_config_dir() / FILE_NAME


def load_project_memory(settings: Settings, cwd: Path) -> ProjectMemory:
    """Read the user's and the working folder's AGENTS.md, within AGENTS_MD_MAX_CHARS together.

    The project's file is given its share of the cap first: it is the more specific one.
    The project's file is read only when `settings` trust the folder `cwd`.
    """
    budget = settings.governance.agents_md_max_chars
    read: dict[str, tuple[Path, str]] = {}
    lengths: dict[str, int] = {}
    problems: list[Message] = []
    seen: set[Path] = set()
    user = user_memory_path(settings)
    candidates = [("user", user, user.parent)]
    if settings.sources.trust.covers(cwd):
        candidates.insert(0, ("project", cwd / FILE_NAME, cwd))
    for scope, path, folder in candidates:
        try:
            real = path.resolve()
            if real in seen or not real.is_file():
                continue
            text = read_confined_text(path, folder, errors="replace").strip()
            seen.add(real)
        except LeavesFolder as exc:
            problems.append(Message(N_("{problem}"), {"problem": said_of_error(exc)}))
            continue
        except OSError as exc:
            problems.append(
                Message(N_("{path}: {problem}"), {"path": str(path), "problem": os_error_reason(exc)})
            )
            continue
        if text and budget > 0:
            read[scope] = (path, text[:budget])
            budget -= len(read[scope][1])
            lengths[scope] = len(text)
    files = tuple(
        MemoryFile(scope=scope, path=read[scope][0], text=read[scope][1], chars=lengths[scope])
        for scope in ("user", "project")
        if scope in read
    )
    return ProjectMemory(files, tuple(problems))
