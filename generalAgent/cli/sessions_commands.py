"""Saved sessions from the command line: `generalagent sessions [delete]`.

    generalagent sessions                         the recent sessions, as /sessions shows them
    generalagent sessions --all                   every session, `-p` runs included
    generalagent sessions delete 20261121-2237    delete a session (an id or a unique prefix)
    generalagent sessions delete --older-than 30  delete every session unused for 30 days

Deleting a session removes all the data folder keeps of it: its conversation (the
checkpoints, in sessions.db or PostgreSQL), the file versions kept for /rewind, its
workspace (attached copies, and the outputs/ of an untrusted folder) and its line in the
list, in that order, so a failure half-way leaves it listed and the command can be run
again. Files the agent wrote in the user's own folders stay: they are the user's.
It asks first, listing what goes, unless --yes; without a terminal to ask, --yes is needed.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from generalAgent.agent.storage_errors import describe_storage_error
from generalAgent.cli.folder_trust import YES
from generalAgent.cli.session_resume import picker_line
from generalAgent.cli.subcommands import EXIT_FAILED, EXIT_USAGE, fail, settings_or_fail
from generalAgent.cli.terminal_text import terminal_console, terminal_safe, typed_answer
from generalAgent.config.settings import Settings
from generalAgent.i18n import N_, _, ngettext
from generalAgent.sessions import SessionCatalog, SessionInfo, SessionStoreError
from generalAgent.snapshots import SnapshotStore

if TYPE_CHECKING:  # LangGraph's saver is loaded only when something is deleted
    from langgraph.checkpoint.base import BaseCheckpointSaver

app = typer.Typer(
    help=_("List saved sessions, or delete them with everything kept of them."),
    invoke_without_command=True,
    no_args_is_help=False,
)
RECENT = 20
SHOWN_BEFORE_ASKING = 10
DAY_SECONDS = 86400


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="sessions")


@app.callback()
def list_sessions(
    context: typer.Context,
    everything: Annotated[
        bool, typer.Option("--all", help=_("Every session, `-p` runs included, not only the latest 20."))
    ] = False,
) -> None:
    """The recent sessions: id, title, age, turns, folder."""
    if context.invoked_subcommand is not None:
        return
    with _catalog(settings_or_fail()) as catalog:
        sessions = catalog.recent(limit=-1 if everything else RECENT, unlisted=everything) if catalog else []
    console = terminal_console(highlight=False, soft_wrap=True)
    if not sessions:
        console.print(escape(_("No saved sessions yet.")))
        return
    table = Table(box=None, header_style="bold")
    for column in (N_("id"), N_("title"), N_("age"), N_("turns"), N_("folder")):
        table.add_column(_(column))
    for info in sessions:
        row = (info.id, info.title, info.age(), str(info.turns), info.folder or "")
        table.add_row(*(escape(terminal_safe(cell).replace("\n", " ")) for cell in row))
    console.print(table)


@app.command(
    "delete",
    help=_(
        "Delete sessions and everything kept of them (the conversation, /rewind's file versions, "
        "the workspace); files written in your own folders stay."
    ),
)
def delete_command(
    references: Annotated[
        list[str] | None,
        typer.Argument(help=_("Session ids, or unique prefixes of them."), show_default=False),
    ] = None,
    older_than: Annotated[
        int | None,
        typer.Option(
            "--older-than", min=1, help=_("Every session unused for this many days."), show_default=False
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help=_("Delete without asking."))] = False,
) -> None:
    if not references and older_than is None:
        fail(_("Name the sessions to delete (ids or prefixes), or give --older-than DAYS."), EXIT_USAGE)
    settings = settings_or_fail()
    console = terminal_console(highlight=False, soft_wrap=True)
    with _catalog(settings) as catalog:
        if catalog is None:
            fail(_("No saved session to delete yet."), EXIT_USAGE)
        chosen = _chosen(catalog, references or [], older_than)
        if not chosen:
            console.print(escape(_("No session was last used that long ago.")))
            return
        snapshots = SnapshotStore.in_data_dir(settings.paths.data_dir)
        try:
            removals = [SessionRemoval.of(settings, info, snapshots) for info in chosen]
        except (OSError, sqlite3.Error) as exc:
            fail(describe_storage_error(exc, settings.paths) or str(exc), EXIT_FAILED)
        if not yes:
            _confirm(console, removals)
        _remove(settings, catalog, snapshots, removals)
    console.print(
        escape(
            ngettext("Deleted {count} session.", "Deleted {count} sessions.", len(removals)).format(
                count=len(removals)
            )
        )
    )


@dataclass(frozen=True)
class SessionRemoval:
    """One session and what deleting it removes besides its conversation."""

    info: SessionInfo
    workspace: Path | None  # None: it never had one
    workspace_files: int
    file_versions: int  # writes /rewind could go back over

    @classmethod
    def of(cls, settings: Settings, info: SessionInfo, snapshots: SnapshotStore) -> SessionRemoval:
        from generalAgent.tools.workspace import Workspace

        workspace: Path | None = None
        files = 0
        if Workspace.root_of(settings.paths.workspaces_dir, info.id) is not None:
            place = settings.paths.workspaces_dir / info.id  # a link there is removed, never followed
            if place.is_dir() or place.is_symlink():
                workspace = place
                files = sum(1 for path in place.rglob("*") if path.is_file() and not path.is_symlink())
        versions = len(snapshots.writes_since(info.id, 0))
        return cls(info, workspace, files, versions)

    def describe(self) -> str:
        parts = [picker_line(self.info, self.info.folder)]
        if self.file_versions:
            parts.append(
                ngettext(
                    "{count} file version for /rewind",
                    "{count} file versions for /rewind",
                    self.file_versions,
                ).format(count=self.file_versions)
            )
        if self.workspace_files:
            parts.append(
                ngettext(
                    "{count} file in its workspace", "{count} files in its workspace", self.workspace_files
                ).format(count=self.workspace_files)
            )
        return " · ".join(parts)

    def run(self, saver: BaseCheckpointSaver, snapshots: SnapshotStore, catalog: SessionCatalog) -> None:
        """Conversation, file versions, workspace, then the list: a failure leaves it listed."""
        saver.delete_thread(self.info.id)
        snapshots.forget_session(self.info.id)
        if self.workspace is not None and self.workspace.is_symlink():
            self.workspace.unlink()
        elif self.workspace is not None and self.workspace.is_dir():
            shutil.rmtree(self.workspace)  # links inside (skills/) are unlinked, not followed
        catalog.delete(self.info.id)


def _remove(
    settings: Settings, catalog: SessionCatalog, snapshots: SnapshotStore, removals: list[SessionRemoval]
) -> None:
    from generalAgent.graph.checkpoints import close_checkpointer, open_checkpointer

    saver = None
    removal = removals[0]
    try:
        saver = open_checkpointer(settings.paths)
        for removal in removals:
            removal.run(saver, snapshots, catalog)
    except Exception as exc:  # the database, the store or the disk: say which session
        fail(
            _("Session {id} could not be deleted: {reason}. It is still listed; run this again.").format(
                id=removal.info.id, reason=describe_storage_error(exc, settings.paths) or exc
            ),
            EXIT_FAILED,
        )
    finally:
        if saver is not None:
            close_checkpointer(saver)


def _chosen(catalog: SessionCatalog, references: list[str], older_than: int | None) -> list[SessionInfo]:
    chosen: dict[str, SessionInfo] = {}
    for reference in references:
        if reference.strip() in {"", "last"}:  # never "whichever was latest" for a deletion
            fail(_("Name a session by its id (or a unique prefix); /sessions lists them."), EXIT_USAGE)
        try:
            info = catalog.resolve(reference.strip())
        except LookupError as exc:
            fail(str(exc), EXIT_USAGE)
        chosen[info.id] = info
    if older_than is not None:
        for info in catalog.updated_before(time.time() - older_than * DAY_SECONDS):
            chosen.setdefault(info.id, info)
    return list(chosen.values())


def _confirm(console: Console, removals: list[SessionRemoval]) -> None:
    if not sys.stdin.isatty():
        fail(_("Deleting asks first; without a terminal to ask, add --yes."), EXIT_USAGE)
    for removal in removals[:SHOWN_BEFORE_ASKING]:
        console.print("  " + escape(removal.describe()))
    if len(removals) > SHOWN_BEFORE_ASKING:
        console.print(
            "  " + escape(_("… and {count} more").format(count=len(removals) - SHOWN_BEFORE_ASKING))
        )
    question = ngettext(
        "Delete {count} session and everything kept of it? [y/N] ",
        "Delete these {count} sessions and everything kept of them? [y/N] ",
        len(removals),
    ).format(count=len(removals))
    try:
        answer = console.input(escape(question))
    except (EOFError, KeyboardInterrupt):
        console.print()
        answer = ""
    if typed_answer(answer) not in YES:
        console.print(escape(_("Nothing deleted.")))
        raise typer.Exit(1)


@contextmanager
def _catalog(settings: Settings) -> Iterator[SessionCatalog | None]:
    """The session list, or None when nothing was ever saved (no data folder is made to say so)."""
    if not settings.paths.sessions_db.exists():
        yield None
        return
    try:
        catalog = SessionCatalog(settings.paths.sessions_db)
    except SessionStoreError as exc:
        fail(str(exc), EXIT_FAILED)
    try:
        yield catalog
    finally:
        catalog.close()
