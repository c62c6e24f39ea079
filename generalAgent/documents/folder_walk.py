"""The files of a folder or a glob, never through a symbolic link that leads out of it.

Attaching `#docs` and `generalagent index docs` walk folders that someone else may have
made (a repository, a document bundle): `docs/notes.md -> ~/.ssh/id_rsa` would copy the
key into the workspace and on to the model, or into the index. So a file is taken only
when its real path (links resolved) is inside the real path of the folder walked, or of
the folder a glob starts from; a link that leads out is skipped and reported, so the
user learns why a file is missing. A link that stays inside is fine (a file is taken
under its own name); a linked folder is not walked a second time (its files are reached
by their real path, and a link that loops back cannot make the walk endless).

A folder of generalAgent's own data (a DATA_DIR inside the folder walked, such as the
`./data` of a folder's `.env`) is not walked either: its session logs and workspace
copies of attached files would be indexed and found twice. It is known by what the
agent keeps there (`DATA_HOME_FILES` beside `DATA_HOME_FOLDERS`), seen in the listing
the walk reads anyway; the folder the walk starts from is walked whatever it holds.

The same holds one level up: a path written relative to the working folder (`#docs`,
`#notes.md`, `index docs`) that stays inside it as written but leads out of it through
a link (`docs -> ~/.ssh`) is skipped too (`leads_out_of`). A path the user writes as
leaving the folder (absolute, `~/…`, `../…`) is taken where it points: they named it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

# What makes a folder generalAgent's data home: one of its databases beside one of its folders.
DATA_HOME_FILES = frozenset({"sessions.db", "indexes.db"})
DATA_HOME_FOLDERS = frozenset({"workspaces", "logs"})


@dataclass
class FolderFiles:
    """What a walk found: `files` (sorted) and the links it did not follow out of the folder."""

    files: list[Path] = field(default_factory=list)
    links_out: list[Path] = field(default_factory=list)
    data_homes: list[Path] = field(default_factory=list)  # generalAgent's data folders, not walked
    more: bool = False  # the walk stopped at its limit: there are more files


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a link loop, a folder we may not read
        return False


def leads_out_of(path: Path, folder: Path) -> bool:
    """Whether `path`, inside `folder` as written, leads out of it through a link."""
    written = Path(os.path.normpath(path if path.is_absolute() else folder / path))
    base = Path(os.path.normpath(folder.absolute()))
    if not written.is_relative_to(base):
        return False  # written as leaving the folder: the user chose where it goes
    return not _inside(written, base.resolve())


def walk_folder(
    folder: Path,
    *,
    include: Callable[[Path], bool] | None = None,
    hidden: bool = False,
    limit: int | None = None,
) -> FolderFiles:
    """Every file under `folder` that `include` accepts, recursively; names starting with "."
    are left out unless `hidden`. Links that lead out of `folder` are in `links_out`, data
    folders of generalAgent below `folder` in `data_homes` (neither is walked). With
    `limit`, the walk stops after that many files (the first in path order, folder by
    folder) and sets `more` when there were others."""
    root = folder.resolve()
    found = FolderFiles()
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        if current != folder and _is_data_home(entries):
            found.data_homes.append(current)
            continue
        folders: list[Path] = []
        for entry in entries:
            if limit is not None and len(found.files) > limit:
                found.files, found.more = found.files[:limit], True
                pending = folders = []
                break
            if not hidden and entry.name.startswith("."):
                continue
            path = current / entry.name
            if entry.is_symlink():
                if not _inside(path, root):
                    found.links_out.append(path)
                elif path.is_file() and (include is None or include(path)):
                    found.files.append(path)
                continue  # a linked folder inside is walked under its real name
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(path)
                elif entry.is_file(follow_symlinks=False) and (include is None or include(path)):
                    found.files.append(path)
            except OSError:
                continue
        pending.extend(reversed(folders))  # the first sub-folder by name is walked next
    if limit is not None and len(found.files) > limit:
        found.files, found.more = found.files[:limit], True
    found.files.sort()
    found.links_out.sort()
    return found


def _is_data_home(entries: list[os.DirEntry[str]]) -> bool:
    names = {entry.name for entry in entries}
    return bool(names & DATA_HOME_FILES) and bool(names & DATA_HOME_FOLDERS)


def glob_anchor(pattern: Path) -> tuple[Path, str]:
    """(the folder a glob starts from, the rest of the pattern): `docs/**/*.md` → docs, `**/*.md`."""
    parts = pattern.parts
    first = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts))
    anchor = Path(*parts[:first]) if first else Path(".")
    return anchor, "/".join(parts[first:])


def glob_files(pattern: Path, limit: int | None = None, *, hidden: bool = True) -> FolderFiles:
    """Files matching `pattern` whose real path stays inside the folder the pattern starts
    from (at most `limit` of them, counted before sorting); with `hidden=False`, none under
    a name starting with "." (as glob.glob). pathlib's `**` does not descend into linked
    folders, so a link that loops back cannot make the walk endless; a `*` that matches a
    linked folder is caught by the real-path check."""
    anchor, rest = glob_anchor(pattern)
    root = anchor.resolve()
    found = FolderFiles()

    def matches() -> Iterator[Path]:
        for path in anchor.glob(rest):
            if not hidden and any(part.startswith(".") for part in path.relative_to(anchor).parts):
                continue
            if not path.is_file():
                continue
            if _inside(path, root):
                yield path
            else:
                found.links_out.append(path)

    found.files = sorted(itertools.islice(matches(), limit))
    found.links_out.sort()
    return found
