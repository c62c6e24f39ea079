"""`generalagent kb ...`: the knowledge base from the command line, without a model.

    generalagent kb add notes/release.md --domain ops --tag release
    generalagent kb add --title "VPN" --content "Use the office VPN for ..." --domain it
    generalagent kb search "发布 回滚" --domain ops --json
    generalagent kb search 报销审批 --or "expense approval"
    generalagent kb list --domain ops
    generalagent kb show ID [--chunks 0:10]
    generalagent kb delete ID [--yes]  # asks first without --yes
    generalagent kb domains
    generalagent kb sync            # import changed built-in knowledge (knowledge/<domain>/)

Messages go to stderr, results to stdout; --json prints machine-readable JSON.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from generalAgent.cli.invocation import command_hint
from generalAgent.cli.query_phrasings import OtherPhrasings, query_with_phrasings
from generalAgent.cli.search_view import render_knowledge_hits
from generalAgent.cli.subcommands import EXIT_FAILED, EXIT_USAGE, fail, settings_from
from generalAgent.cli.terminal_text import terminal_console, typed_answer
from generalAgent.documents.extract import extract_document
from generalAgent.documents.reading import DocumentError
from generalAgent.i18n import _, ngettext
from generalAgent.knowledge import STORE_ERRORS, KnowledgeStore, open_store, search_knowledge
from generalAgent.knowledge.builtin import import_builtin_knowledge
from generalAgent.knowledge.render import render_item
from generalAgent.search.budgets import ContentBudget
from generalAgent.search.lookup import INDEX_ERRORS
from generalAgent.tools.errors import said_of

kb = typer.Typer(help=_("The knowledge base: add, search, list, show, delete."), no_args_is_help=True)

Domain = Annotated[str | None, typer.Option("--domain", "-d", help=_("Only this domain"))]
Category = Annotated[str | None, typer.Option("--category", "-c", help=_("Only this category"))]
Tags = Annotated[list[str] | None, typer.Option("--tag", "-t", help=_("Tag (repeatable)"))]
AsJson = Annotated[bool, typer.Option("--json", help=_("Machine-readable output"))]
Space = Annotated[
    str | None,
    typer.Option("--space", "-s", help=_("A team space of yours (SEARCH_TEAMS); default: your own")),
]


def register(app: typer.Typer) -> None:
    app.add_typer(kb, name="kb")


def _store(ctx: typer.Context) -> KnowledgeStore:
    return open_store(settings_from(ctx))


# Ids are 32 hex digits; 12 tell 10,000 items apart with a chance of a clash under one in a
# million, and a clash only asks for more digits.
SHORT_ID_CHARS = 12


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def shown(exc: BaseException) -> str:
    """A store's refusal in the UI language when it carries its sentence as data."""
    said = said_of(exc)
    return said if isinstance(said, str) else said.shown(_, ngettext)


@kb.command("add", help=_("Add a note (--title/--content) or the text of a file."))
def add_command(
    ctx: typer.Context,
    file: Annotated[Path | None, typer.Argument(help=_("A document whose text to add"))] = None,
    title: Annotated[str | None, typer.Option("--title", help=_("Title (default: file name)"))] = None,
    content: Annotated[str | None, typer.Option("--content", help=_("Text (not a file)"))] = None,
    domain: Annotated[str, typer.Option("--domain", "-d", help=_("Domain"))] = "general",
    category: Annotated[str, typer.Option("--category", "-c", help=_("Category"))] = "",
    tags: Tags = None,
    space: Space = None,
    as_json: AsJson = False,
) -> None:
    """Add a note (--title/--content) or the text of a file."""
    if (file is None) == (content is None):
        fail(_("Give either a FILE or --content (with --title)."), EXIT_USAGE)
    settings = settings_from(ctx)
    source_path = None
    blocks = None
    if file is not None:
        try:
            blocks = extract_document(file, settings.documents).blocks  # pages kept per chunk
        except DocumentError as exc:
            fail(exc.shown(_, ngettext), EXIT_FAILED)
        title = title or file.name
        source_path = str(file.resolve())
    try:
        with open_store(settings) as store:
            item = store.add_knowledge(
                title or "",
                content or "",
                domain=domain,
                category=category,
                tags=tags or [],
                source="file" if file else "user",
                source_path=source_path,
                blocks=blocks,
                space=space or "",
            )
            chunks = store.count_chunks(item.id)
    except STORE_ERRORS as exc:
        fail(shown(exc), EXIT_FAILED)
    if as_json:
        _print_json({**item.to_dict(), "chunks": chunks})
    else:
        added = _("Added {title} to {domain}: id {id}, {chunks} chunks.").format(
            title=repr(item.title), domain=item.domain, id=item.id, chunks=chunks
        )
        terminal_console().print(added, markup=False)


