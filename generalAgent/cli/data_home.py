"""The one-time move of an older `./data` into the data home, with the line that says so.

Older versions kept sessions, indexes and the knowledge base in `./data` whenever the
folder had a `.env`, and in the user data folder otherwise, so a user's sessions and
knowledge split in two. Now DATA_DIR unset means the user data folder from every folder
(config/sources.py: `user_data_dir`). The first time the agent runs in a trusted folder
that still holds such a `./data`, it is moved into the data home: nothing is overwritten
and nothing dropped. What the home already has under the same name stays; the folder's
copy goes beside it under `imported/<folder>-<hash>/`, named in the line. A folder that
is not trusted keeps its `./data` untouched (its files are not taken into the user's
store before the user trusts it), and a folder whose `.env` sets DATA_DIR keeps its store.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from generalAgent.config.settings import Settings
from generalAgent.documents.folder_walk import DATA_HOME_FILES
from generalAgent.i18n import _
from generalAgent.private_storage import private_folder

OLD_STORE_NAME = "data"
# SQLite's companions travel with their database (an uncheckpointed WAL holds commits).
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


@dataclass(frozen=True)
class DataHomeMove:
    """What one move did: the folder emptied, the home, and where clashing items went."""

    source: Path
    home: Path
    moved: tuple[str, ...]
    set_aside: Path | None  # the folder the clashing items went to, if any


def older_project_store(folder: Path) -> Path | None:
    """`folder/data` when an older version made it there (a `.env` beside it, our databases in it)."""
    store = folder / OLD_STORE_NAME
    if store.is_symlink() or not store.is_dir() or not (folder / ".env").is_file():
        return None
    return store if any((store / name).is_file() for name in DATA_HOME_FILES) else None


def move_into_home(store: Path, home: Path) -> DataHomeMove:
    """Every item of `store` into `home`; an item the home already has goes to
    `home/imported/<folder>-<hash>/` instead. `store` is removed once empty."""
    private_folder(home)
    aside = home / "imported" / f"{store.parent.name}-{hashlib.sha256(str(store).encode()).hexdigest()[:8]}"
    moved: list[str] = []
    clashed = False
    for entry in sorted(store.iterdir()):
        if _is_companion(entry, store):
            continue  # moved with its database below
        target = home / entry.name
        if entry.is_dir() and not entry.is_symlink() and target.is_dir():
            for child in sorted(entry.iterdir()):  # workspaces/<id>, logs/...: merged item by item
                clashed |= (
                    _move(child, target / child.name, aside / entry.name / child.name) != target / child.name
                )
            _remove_if_empty(entry)
        else:
            destination = _move(entry, target, aside / entry.name)
            clashed |= destination != target
            for suffix in SQLITE_COMPANIONS:
                companion = entry.with_name(entry.name + suffix)
                if companion.exists():
                    shutil.move(str(companion), str(destination.with_name(destination.name + suffix)))
        moved.append(entry.name)
    _remove_if_empty(store)
    return DataHomeMove(store, home, tuple(moved), aside if clashed else None)


def _move(source: Path, target: Path, aside: Path) -> Path:
    """Move `source` to `target`, or to `aside` when `target` exists; returns where it went."""
    destination = aside if target.exists() or target.is_symlink() else target
    private_folder(destination.parent)
    shutil.move(str(source), str(destination))
    return destination


def _is_companion(entry: Path, store: Path) -> bool:
    return any(
        entry.name.endswith(suffix) and (store / entry.name.removesuffix(suffix)).exists()
        for suffix in SQLITE_COMPANIONS
    )


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty (something appeared meanwhile): left as it is
        folder.rmdir()


def move_older_store(settings: Settings, folder: Path, console: Console) -> DataHomeMove | None:
    """Move `folder`'s older `./data` into the data home when it applies, saying so in a line."""
    trust = settings.sources.trust
    if settings.source_of("DATA_DIR").kind != "default" or not trust.covers(folder):
        return None
    store = older_project_store(folder)
    if store is None:
        return None
    move = move_into_home(store, settings.paths.data_dir)
    line = _(
        "Moved this folder's data (sessions, indexes, knowledge base) from {old} to {home}, "
        "the one data home for every folder (DATA_DIR=data in this folder's .env keeps a store here)."
    ).format(old=move.source, home=move.home)
    console.print(escape(line), style="yellow")
    if move.set_aside is not None:
        console.print(
            escape(
                _("{home} already held some of them: this folder's copies are kept in {aside}.").format(
                    home=move.home, aside=move.set_aside
                )
            ),
            style="yellow",
        )
    return move
