"""The per-session workspace: the only part of the disk the agent's file tools may touch.

Layout: `DATA_DIR/workspaces/<session>/{uploads,outputs,temp}`. Uploads are read-only
for the model; it writes under `outputs/` (results for the user) and `temp/` (scratch).
The skills folder is mounted read-only as `skills/` so the model can read a SKILL.md.
Every path a tool receives goes through `Workspace.resolve`, which refuses anything that
leaves these roots: `..`, absolute paths, and symlinks whose target lies outside.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from generalAgent.tools.errors import ToolError

WORKSPACE_DIRS = ("uploads", "outputs", "temp")
WRITABLE_DIRS = ("outputs", "temp")
RESULTS_DIR = "outputs"  # what the agent delivers: replacing a file elsewhere asks the user
SKILLS_MOUNT = "skills"
_SAFE_SESSION = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class WorkspaceError(ToolError):
    """A path the tools refuse; the message says why and what would work instead."""


@dataclass(frozen=True)
class Workspace:
    root: Path
    skills_dir: Path | None = None
    _mounts: dict[str, Path] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def for_session(cls, workspaces_dir: Path, session_id: str, skills_dir: Path | None = None) -> Workspace:
        """The session's workspace, created on first use."""
        if not _SAFE_SESSION.match(session_id) or session_id in {".", ".."}:
            raise WorkspaceError(f"Invalid session id {session_id!r} for a workspace.")
        root = (workspaces_dir / session_id).resolve()
        for name in WORKSPACE_DIRS:
            (root / name).mkdir(parents=True, exist_ok=True)
        mounts = {}
        if skills_dir is not None and skills_dir.is_dir():
            mounts[SKILLS_MOUNT] = skills_dir.resolve()
            # Commands run in the workspace (`python skills/pdf/scripts/...`) need the
            # folder there too; file tools reach it through the mount, read-only.
            link = root / SKILLS_MOUNT
            if not link.exists() and not link.is_symlink():
                link.symlink_to(mounts[SKILLS_MOUNT], target_is_directory=True)
        return cls(root=root, skills_dir=skills_dir, _mounts=mounts)

    def resolve(self, path: str, *, for_writing: bool = False) -> Path:
        """The real path of a workspace-relative `path`, or `WorkspaceError` saying why not."""
        relative = self._normalise(path)
        parts = relative.parts
        if parts and parts[0] in self._mounts:
            if for_writing:
                raise WorkspaceError(f"{path}: skills/ is read-only. Write under outputs/ or temp/.")
            base = self._mounts[parts[0]]
            candidate = base.joinpath(*parts[1:])
            return self._contained(candidate, base, path)
        if for_writing and (not parts or parts[0] not in WRITABLE_DIRS):
            raise WorkspaceError(
                f"{path}: files can only be written under outputs/ or temp/ "
                f"(e.g. outputs/{relative.name or 'result.md'})."
            )
        candidate = self.root.joinpath(*parts)
        return self._contained(candidate, self.root, path)

    def contains(self, real: Path) -> bool:
        """Whether the real path `real` lies inside the workspace or one of its read-only mounts."""
        return any(real == base or base in real.parents for base in (self.root, *self._mounts.values()))

    def in_folder(self, real: Path, folder: str) -> bool:
        """Whether the real path `real` lies in the workspace folder `folder` (e.g. outputs)."""
        base = self.root / folder
        return real == base or base in real.parents

    def display(self, real: Path) -> str:
        """How a real path inside the workspace is shown to the model and the user."""
        real = real.resolve()
        for name, base in self._mounts.items():
            if real == base or base in real.parents:
                return str(PurePosixPath(name, *real.relative_to(base).parts))
        if real == self.root:
            return "."
        return str(PurePosixPath(*real.relative_to(self.root).parts))

    # -- internals ------------------------------------------------------------------
    @staticmethod
    def _normalise(path: str) -> PurePosixPath:
        if not isinstance(path, str) or not path.strip():
            raise WorkspaceError("Empty path. Give a path inside the workspace, e.g. uploads/report.pdf.")
        # NFKC folds look-alikes such as full-width dots and slashes into the characters
        # they imitate, so "．．／" is judged as the "../" it would be taken for.
        text = unicodedata.normalize("NFKC", path.strip()).replace("\\", "/")
        if "\x00" in text:
            raise WorkspaceError(f"{path!r}: NUL characters are not allowed in paths.")
        pure = PurePosixPath(text)
        if pure.is_absolute() or re.match(r"^[A-Za-z]:", text) or text.startswith("~"):
            raise WorkspaceError(
                f"{path}: absolute paths are outside the workspace. "
                "Use a workspace path such as uploads/<file> or outputs/<file>."
            )
        if ".." in pure.parts:
            raise WorkspaceError(f"{path}: '..' would leave the workspace; it is not allowed.")
        return PurePosixPath(*(p for p in pure.parts if p not in {"", "."}))

    @staticmethod
    def _contained(candidate: Path, base: Path, shown: str) -> Path:
        real = candidate.resolve()
        if real != base and base not in real.parents:
            raise WorkspaceError(f"{shown}: it points outside the workspace (through a symlink).")
        return real