@kb.command("search", help=_("Search the knowledge base (notes, built-in knowledge and indexed files)."))
def search_command(
    ctx: typer.Context,
    words: Annotated[list[str], typer.Argument(help=_("Words to look for, quoted or not"))],
    also: OtherPhrasings = None,
    domain: Domain = None,
    category: Category = None,
    tags: Tags = None,
    max_results: Annotated[
        int | None,
        typer.Option(
            "-n", "--max-results", min=1, max=20, help=_("Items (default SEARCH_MAX_RESULTS_DEFAULT)")
        ),
    ] = None,
    sort: Annotated[str, typer.Option("--sort", help=_("relevance | date | title"))] = "relevance",
    space: Space = None,
    as_json: AsJson = False,
) -> None:
    """Search the knowledge base (notes, built-in knowledge and indexed files)."""
    settings = settings_from(ctx)
    if sort not in ("relevance", "date", "title"):
        fail(_("--sort must be relevance, date or title."), EXIT_USAGE)
    # `kb search 报销 审批` is one query of two words, as when quoted; --or adds phrasings.
    query = query_with_phrasings(" ".join(words), also)
    try:
        with open_store(settings) as store:
            result = search_knowledge(
                store,
                query,
                domain=domain,
                category=category,
                tags=tags,
                max_results=max_results,
                sort=sort,
                budget=ContentBudget.from_settings(settings.documents),
                space=space,
            )
    except STORE_ERRORS as exc:  # the index's errors, and a space the user is not in
        fail(shown(exc), EXIT_FAILED)
    if as_json:
        _print_json(asdict(result))
    else:
        terminal_console().print(render_knowledge_hits(result, command_hint()), highlight=False)
    if not result.results:
        raise typer.Exit(1)


@kb.command("list", help=_("List items, most recently updated first."))
def list_command(
    ctx: typer.Context,
    domain: Domain = None,
    category: Category = None,
    tags: Tags = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 50,
    offset: Annotated[int, typer.Option("--offset", min=0)] = 0,
    as_json: AsJson = False,
) -> None:
    """List items, most recently updated first."""
    try:
        with _store(ctx) as store:
            items = store.list_knowledge(domain, category, tags, limit=limit, offset=offset)
            total = store.count_knowledge(domain)
    except INDEX_ERRORS as exc:
        fail(shown(exc), EXIT_FAILED)
    if as_json:
        _print_json(
            {
                "total": total,
                "items": [
                    {k: v for k, v in i.to_dict().items() if k != "content"} | {"chars": len(i.content)}
                    for i in items
                ],
            }
        )
        return
    table = Table(
        title=_("Knowledge ({shown} of {total})").format(shown=len(items), total=total),
        caption=_("ids shortened to {chars} characters: kb show and kb delete take any unique start").format(
            chars=SHORT_ID_CHARS
        ),
    )
    table.add_column(_("id"), no_wrap=True)
    for column in (_("domain"), _("category"), _("title"), _("tags"), _("updated")):
        table.add_column(column)
    for item in items:
        table.add_row(
            item.id[:SHORT_ID_CHARS],
            escape(item.domain),
            escape(item.category),
            escape(item.title),
            escape(", ".join(item.tags)),
            item.updated_at,
        )
    terminal_console().print(table)


