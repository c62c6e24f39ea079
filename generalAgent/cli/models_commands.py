"""Local embedding models from the command line: `generalagent models pull [NAME] | list`.

    generalagent models pull                         # the default multilingual model
    generalagent models pull potion-base-8M
    HF_ENDPOINT=https://hf-mirror.com generalagent models pull
    generalagent models list

`pull` is the only thing that downloads a model (search/local_models.py): with a progress
bar, continuing an interrupted download, checking every file's size and checksum. The
model pulled last is the one semantic search uses from then on; pulling an installed model
again downloads nothing (its files are checked) and makes it the active one.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from generalAgent.cli.subcommands import EXIT_FAILED, fail, settings_or_fail
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.i18n import _

app = typer.Typer(
    help=_("Download and choose local embedding models for semantic search (see docs/knowledge.md)."),
    no_args_is_help=True,
    rich_markup_mode="rich",
)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="models")


@app.command("pull", help=_("Download a local embedding model (the default multilingual one without NAME)."))
def pull_command(
    name: Annotated[
        Optional[str],  # noqa: UP045 (typer reads the annotation at run time)
        typer.Argument(help=_("A name from `models list`, or a Hugging Face repository owner/name.")),
    ] = None,
) -> None:
    """Download a local embedding model into the cache and make it the active one."""
    from generalAgent.search.local_models import DEFAULT_MODEL, models_dir, pull, repo_of
    from generalAgent.search.model_download import DownloadError

    settings = settings_or_fail()
    chosen = name or DEFAULT_MODEL
    try:
        repo = repo_of(chosen)
    except ValueError:
        fail(
            _("Unknown model {name}: give a name from `generalagent models list`, or owner/name.").format(
                name=chosen
            ),
            EXIT_FAILED,
        )
    root = models_dir(settings.documents.embedding_models_dir)
    endpoint = settings.documents.hf_endpoint
    out = terminal_console(highlight=False, soft_wrap=True)  # paths whole, never broken
    out.print(
        escape(
            _("Pulling {repo} from {endpoint} into {folder}").format(
                repo=repo, endpoint=endpoint, folder=root
            )
        )
    )
    err = terminal_console(stderr=True, highlight=False)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(path: str, done: int, size: int) -> None:
            if path not in tasks:
                tasks[path] = bar.add_task(escape(path), total=size)
            bar.update(tasks[path], completed=done)

        try:
            folder = pull(chosen, root, endpoint, progress)
        except DownloadError as exc:
            bar.stop()
            fail(_("The download failed: {reason}").format(reason=exc.said.shown(_)), EXIT_FAILED)
    out.print(
        escape(
            _("{repo} is ready in {folder}; semantic search uses it from now on.").format(
                repo=repo, folder=folder
            )
        )
    )
    if settings.documents.embedding_local_model:
        out.print(
            "[yellow]"
            + escape(
                _("EMBEDDING_LOCAL_MODEL={value} is set and wins over the pulled model.").format(
                    value=settings.documents.embedding_local_model
                )
            )
            + "[/]"
        )


@app.command("list", help=_("Show the models you can pull, those installed and the active one."))
def list_command() -> None:
    """Show the catalogue, the installed models and which embedding source is active."""
    from generalAgent.search.embeddings import describe_source
    from generalAgent.search.local_models import CATALOGUE, DEFAULT_MODEL, installed, models_dir

    settings = settings_or_fail()
    root = models_dir(settings.documents.embedding_models_dir)
    present = {m.repo: m for m in installed(root)}
    table = Table(box=None, pad_edge=False)
    for column in (_("name"), _("licence"), _("languages"), _("size"), _("state")):
        table.add_column(column)
    shown = set()
    for known in CATALOGUE:
        found = present.get(known.repo)
        shown.add(known.repo)
        state = _state(found.active if found else None)
        label = known.name + (" " + _("(default)") if known.name == DEFAULT_MODEL else "")
        table.add_row(escape(label), known.licence, escape(_(known.languages)), known.size, state)
    for repo, found in present.items():
        if repo not in shown:
            table.add_row(escape(repo), "", "", f"{found.bytes / 1e6:.0f} MB", _state(found.active))
    console = Console(highlight=False)
    console.print(table)
    console.print(escape(_("Models folder: {folder}").format(folder=root)))
    template, fields = describe_source(settings)
    console.print(escape(_("Semantic search uses: {source}").format(source=_(template).format(**fields))))


def _state(active: bool | None) -> str:
    if active is None:
        return _("not installed")
    return "[green]" + _("installed, active") + "[/]" if active else _("installed")
