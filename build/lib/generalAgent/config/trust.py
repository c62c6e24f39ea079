"""Folder trust: whether the configuration a folder carries may change what the agent does.

The folder the agent starts in is often a repository or a bundle someone else made. Its
`.env` can point the model endpoint elsewhere (with the user's key and every prompt), its
`mcp.json` names programs to start, its AGENTS.md instructs the model, and through the
`.env` it can name skills, agent profiles, a tools file and approval rules. So none of it
is used until the user trusts the folder, and neither are its files: the agent reads a
trusted folder in place, by relative path. The chat asks once in any folder not decided
yet, the answer is remembered per folder (its real path) in the user-level config folder,
and `generalagent trust` changes it; `-p` and the other commands never ask.

The store is one small JSON file, written whole (a temporary file, then a rename) and
readable by the user alone:

    {"version": 1, "folders": {"/home/me/project": {"trusted": true, "decided": "2026-11-26T02:10:00Z"}}}

A store that cannot be read counts as "nothing decided": a folder is never trusted by
accident. The user-level config folder itself is the user's own, so it is always trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

STORE_NAME = "trusted-folders.json"
# What a folder may carry that changes the agent (docs/security.md). Skills, agent profiles
# and a tools file reach the agent through the folder's .env (SKILLS_DIR, AGENTS_DIR,
# TOOLS_CONFIG); `.generalagent/` is the folder's own configuration folder.
PROJECT_CONFIGURATION = (".env", ".mcp.json", "mcp.json", "AGENTS.md", ".generalagent")


@dataclass(frozen=True)
class FolderTrust:
    """The trust decision about one folder, as it stands for this process."""

    folder: Path | None = None  # the real path; None: no folder considered (tests, servers)
    found: tuple[str, ...] = ()  # the project configuration present in it
    decision: bool | None = None  # True trusted, False refused, None never asked

    @property
    def applies(self) -> bool:
        """Whether the folder's own configuration is used."""
        return self.decision is True

    @property
    def ignored(self) -> tuple[str, ...]:
        """What the folder carries and is not used."""
        return () if self.applies else self.found

    @property
    def undecided(self) -> bool:
        """The user was never asked about this folder. Any folder, with configuration or
        without: a trusted folder's files are read in place (tools/workspace.py), so a plain
        folder of documents needs the answer as much as a repository does."""
        return self.folder is not None and self.decision is None

    def covers(self, folder: Path) -> bool:
        """Whether the configuration of `folder` may be used (it is this folder, trusted)."""
        return self.applies and self.folder is not None and _real(folder) == self.folder

    def decided(self, trusted: bool) -> FolderTrust:
        return FolderTrust(self.folder, self.found, trusted)


def project_configuration(folder: Path) -> tuple[str, ...]:
    """The names of PROJECT_CONFIGURATION present in `folder` (a dangling link counts too)."""
    return tuple(name for name in PROJECT_CONFIGURATION if os.path.lexists(folder / name))


def store_path() -> Path:
    from generalAgent.config.sources import user_config_dir

    return user_config_dir() / STORE_NAME


def folder_trust(folder: Path | None = None) -> FolderTrust:
    """The stored decision about `folder` (the current one by default) and what it carries."""
    try:
        real = _real(folder or Path.cwd())
    except FileNotFoundError:  # the current folder was deleted under us: nothing to trust
        return FolderTrust()
    found = project_configuration(real)
    if _is_user_config_folder(real):
        return FolderTrust(real, found, True)
    return FolderTrust(real, found, TrustStore().decision(real))


class TrustStoreError(Exception):
    """The store cannot be written; the message is one line for the user."""


class TrustStore:
    """The remembered answers, by real path."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or store_path()

    def decisions(self) -> dict[Path, tuple[bool, str]]:
        """Every remembered folder: (trusted, when it was decided), by path."""
        folders = self._read().get("folders", {})
        decisions: dict[Path, tuple[bool, str]] = {}
        for path, entry in folders.items() if isinstance(folders, dict) else ():
            if isinstance(entry, dict) and isinstance(entry.get("trusted"), bool):
                decisions[Path(path)] = (entry["trusted"], str(entry.get("decided", "")))
        return decisions

    def decision(self, folder: Path) -> bool | None:
        found = self.decisions().get(_real(folder))
        return found[0] if found is not None else None

    def remember(self, folder: Path, trusted: bool) -> Path:
        """Store the answer for `folder`; returns the real path it was stored under."""
        real = _real(folder)
        data = self._read()
        folders = data.get("folders")
        if not isinstance(folders, dict):
            folders = {}
        decided = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        folders[str(real)] = {"trusted": trusted, "decided": decided}
        self._write({"version": 1, "folders": folders})
        return real

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, object]) -> None:
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            temporary.replace(self.path)  # a failed write leaves the old store whole
        except OSError as exc:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise TrustStoreError(f"{self.path}: cannot write it ({exc.strerror or exc})") from None


def _real(folder: Path) -> Path:
    return Path(os.path.realpath(folder.expanduser()))


def _is_user_config_folder(real: Path) -> bool:
    from generalAgent.config.sources import user_config_dir

    return real == _real(user_config_dir())