@kb.command("show", help=_("Show one item, or a range of its chunks."))
def show_command(
    ctx: typer.Context,
    item_id: Annotated[str, typer.Argument(help=_("Item id (or its start, as kb list shows it)"))],
    chunks: Annotated[str | None, typer.Option("--chunks", help=_("Range, e.g. 0:10"))] = None,
    as_json: AsJson = False,
) -> None:
    """Show one item, or a range of its chunks."""
    settings = settings_from(ctx)
    try:
        with open_store(settings) as store:
            item_id = store.resolve_id(item_id)
            item = store.get_knowledge_item(item_id)
            if item is None:
                fail(_("No knowledge item {id}.").format(id=repr(item_id)), EXIT_FAILED)
            total = store.count_chunks(item_id)
            selected = None
            if chunks is not None:
                first, _colon, last = chunks.partition(":")
                try:
                    start = int(first or 0)
                    end = int(last) if last else total
                except ValueError:
                    fail(_("--chunks takes a range such as 0:10."), EXIT_USAGE)
                selected = store.get_chunks_for_item(item_id, start, end - 1)
    except STORE_ERRORS as exc:
        fail(shown(exc), EXIT_FAILED)
    if as_json:
        data: dict[str, Any] = {**item.to_dict(), "total_chunks": total}
        if selected is not None:
            data["chunks"] = [c.to_dict() for c in selected]
        _print_json(data)
    else:
        limit = settings.documents.max_result_content_size
        terminal_console().print(
            escape(render_item(item, selected, total, limit, _, ngettext)), highlight=False
        )


@kb.command("delete", help=_("Delete an item with its chunks."))
def delete_command(
    ctx: typer.Context,
    item_id: Annotated[str, typer.Argument(help=_("Item id (or its start)"))],
    yes: Annotated[bool, typer.Option("--yes", "-y", help=_("Delete without asking."))] = False,
) -> None:
    """Delete an item with its chunks, once the user said yes (or gave --yes)."""
    try:
        with _store(ctx) as store:
            item_id = store.resolve_id(item_id)
            item = store.get_knowledge_item(item_id)
            if item is None:
                fail(_("No knowledge item {id}.").format(id=repr(item_id)), EXIT_FAILED)
            if not yes and not _confirmed(item.title, item_id):
                fail(_("Nothing deleted."), EXIT_FAILED)
            deleted = store.delete_knowledge(item_id)
    except STORE_ERRORS as exc:
        fail(shown(exc), EXIT_FAILED)
    if not deleted:
        fail(_("No knowledge item {id}.").format(id=repr(item_id)), EXIT_FAILED)
    terminal_console().print(escape(_("Deleted {id}.").format(id=item_id)))


def _confirmed(title: str, item_id: str) -> bool:
    """The user's yes at the terminal; without one (a script), the reason and exit 2."""
    if not sys.stdin.isatty():
        fail(_("kb delete asks before deleting: add --yes to delete from a script."), EXIT_USAGE)
    question = _("Delete {title} ({id})? [y/N] ").format(title=title, id=item_id[:SHORT_ID_CHARS])
    try:
        answer = terminal_console().input(escape(question))
    except (EOFError, KeyboardInterrupt):
        return False
    return typed_answer(answer) in {"y", "yes", "是", "是的", "好", "删除"}


@kb.command("domains", help=_("Domains with their item counts, categories and tags."))
def domains_command(ctx: typer.Context, as_json: AsJson = False) -> None:
    """Domains with their item counts, categories and tags."""
    try:
        with _store(ctx) as store:
            rows: list[dict[str, Any]] = [
                {
                    "domain": d,
                    "items": store.count_knowledge(d),
                    "categories": store.get_categories(d),
                    "tags": store.get_tags(d),
                }
                for d in store.get_domains()
            ]
    except INDEX_ERRORS as exc:
        fail(shown(exc), EXIT_FAILED)
    if as_json:
        _print_json(rows)
        return
    table = Table(title=_("Domains"))
    for column in (_("domain"), _("items"), _("categories"), _("tags")):
        table.add_column(column)
    for row in rows:
        table.add_row(row["domain"], str(row["items"]), ", ".join(row["categories"]), ", ".join(row["tags"]))
    terminal_console().print(table)


@kb.command(
    "sync", help=_("Import built-in knowledge (knowledge/<domain>/*.md) that changed since last time.")
)
def sync_command(ctx: typer.Context) -> None:
    """Import built-in knowledge (knowledge/<domain>/*.md) that changed since last time."""
    settings = settings_from(ctx)
    try:
        with open_store(settings) as store:
            report = import_builtin_knowledge(store, settings.paths.knowledge_dir)
    except INDEX_ERRORS as exc:
        fail(shown(exc), EXIT_FAILED)
    terminal_console().print(report.summary(_) if report.changed else _("Built-in knowledge is up to date."))
    if report.failed:
        raise typer.Exit(1)
