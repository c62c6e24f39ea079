"""`generalagent index` and `generalagent search`: document search without a model.

    generalagent index docs/ "reports/*.pdf" notes.md   # files, folders, globs
    generalagent index --stats
    generalagent index --cleanup --days 30

Both commands are registered here; `index` is here too, with its progress bars and the
embedding of what it indexed, `search` in cli/search_commands.py. Progress and messages
go to stderr, results to stdout, so `--json` output can be piped.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from generalAgent.cli.progress_bar import progress_bar
from generalAgent.cli.search_commands import search_command
from generalAgent.cli.subcommands import EXIT_FAILED, EXIT_USAGE, fail, settings_from
from generalAgent.cli.terminal_text import one_line, terminal_console
from generalAgent.config.settings import Settings
from generalAgent.documents import open_index
from generalAgent.documents.convert import soffice
from generalAgent.documents.folder_walk import FolderFiles, glob_anchor, glob_files, leads_out_of, walk_folder
from generalAgent.documents.images import IMAGE_SUFFIXES
from generalAgent.documents.index import SearchIndex
from generalAgent.documents.reading import OLD_OFFICE, SEARCHABLE_SUFFIXES, DocumentError
from generalAgent.i18n import _, ngettext
from generalAgent.search.embeddings import EmbeddingError, embeddings_from_settings
from generalAgent.search.lookup import INDEX_ERRORS
from generalAgent.search.storage import VectorSource

# Documents with more chunks than this get their own progress bar with a chunks/s rate.
LARGE_DOCUMENT_CHUNKS = 200


def register(app: typer.Typer) -> None:
    app.command("index", help=_("Index documents for search (files, folders, globs)."))(index_command)
    app.command(
        "search", help=_("Search a document, or every document under a folder, from the command line.")
    )(search_command)


def expand_paths(
    patterns: list[str], skipped: list[tuple[Path, str]] | None = None
) -> tuple[list[Path], list[str], list[str]]:
    """Files named by `patterns` (files, folders walked recursively, globs), problems (a
    name that matches nothing) and notices. A folder or a glob never leads out of itself
    through a symbolic link: such a link is skipped with a notice (documents/folder_walk.py).
    Files a folder walk leaves out go to `skipped` with the reason (hidden ones silently)."""
    files: list[Path] = []
    problems: list[str] = []
    notices: list[str] = []
    readable = SEARCHABLE_SUFFIXES | (OLD_OFFICE.keys() if soffice() else set())

    def searchable(path: Path) -> bool:
        if path.suffix.lower() in readable:
            return True
        if skipped is not None:
            skipped.append((path, skip_reason(path)))
        return False

    cwd = Path.cwd()
    for pattern in patterns:
        written = Path(pattern).expanduser()
        start = glob_anchor(written)[0] if any(ch in pattern for ch in "*?[") else written
        if leads_out_of(start, cwd):
            found = FolderFiles(links_out=[start])
        elif any(ch in pattern for ch in "*?["):
            found = glob_files(written, hidden=False)
            if not found.files and not found.links_out:
                problems.append(_("{pattern}: no file matches").format(pattern=pattern))
        else:
            path = written
            if path.is_dir():
                found = walk_folder(path, include=searchable)
            elif path.is_file():
                found = FolderFiles(files=[path])
            else:
                problems.append(_("{pattern}: no such file or folder").format(pattern=pattern))
                continue
        files += found.files
        notices += [
            _("{pattern}: {link} was not indexed: it is a link to a place outside the folder").format(
                pattern=pattern, link=link
            )
            for link in found.links_out
        ]
        notices += [
            _("{pattern}: {folder} was not indexed: it holds generalAgent's own data (DATA_DIR)").format(
                pattern=pattern, folder=folder
            )
            for folder in found.data_homes
        ]
    unique = list(dict.fromkeys(p.resolve() for p in files))
    return unique, problems, notices


def skip_reason(path: Path) -> str:
    """Why a folder walk does not index `path`, in a few words."""
    suffix = path.suffix.lower()
    if suffix in OLD_OFFICE:
        return _("old or WPS Office file: install LibreOffice to index it")
    if suffix in IMAGE_SUFFIXES:
        return _("image: not indexed (attach it to show it to a vision model)")
    return _("not a format generalAgent reads ({suffix})").format(suffix=suffix or _("no suffix"))


def index_command(
    ctx: typer.Context,
    paths: Annotated[list[str] | None, typer.Argument(help=_("Files, folders or globs"))] = None,
    stats: Annotated[bool, typer.Option("--stats", help=_("Show what the index holds"))] = False,
    cleanup: Annotated[
        bool, typer.Option("--cleanup", help=_("Delete documents indexed more than --days ago"))
    ] = False,
    days: Annotated[int, typer.Option("--days", min=0, help=_("Age for --cleanup"))] = 30,
    force: Annotated[bool, typer.Option("--force", help=_("Re-index unchanged files too"))] = False,
    as_json: Annotated[bool, typer.Option("--json", help=_("Machine-readable output"))] = False,
) -> None:
    settings = settings_from(ctx)
    err = terminal_console(stderr=True)
    out = terminal_console()
    if not paths and not stats and not cleanup:
        fail(_("Nothing to do: give files or folders to index, or --stats / --cleanup."), EXIT_USAGE)
    report: dict[str, Any] = {}
    failed = False
    try:
        vectors = embeddings_from_settings(settings)
        with open_index(settings) as index:
            if cleanup:
                report["removed"] = index.cleanup_old(days)
                if not as_json:
                    removed = report["removed"]
                    err.print(
                        ngettext(
                            "Removed {count} document indexed over {days} days ago.",
                            "Removed {count} documents indexed over {days} days ago.",
                            removed,
                        ).format(count=removed, days=days)
                    )
            if paths:
                skipped: list[tuple[Path, str]] = []
                files, problems, notices = expand_paths(paths, skipped)
                if skipped:
                    report["skipped"] = [{"path": str(p), "reason": why} for p, why in skipped]
                    if not as_json:
                        _print_skipped(err, skipped)
                for problem in [*notices, *problems]:
                    err.print(f"[yellow]{escape(problem)}[/yellow]")
                report["files"] = _index_files(index, files, err, force)
                failed = bool(problems) or any(r["status"] == "failed" for r in report["files"])
                if vectors is not None:
                    report["embedded"] = _embed_pending(index, vectors, settings, err)
            if stats:
                report["stats"] = index.stats()
    except INDEX_ERRORS as exc:
        fail(str(exc), EXIT_FAILED)
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    elif "stats" in report:
        out.print(_stats_table(report["stats"]))
    if failed:
        raise typer.Exit(EXIT_FAILED)


def _embed_pending(index: SearchIndex, vectors: VectorSource, settings: Settings, err: Console) -> int:
    """Embed the chunks without a vector (search/background_embedding.py), with a progress
    bar; an interruption or a failing endpoint keeps what was embedded for the next run."""
    from generalAgent.search.background_embedding import embed_pending

    with progress_bar(err) as progress:
        task = progress.add_task(escape(_("embedding ({model})").format(model=vectors.model)), total=None)
        try:
            done = embed_pending(
                index.store,
                vectors,
                settings.documents.embedding_batch_size,
                lambda done, total: progress.update(task, completed=done, total=total),
            )
        except EmbeddingError as exc:
            progress.stop()
            err.print(
                "[yellow]"
                + escape(
                    _("Embeddings failed ({reason}); keyword search works, the next run continues.").format(
                        reason=exc.said.shown(_, ngettext)
                    )
                )
                + "[/yellow]"
            )
            return 0
    if done:
        err.print(
            escape(ngettext("Embedded {count} chunk.", "Embedded {count} chunks.", done).format(count=done))
        )
    return done


def _print_skipped(err: Console, skipped: list[tuple[Path, str]]) -> None:
    """One line per reason, with how many files and a few of their names."""
    by_reason: dict[str, list[Path]] = {}
    for path, why in skipped:
        by_reason.setdefault(why, []).append(path)
    for why, paths in by_reason.items():
        names = ", ".join(p.name for p in paths[:3]) + (", …" if len(paths) > 3 else "")
        line = ngettext(
            "Skipped {count} file ({names}): {reason}",
            "Skipped {count} files ({names}): {reason}",
            len(paths),
        )
        err.print(f"[yellow]{escape(line.format(count=len(paths), names=names, reason=why))}[/yellow]")


def _index_files(index: SearchIndex, files: list[Path], err: Console, force: bool) -> list[dict[str, Any]]:
    """Index `files` in two passes: every file's text first (a PDF read without its tables,
    so the whole set is searchable at that cost, from this or any other process), then
    the tables of the PDFs that may hold some, each replacing its PDF's text chunks whole
    (documents/index.py). Stopped in between, the text stays searchable and the next run
    reads the tables."""
    results: list[dict[str, Any]] = []
    pending: list[tuple[Path, dict[str, Any]]] = []
    began = time.perf_counter()
    with progress_bar(err, rate=True) as progress:
        overall = progress.add_task(escape(_("files")), total=len(files), rate="")
        for path in files:
            bar = _DocumentBar(progress, path.name)
            try:
                document = index.index_file(path, force=force, progress=bar.update, tables_later=True)
            except DocumentError as exc:
                err.print(f"[red]✗[/red] {escape(exc.shown(_, ngettext))}")  # --json keeps the English
                results.append({"path": str(path), "status": "failed", "error": str(exc)})
            else:
                status = "unchanged" if document.reused else "indexed"
                results.append(
                    {
                        "path": str(path),
                        "status": status,
                        "chunks": document.total_chunks,
                        "chars": document.total_chars,
                        "seconds": round(document.seconds, 3),
                        **({"warning": document.warning.english()} if document.warning else {}),
                        **({"notes": document.notes} if document.notes else {}),
                    }
                )
                mark = "[dim]=[/dim]" if document.reused else "[green]✓[/green]"
                if document.reused:
                    line = _("{path}: unchanged").format(path=one_line(str(path)))
                else:
                    line = ngettext(
                        "{path}: {count} chunk, {chars} chars, {seconds} s",
                        "{path}: {count} chunks, {chars} chars, {seconds} s",
                        document.total_chunks,
                    ).format(
                        path=one_line(str(path)),
                        count=document.total_chunks,
                        chars=f"{document.total_chars:,}",
                        seconds=f"{document.seconds:.2f}",
                    )
                err.print(f"{mark} {escape(line)}")
                # --json keeps the English (above); a person reads the UI language.
                notes = [note.shown(_, ngettext) for note in document.said_notes]
                warning = document.warning.shown(_, ngettext) if document.warning else ""
                for said in (" ".join(notes), warning):
                    if said:
                        err.print(f"[yellow]{escape(said)}[/yellow]")
                if document.tables_pending:
                    pending.append((path, results[-1]))
            bar.close()
            progress.advance(overall)
    if pending:
        _read_tables(index, pending, err)
    elapsed = time.perf_counter() - began
    indexed = [r for r in results if r["status"] == "indexed"]
    chars = sum(r["chars"] for r in indexed)
    err.print(
        _("{indexed} indexed, {unchanged} unchanged, {failed} failed").format(
            indexed=len(indexed),
            unchanged=sum(r["status"] == "unchanged" for r in results),
            failed=sum(r["status"] == "failed" for r in results),
        )
        + (_(" ({rate} chars/s)").format(rate=f"{chars / max(elapsed, 1e-9):,.0f}") if indexed else "")
    )
    return results


def _read_tables(index: SearchIndex, pending: list[tuple[Path, dict[str, Any]]], err: Console) -> None:
    """The second pass of `_index_files`: each PDF's tables read, its result updated."""
    with progress_bar(err, rate=True) as progress:
        overall = progress.add_task(escape(_("tables")), total=len(pending), rate="")
        for path, result in pending:
            bar = _DocumentBar(progress, path.name)
            try:
                document = index.index_file(path, progress=bar.update, tables_later=False)
            except DocumentError as exc:  # changed into something unreadable since the first pass
                err.print(f"[red]✗[/red] {escape(exc.shown(_, ngettext))}")
                result.update(status="failed", error=str(exc))
            else:
                result.update(
                    chunks=document.total_chunks,
                    chars=document.total_chars or result.get("chars", 0),
                    tables_seconds=round(document.seconds, 3),
                )
                line = ngettext(
                    "{path}: tables read, {count} chunk, {seconds} s",
                    "{path}: tables read, {count} chunks, {seconds} s",
                    document.total_chunks,
                ).format(
                    path=one_line(str(path)), count=document.total_chunks, seconds=f"{document.seconds:.2f}"
                )
                err.print(f"[green]✓[/green] {escape(line)}")
            bar.close()
            progress.advance(overall)


