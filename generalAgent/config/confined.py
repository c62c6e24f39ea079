"""Configuration files read as what they are: never through a link that leaves their folder.

AGENTS.md, skills, agent profiles and the tools file are text the agent trusts more than a
document. A folder could carry `AGENTS.md -> ~/.ssh/id_rsa` and have the private key sent to
the provider in the system prompt; so each such file is resolved first and read only when
its real path lies inside the real path of the folder it belongs to. A link inside the
folder (`AGENTS.md -> docs/agents.md`) is fine.
"""

from __future__ import annotations

import os
from pathlib import Path


def N_(message: str) -> str:
    """Marks a message for the catalog (babel's keyword), as display.N_ does: config/ is the
    lowest layer and may not import display.py."""
    return message


class LeavesFolder(OSError):
    """The file is a link (or lies under one) that leads outside its folder; not read.

    Its `template` (N_-marked) and `fields` are kept as data, as FrontMatterError's are, so
    the loaders say it in the UI language (display.said_of_error makes a Message of them).
    It says only what the file is; each loader says what follows (a skill or profile
    skipped, AGENTS.md or a command not read, the tools file refused)."""

    def __init__(self, path: Path, folder: Path) -> None:
        self.template = N_("{path} leads outside {folder} (a symbolic link)")
        self.fields = {"path": str(path), "folder": str(folder)}
        super().__init__(self.template.format(**self.fields))
        self.path = path
        self.folder = folder


def confined_path(path: Path, folder: Path) -> Path:
    """The real path of `path`; `LeavesFolder` when it does not lie inside the real `folder`."""
    real = Path(os.path.realpath(path))
    home = Path(os.path.realpath(folder))
    if real != home and not real.is_relative_to(home):
        raise LeavesFolder(path, folder)
    return real


def read_confined_text(path: Path, folder: Path, errors: str = "strict") -> str:
    """The text of `path`, read only if it stays inside `folder` (`LeavesFolder` otherwise).

    The resolved path is opened with O_NOFOLLOW, so a link swapped in after the check is
    refused rather than followed."""
    real = confined_path(path, folder)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(real, flags)
    with os.fdopen(descriptor, "r", encoding="utf-8", errors=errors) as handle:
        return handle.read()
