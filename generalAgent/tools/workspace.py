"""The per-session workspace: the only part of the disk the agent's file tools may touch.

Layout: `DATA_DIR/workspaces/<session>/{uploads,outputs,temp}`. Uploads are read-only
for the model; it writes under `outputs/` (results for the user) and `temp/` (scratch).
The skills folder is mounted read-only as `skills/` so the model can read a SKILL.md.

The user's own folders are read in place (`WorkingFolders`): the folder the agent was
started in, once the user trusts it (config/trust.py), and the `--add-dir` folders. One
rule, in `Workspace.resolve`, says where a path lies:

- `uploads/…`, `outputs/…`, `temp/…` and `skills/…` are the session workspace;
- every other relative path (and `./outputs/…`, written with `./`) is the working folder;
- an absolute path is taken where it points when it lies inside the workspace, the
  working folder or an added folder, and refused elsewhere.

Writing follows the same rule: outputs/ and temp/ freely, a file in the user's folders only
after the user approved the change, shown as a diff (tools/approval.py: `changes_file`).

In a folder the user has not trusted the working folder is not read: the error says how
to trust it (or attach the file with `#path`). `..`, links that lead out of the folder
they are in, and `.env` files (keys) are refused everywhere. The file
is then read through `open_for_reading` and written through `write_text`, which both work
relative to the folder opened and checked again, so a symlink swapped in after the check
cannot redirect them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO

from generalAgent.display import N_, Message
from generalAgent.private_storage import private_folder
from generalAgent.tools.errors import ToolError

if TYPE_CHECKING:
    from generalAgent.tools.editor import EditorAccess

WORKSPACE_DIRS = ("uploads", "outputs", "temp")
WRITABLE_DIRS = ("outputs", "temp")
RESULTS_DIR = "outputs"  # what the agent delivers: replacing a file elsewhere asks the user
SKILLS_MOUNT = "skills"
# Writes relative to an open folder (POSIX); elsewhere a plain rename into place.
# (os.supports_dir_fd lists os.rename, not os.replace: the same call where dir_fd exists.)
_FOLDER_RELATIVE = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd
_SAFE_SESSION = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
# What no file the agent creates is named with: controls (a line break, ESC, BEL, C1), line
# and paragraph separators and bidi overrides. Shown in the approval question, such a name
# passes for another (`ok.md` and, on lines of their own, what looks like the question).
_UNWRITABLE_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SWAPPED = N_(
    "{name}: the path changed while it was being opened (a link to elsewhere was swapped in); "
    "nothing was read. Check the file with list_workspace_files and try again."
)


class WorkspaceError(ToolError):
    """A path the tools refuse; the message says why and what would work instead."""


# Files of the user's folders the tools never read: they hold keys (a folder's `.env`).
_SECRET_NAME = re.compile(r"^\.env(\..*)?$")


@dataclass(frozen=True)
class WorkingFolders:
    """The user's folders the file tools read in place (module docstring).

    `start` is the real path of the folder the agent was started in (None where no folder
    is considered: a server, a test); `readable` whether the user trusts it; `added` the
    real paths of the --add-dir folders, readable whatever the trust."""

    start: Path | None = None
    readable: bool = False
    added: tuple[Path, ...] = ()

    @property
    def roots(self) -> tuple[Path, ...]:
        """The folders that may be read, the working folder first."""
        start = (self.start,) if self.readable and self.start is not None else ()
        return (*start, *self.added)

    def not_readable(self, path: str) -> WorkspaceError:
        return WorkspaceError(
            N_(
                "{path}: the working folder {folder} is not trusted, so its files are not read. "
                "The user can trust it with `generalagent trust` (then start again), or attach the file "
                "with #{path}. Session files are under uploads/, outputs/ and temp/."
            ),
            path=path,
            folder=str(self.start),
        )


@dataclass(frozen=True)
class Workspace:
    root: Path
    skills_dir: Path | None = None
    _mounts: dict[str, Path] = field(default_factory=dict, compare=False, repr=False)
    folders: WorkingFolders = field(default_factory=WorkingFolders, compare=False)
    # The editor driving the session (ACP), when it reads or writes files for the agent:
    # the user's own files then go through it (tools/editor.py); workspace files never do.
    editor: EditorAccess | None = field(default=None, compare=False, repr=False)
    # Called with (real path, new bytes) before every write; what it returns is called once
    # the write succeeded: the file snapshots /rewind restores (snapshots.py). None: not kept.
    before_write: Callable[[Path, bytes], Callable[[], None]] | None = field(
        default=None, compare=False, repr=False
    )

    @staticmethod
    def root_of(workspaces_dir: Path, session_id: str) -> Path | None:
        """Where the session's workspace is (or would be); None for an id that is no folder name."""
        if not _SAFE_SESSION.match(session_id) or session_id in {".", ".."}:
            return None
        return (workspaces_dir / session_id).resolve()

    @classmethod
    def for_session(
        cls,
        workspaces_dir: Path,
        session_id: str,
        skills_dir: Path | None = None,
        folders: WorkingFolders | None = None,
        editor: EditorAccess | None = None,
    ) -> Workspace:
        """The session's workspace, created on first use."""
        root = cls.root_of(workspaces_dir, session_id)
        if root is None:
            raise WorkspaceError(N_("Invalid session id {id} for a workspace."), id=repr(session_id))
        for name in WORKSPACE_DIRS:
            private_folder(root / name)  # uploads and results: 0700, like the data home
        mounts = {}
        if skills_dir is not None and skills_dir.is_dir():
            mounts[SKILLS_MOUNT] = skills_dir.resolve()
            # Commands run in the workspace (`python skills/pdf/scripts/...`) need the
            # folder there too; file tools reach it through the mount, read-only.
            link = root / SKILLS_MOUNT
            if not link.exists() and not link.is_symlink():
                link.symlink_to(mounts[SKILLS_MOUNT], target_is_directory=True)
        return cls(
            root=root,
            skills_dir=skills_dir,
            _mounts=mounts,
            folders=folders or WorkingFolders(),
            editor=editor,
        )

    def resolve(self, path: str, *, for_writing: bool = False) -> Path:
        """The real path of `path` (the rule of the module docstring), or `WorkspaceError`
        saying why not."""
        if for_writing and isinstance(path, str) and (bad := _UNWRITABLE_NAME.search(path.strip())):
            raise WorkspaceError(
                N_(
                    "{path}: a file name with a control character (U+{code}) is not written; choose a plain name."
                ),
                path=ascii(path),
                code=f"{ord(bad.group()):04X}",
            )
        base, relative = self._place(path, for_writing)
        if base is not None:
            real = self._contained(base.joinpath(*relative.parts), base, path)
            if _SECRET_NAME.match(real.name) or _SECRET_NAME.match(relative.name or ""):
                raise WorkspaceError(
                    N_("{path}: .env files hold keys; they are not read or written."), path=path
                )
            if for_writing and (real == self.root or self.root in real.parents):
                raise WorkspaceError(
                    N_("{path}: that is the session workspace; write under outputs/ or temp/."), path=path
                )
            return real
        parts = relative.parts
        if parts and parts[0] in self._mounts:
            if for_writing:
                raise WorkspaceError(
                    N_("{path}: skills/ is read-only. Write under outputs/ or temp/."), path=path
                )
            base = self._mounts[parts[0]]
            candidate = base.joinpath(*parts[1:])
            return self._contained(candidate, base, path)
        if for_writing and (not parts or parts[0] not in WRITABLE_DIRS):
            raise WorkspaceError(
                N_("{path}: files can only be written under outputs/ or temp/ (e.g. outputs/{name})."),
                path=path,
                name=relative.name or "result.md",
            )
        candidate = self.root.joinpath(*parts)
        return self._contained(candidate, self.root, path)

    def contains(self, real: Path) -> bool:
        """Whether the real path `real` lies inside the workspace, one of its read-only mounts
        or a folder read in place."""
        bases = (self.root, *self._mounts.values(), *self.folders.roots)
        return any(real == base or base in real.parents for base in bases)

    def in_place(self, real: Path) -> bool:
        """Whether the real path `real` lies in a folder of the user's read in place (the
        working folder, an added folder) rather than in the session workspace."""
        if real == self.root or self.root in real.parents:
            return False
        return any(real == base or base in real.parents for base in self.folders.roots)

    def in_folder(self, real: Path, folder: str) -> bool:
        """Whether the real path `real` lies in the workspace folder `folder` (e.g. outputs)."""
        base = self.root / folder
        return real == base or base in real.parents

    def read_text(self, real: Path, max_bytes: int | None = None) -> str:
        """The text of the file `real` (tools/text_files.py; `NotText` if it is none): a file
        of the user's own folders through the editor when one reads for the agent, so a
        buffer open there is read with its unsaved changes; anything else from disk."""
        from generalAgent.tools.text_files import read_text, refuse_binary_name

        if self.editor is not None and self.editor.reads_files and self.in_place(real):
            refuse_binary_name(real)
            text = self.editor.read_text(real)
            return text if max_bytes is None else text[:max_bytes]
        return read_text(real, self.open_for_reading, max_bytes)

    def read_text_replacing(self, real: Path, max_bytes: int | None = None) -> tuple[str, str]:
        """As `read_text`, for reading only (read_file): the text with any bytes invalid in its
        encoding replaced, and a line saying so ("" when none were)."""
        from generalAgent.tools.text_files import read_text_replacing, refuse_binary_name

        if self.editor is not None and self.editor.reads_files and self.in_place(real):
            refuse_binary_name(real)
            text = self.editor.read_text(real)
            return (text if max_bytes is None else text[:max_bytes]), ""
        decoded = read_text_replacing(real, self.open_for_reading, max_bytes)
        return decoded.text, decoded.note(self.display(real))

    def write_text(self, real: Path, text: str) -> int:
        """Write `text` (UTF-8) to the workspace file `real`; returns the bytes written. The
        text is encoded first: a character UTF-8 cannot hold fails before anything is touched.

        A file of the user's own folders is written by the editor when one writes for the
        agent (tools/editor.py): the change lands in its buffer, where the user sees it.
        Anything else is written as `write_bytes` writes."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise WorkspaceError(
                N_(
                    "the text has a character that cannot be written as UTF-8 ({character} at position "
                    "{position}, {reason}); nothing was written"
                ),
                character=repr(exc.object[exc.start]),
                position=f"{exc.start:,}",
                reason=exc.reason,
            ) from None
        return self._write(real, data, text)

    def write_bytes(self, real: Path, data: bytes, mode: int | None = None) -> int:
        """Write `data` to the workspace file `real` so that no failure loses the old content
        and no symlink swapped in meanwhile redirects it; returns the bytes written.

        The bytes go to a new file beside the target, renamed over it in one step. Both
        happen relative to the parent folder opened once and checked to be inside the
        workspace after opening: replacing a folder of the path with a symlink between the
        check and the write cannot send the write elsewhere, and a symlink at the target
        itself is replaced, never followed. The file keeps its permission bits, or gets
        `mode` when given (/rewind writing back a file removed since)."""
        return self._write(real, data, None, mode)

    def _write(self, real: Path, data: bytes, text: str | None, mode: int | None = None) -> int:
        """The one write path of the file tools, so `before_write` sees every write."""
        written = self.before_write(real, data) if self.before_write is not None else None
        if text is not None and self.editor is not None and self.editor.writes_files and self.in_place(real):
            self.editor.write_text(real, text)
            size = len(data)
        else:
            size = self._replace_file(real, data, mode)
        if written is not None:
            written()
        return size

    def _replace_file(self, real: Path, data: bytes, mode: int | None = None) -> int:
        real.parent.mkdir(parents=True, exist_ok=True)
        if not _FOLDER_RELATIVE:  # Windows: no dir_fd; still a new file renamed into place
            beside = real.with_name(f".{real.name}.{secrets.token_hex(4)}.tmp")
            try:
                beside.write_bytes(data)
                with contextlib.suppress(OSError):
                    os.chmod(beside, mode if mode is not None else stat.S_IMODE(real.stat().st_mode))
                os.replace(beside, real)
            finally:
                beside.unlink(missing_ok=True)
            return len(data)
        folder = os.open(real.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            self._check_open_folder(folder, real.parent)
            kept = mode if mode is not None else _mode_of(real.name, folder)
            temporary = f".{real.name}.{secrets.token_hex(4)}.tmp"
            handle = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                0o600 if kept is not None else 0o644,  # never readable by others in between
                dir_fd=folder,
            )
            try:
                with os.fdopen(handle, "wb") as stream:
                    if kept is not None:  # an edit keeps the file's mode (a 0600 file stays 0600)
                        os.fchmod(stream.fileno(), kept)
                    stream.write(data)
                    stream.flush()
                    os.fsync(stream.fileno())
                os.replace(temporary, real.name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=folder)
                raise
        finally:
            os.close(folder)
        return len(data)

    def remove_file(self, real: Path) -> None:
        """Delete the workspace file `real` (a path `resolve` returned), relative to its folder
        opened once and checked to be inside, as `write_bytes` writes: a link swapped in for a
        folder of the path cannot send the deletion elsewhere (/rewind removes files the
        agent created)."""
        if not _FOLDER_RELATIVE:
            if not self.contains(real.parent.resolve()):
                raise WorkspaceError(
                    N_("{name}: it points outside the workspace; nothing was deleted"), name=real.name
                )
            real.unlink()
            return
        folder = os.open(real.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            self._check_open_folder(folder, real.parent)
            os.unlink(real.name, dir_fd=folder)
        finally:
            os.close(folder)

    def open_for_reading(self, real: Path) -> BinaryIO:
        """The workspace file `real` (a path `resolve` returned) opened for reading, verified
        to be a regular file inside the workspace: what a read tool reads.

        Between the path check and the opening, a folder of the path or the file itself may
        have been replaced by a symlink to a file outside (a command of the session, another
        program). The file is opened relative to its folder, opened once without following
        links and checked to be the folder the path names now, inside the workspace; the
        file is opened without following a link either. A swap makes the open fail with
        `WorkspaceError`; nothing outside is read. Where there is no dir_fd (Windows) the
        file is opened by path and its identity compared with what the path resolves to
        now, inside the workspace."""
        if not _FOLDER_RELATIVE:
            handle = real.open("rb")
            try:
                opened = os.fstat(handle.fileno())
                now = real.resolve()
                if not self.contains(now) or (opened.st_dev, opened.st_ino) != _identity(now):
                    raise WorkspaceError(_SWAPPED, name=real.name)
                _require_regular_file(opened, real)
            except BaseException:
                handle.close()
                raise
            return handle
        try:
            folder = os.open(real.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # the folder is a link (or a file) now
                raise WorkspaceError(_SWAPPED, name=real.name) from None
            raise
        try:
            self._check_open_folder(folder, real.parent, Message(_SWAPPED, {"name": real.name}))
            try:
                # O_NONBLOCK: a FIFO put in the workspace must not hang the open; it is refused below.
                descriptor = os.open(real.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # the file itself is a link now
                    raise WorkspaceError(_SWAPPED, name=real.name) from None
                raise
        finally:
            os.close(folder)
        try:
            _require_regular_file(os.fstat(descriptor), real)
            os.set_blocking(descriptor, True)
        except BaseException:
            os.close(descriptor)
            raise
        return os.fdopen(descriptor, "rb")

    def _check_open_folder(self, folder: int, expected: Path, refusal: Message | None = None) -> None:
        """The folder open as `folder` is the one the path check allowed, still inside."""
        opened = os.fstat(folder)
        now = expected.resolve()
        if not self.contains(now) or (opened.st_dev, opened.st_ino) != _identity(now):
            if refusal is not None:
                raise WorkspaceError(refusal)
            raise WorkspaceError(
                N_("{name}: the folder changed while writing; nothing was written"), name=expected.name
            )

    def display(self, real: Path) -> str:
        """How a real path inside the workspace is shown to the model and the user.

        A link inside is shown as its target; a path that resolves outside now (a link was
        swapped in after the check) is shown as the checked path itself, never as the
        place outside, and the open that follows refuses it."""
        for candidate in (real.resolve(), real):
            for name, base in self._mounts.items():
                if candidate == base or base in candidate.parents:
                    return str(PurePosixPath(name, *candidate.relative_to(base).parts))
            if candidate == self.root:
                return "."
            if self.root in candidate.parents:
                return str(PurePosixPath(*candidate.relative_to(self.root).parts))
            for base in self.folders.roots:
                if candidate == base or base in candidate.parents:
                    return self._shown_in_folder(candidate, base)
        raise WorkspaceError(
            N_("{name}: it points outside the workspace (through a symlink)."), name=real.name
        )

    # -- internals ------------------------------------------------------------------
    def _place(self, path: str, for_writing: bool) -> tuple[Path | None, PurePosixPath]:
        """Which folder `path` lies in (None: the workspace) and the path relative to it."""
        if not isinstance(path, str) or not path.strip():
            raise WorkspaceError(N_("Empty path. Give a path inside the workspace, e.g. uploads/report.pdf."))
        given = path.strip().replace("\\", "/")
        folders = self.folders
        if folders.start is None and not folders.added:
            return None, self._normalise(path)  # no working folder here (a server, a test)
        if given.startswith("~") or PurePosixPath(given).is_absolute():
            written = Path(os.path.normpath(os.path.expanduser(given)))
            for base in (self.root, *self._mounts.values(), *folders.roots):
                for form in (written, Path(os.path.realpath(written))):
                    if form == base or form.is_relative_to(base):
                        inner = str(PurePosixPath(*form.relative_to(base).parts)) or "."
                        if base == self.root:
                            return None, self._normalise(inner)
                        if base in self._mounts.values():
                            name = next(n for n, m in self._mounts.items() if m == base)
                            return None, self._normalise(f"{name}/{inner}")
                        return base, self._normalise(inner)
            if folders.start is not None and (
                written == folders.start or written.is_relative_to(folders.start)
            ):
                raise folders.not_readable(path)
            raise WorkspaceError(
                N_(
                    "{path}: absolute paths are outside the workspace unless they lie in the working folder "
                    "(once trusted) or a folder added with --add-dir; it is not read. Use uploads/<file>, "
                    "outputs/<file> or a path relative to the working folder."
                ),
                path=path,
            )
        relative = self._normalise(path)
        first = unicodedata.normalize("NFKC", relative.parts[0]) if relative.parts else ""
        in_workspace = first in WORKSPACE_DIRS or first in self._mounts
        if in_workspace and not given.startswith("./"):
            return None, relative
        if folders.readable and folders.start is not None:
            return folders.start, relative
        if for_writing or not relative.parts:
            return None, relative  # "." is the workspace then; writing says where it may
        raise folders.not_readable(path)

    def _shown_in_folder(self, real: Path, base: Path) -> str:
        """A path in a folder read in place as the model writes it back: relative to the
        working folder (`./` before a name the workspace uses), absolute for an added folder."""
        if base != self.folders.start or not self.folders.readable:
            return str(real)
        inner = PurePosixPath(*real.relative_to(base).parts)
        if not inner.parts:
            return "."
        first = inner.parts[0]
        return f"./{inner}" if first in WORKSPACE_DIRS or first in self._mounts else str(inner)

    @staticmethod
    def _normalise(path: str) -> PurePosixPath:
        """The path as given, once it has passed the checks in its NFKC form.

        NFKC folds look-alikes such as full-width dots and slashes into the characters they
        imitate, so "．．／" is judged as the "../" it would be taken for. Only the check
        uses that form: the path opened is the one given, so `报告（2024）.txt` (full-width
        brackets) and a decomposed `café` are the files of those names."""
        if not isinstance(path, str) or not path.strip():
            raise WorkspaceError(N_("Empty path. Give a path inside the workspace, e.g. uploads/report.pdf."))
        given = path.strip().replace("\\", "/")
        folded = unicodedata.normalize("NFKC", given).replace("\\", "/")
        if "\x00" in folded:
            raise WorkspaceError(N_("{path}: NUL characters are not allowed in paths."), path=repr(path))
        try:  # a lone surrogate from a tool call's JSON: no file name on disk can hold it
            os.fsencode(given)
        except UnicodeEncodeError as exc:
            raise WorkspaceError(
                N_(
                    "{path}: the path has a character no file name can hold ({character}, {reason}); "
                    "give the name as list_workspace_files shows it."
                ),
                path=ascii(path),
                character=repr(exc.object[exc.start]),
                reason=exc.reason,
            ) from None
        for text in (given, folded):
            pure = PurePosixPath(text)
            if pure.is_absolute() or re.match(r"^[A-Za-z]:", text) or text.startswith("~"):
                raise WorkspaceError(
                    N_(
                        "{path}: absolute paths are outside the workspace. "
                        "Use a workspace path such as uploads/<file> or outputs/<file>."
                    ),
                    path=path,
                )
            if ".." in pure.parts:
                raise WorkspaceError(
                    N_("{path}: '..' would leave the workspace; it is not allowed."), path=path
                )
        return PurePosixPath(*(p for p in PurePosixPath(given).parts if p not in {"", "."}))

    @staticmethod
    def _contained(candidate: Path, base: Path, shown: str) -> Path:
        real = _same_name_on_disk(candidate).resolve()
        if real != base and base not in real.parents:
            raise WorkspaceError(
                N_("{name}: it points outside the workspace (through a symlink)."), name=shown
            )
        return real


def _require_regular_file(info: os.stat_result, real: Path) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise WorkspaceError(
            N_("{name} is a folder, not a file; list it with list_workspace_files."), name=real.name
        )
    if not stat.S_ISREG(info.st_mode):
        raise WorkspaceError(
            N_("{name} is not a regular file (a device, pipe or socket); it is not read."), name=real.name
        )


def _identity(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_dev, info.st_ino


def _same_name_on_disk(candidate: Path) -> Path:
    """`candidate`, or the one file in its folder whose name differs from it only in Unicode
    form: a model writes "café" composed where the disk has it decomposed, or ASCII brackets
    for full-width ones."""
    if candidate.exists() or candidate.is_symlink() or not candidate.parent.is_dir():
        return candidate
    wanted = unicodedata.normalize("NFKC", candidate.name)
    try:
        matches = [e for e in candidate.parent.iterdir() if unicodedata.normalize("NFKC", e.name) == wanted]
    except OSError:
        return candidate
    return matches[0] if len(matches) == 1 else candidate


def _mode_of(name: str, folder: int) -> int | None:
    """The permission bits of the regular file `name` in the open folder `folder`; None when
    there is none (a new file gets the default mode)."""
    try:
        found = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return None
    return stat.S_IMODE(found.st_mode) if stat.S_ISREG(found.st_mode) else None