class _DocumentBar:
    """A progress bar with a chunks/s rate, shown only for documents with many chunks."""

    def __init__(self, progress: Progress, name: str) -> None:
        self.progress = progress
        self.name = name
        self.started = time.perf_counter()
        self.stage = ""
        self.task: Any = None

    def update(self, stage: str, done: int, total: int) -> None:
        ocr = stage == "ocr"  # pages read by OCR: seconds each, so always worth a bar
        if total < LARGE_DOCUMENT_CHUNKS and not ocr:
            return
        if self.task is None or self.stage != stage:
            if self.task is not None:
                self.progress.remove_task(self.task)
            self.task = self.progress.add_task(escape(self.name), total=total, rate="")
            self.stage, self.started = stage, time.perf_counter()
        rate = done / max(time.perf_counter() - self.started, 1e-9)
        unit = _("pages/s, OCR") if ocr else _("chunks/s ({stage})").format(stage=stage)
        self.progress.update(self.task, completed=done, total=total, rate=f"{rate:,.1f} {unit}")

    def close(self) -> None:
        if self.task is not None:
            self.progress.remove_task(self.task)


def _stats_table(stats: dict[str, Any]) -> Table:
    table = Table(title=_("Search index"), show_header=False)
    table.add_row(_("Documents"), f"{stats['total_files']:,}")
    table.add_row(_("Chunks"), f"{stats['total_chunks']:,}")
    table.add_row(_("Documents' size"), _("{bytes:,} bytes").format(bytes=stats["total_size_bytes"]))
    table.add_row(_("Knowledge items"), f"{stats['knowledge_items']:,}")
    table.add_row(_("Database"), stats["db_path"])
    table.add_row(_("Database size"), _("{bytes:,} bytes").format(bytes=stats["db_size_bytes"]))
    return table
