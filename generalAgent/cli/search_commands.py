"""`generalagent search`: passages of a file, a folder, a glob or the whole index, without a model.

    generalagent search reports/q3.pdf "营收增长" -n 3 --json
    generalagent search reports/ "营收增长" --or "revenue growth"   # every document of a folder
    generalagent search "reports/*.pdf" "营收增长"                   # the files a glob names
    generalagent search --all "营收增长"                             # every indexed document
    generalagent search "营收增长"                                   # the working folder
    generalagent search manual.pdf named pipe                       # words need no quotes

The first argument is the target when it names a file or folder (or is a glob); otherwise
every argument is a word and the working folder is searched.

A file, a folder or a glob is indexed first where it changed (--all reads nothing);
`generalagent index` (cli/documents_commands.py) indexes without searching. Progress and
messages go to stderr, results to stdout, so `--json` output can be piped.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from generalAgent.cli.invocation import command_hint
from generalAgent.cli.progress_bar import progress_bar
from generalAgent.cli.search_view import query_words, render_file_hits, render_folder_hits
from generalAgent.cli.subcommands import EXIT_FAILED, EXIT_USAGE, fail, settings_from
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.config.settings import DocumentSettings, Settings
from generalAgent.display import Message
from generalAgent.documents.folder import FolderSearch, search_files, search_folder, search_indexed
from generalAgent.documents.folder_walk import glob_files
from generalAgent.documents.index import SearchIndex
from generalAgent.documents.reading import SEARCHABLE_SUFFIXES
from generalAgent.documents.search import (
    MAX_RESULTS_ASKED,
    FileSearch,
    SearchFailure,
    line_numbers,
    search_document,
)
from generalAgent.i18n import _, ngettext
from generalAgent.search.embeddings import embeddings_from_settings
from generalAgent.search.lookup import INDEX_ERRORS
from generalAgent.search.query import MAX_PHRASINGS
from generalAgent.search.results import SearchResult
from generalAgent.search.store import team_store

# What `search -n` says it defaults to: the setting's own default (SEARCH_MAX_RESULTS_DEFAULT).
DEFAULT_RESULTS = DocumentSettings.model_fields["search_max_results_default"].default


# What a shell reads as more than letters: an argument holding one is quoted in a hint.
_SHELL_SPECIAL = re.compile(r"""[\s'"\\$`!*?\[\]()&;|<>#~{}]""")


def search_command(
    ctx: typer.Context,
    arguments: Annotated[
        list[str],
        typer.Argument(
            help=_(
                '[TARGET] WORDS...: a file, a folder or a glob such as "docs/*.pdf" (the working folder '
                "when left out, or when the first word names none), then the words, quoted or not"
            )
        ),
    ],
    also: Annotated[
        list[str] | None,
        typer.Option("--or", help=_("Another phrasing of the query, searched with it (repeatable)")),
    ] = None,
    max_results: Annotated[
        int | None,
        typer.Option(
            "-n",
            "--max-results",
            min=1,
            help=_(
                "Passages to show (default {default} in a file, {many} across files; at most {most}, "
                "within the content budget)"
            ).format(default=DEFAULT_RESULTS, many=2 * DEFAULT_RESULTS, most=MAX_RESULTS_ASKED),
        ),
    ] = None,
    everything: Annotated[
        bool, typer.Option("--all", help=_("Search every indexed document instead of a target"))
    ] = False,
    regex: Annotated[
        bool, typer.Option("--regex", help=_("Grep one file with a regular expression"))
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help=_("Machine-readable output"))] = False,
) -> None:
    settings = settings_from(ctx)
    err = terminal_console(stderr=True)
    target, words = target_and_words(arguments, everything)
    if everything and len(arguments) > 1 and target_and_words(arguments, False)[0] is not None:
        fail(_("With --all, give only the words to look for."), EXIT_USAGE)
    if not words.strip():
        fail(_("Give the words to look for, after a file or folder if not the working folder."), EXIT_USAGE)
    if len(arguments) == 1 and not everything:
        _refuse_a_lone_target(arguments[0])
    if target is None and not everything and len(arguments) > 1 and _words_before_target(arguments):
        fail(
            _(
                "{target} is not a file or folder; the target comes first: {command} search {path} {words}"
            ).format(
                target=arguments[0],
                command=command_hint(),
                path=_typed(arguments[-1]),
                words=" ".join(_typed(word) for word in arguments[:-1]),
            ),
            EXIT_USAGE,
        )
    given = list(dict.fromkeys(q for q in [words, *(also or [])] if q.strip()))
    if len(given) > MAX_PHRASINGS:
        # The search (query.phrasings) keeps the first MAX_PHRASINGS and would drop the rest
        # unsaid; a phrasing left out changes what is searched, so nothing runs (as `kb search -n 30`
        # or a wrong `--sort` is refused) and the user chooses which to drop.
        fail(
            _(
                "A search takes at most {most} phrasings (the words and {more} --or); {count} were given: "
                "leave some out."
            ).format(most=MAX_PHRASINGS, more=MAX_PHRASINGS - 1, count=len(given)),
            EXIT_USAGE,
        )
    query: str | list[str] = [words, *(also or [])] if also else words
    many = everything or (target is not None and _is_glob(target))
    path = Path(target) if target is not None else Path(".")
    if regex and (many or path.is_dir()):
        fail(_("--regex searches one file: give a file, not a folder."), EXIT_USAGE)
    if many:
        _search_many(settings, target, query, max_results, as_json)
        return
    if path.is_dir():
        _search_folder(settings, path, query, max_results, as_json, err)
        return
    vectors = embeddings_from_settings(settings)
    try:
        with team_store(settings.paths, settings.documents) as team:
            result = search_document(
                settings.paths.indexes_db,
                settings.documents,
                path,
                query,
                max_results,
                regex=regex,
                vectors=vectors,
                whole_call=True,
                **team,
            )
    except SearchFailure as exc:
        fail(exc.shown(_, ngettext), EXIT_FAILED)
    except INDEX_ERRORS as exc:
        fail(str(exc), EXIT_FAILED)
    _tell_unembedded(_unembedded(settings, result), _typed(str(path)), err)
    if as_json:
        print(json.dumps(_english_warning(asdict(result), result.warning), ensure_ascii=False, indent=2))
    else:
        lines = _text_lines(settings, result.results, [] if result.regex else result.query)
        terminal_console().print(render_file_hits(result, lines), highlight=False)
    if not result.results:
        raise typer.Exit(EXIT_FAILED)


def _refuse_a_lone_target(argument: str) -> None:
    """`search n.md` alone: a file or folder named with no words after it would otherwise be
    searched for as the words (in the working folder), which no one typing it means."""
    named = Path(argument).expanduser()
    if not named.exists():
        return
    said = (
        _(
            "{target} is a folder: give the words to look for after it ({command} search {path} WORDS), "
            "or to look for the name itself, the folder first ({command} search . {path})."
        )
        if named.is_dir()
        else _(
            "{target} is a file: give the words to look for after it ({command} search {path} WORDS), "
            "or to look for the name itself, the folder first ({command} search . {path})."
        )
    )
    fail(said.format(target=argument, command=command_hint(), path=_typed(argument)), EXIT_USAGE)


def _english_warning(data: dict[str, Any], warning: Message | None) -> dict[str, Any]:
    """--json says why semantic search is off in English, as a sentence (not a Message's parts)."""
    return {**data, "warning": warning.english() if warning else ""}


def _without_exceptions(fields: list[tuple[str, Any]]) -> dict[str, Any]:
    return {name: value for name, value in fields if not isinstance(value, BaseException)}


def _typed(argument: str) -> str:
    """`argument` as it would be typed in a shell: quoted only when it must be (`营收` stays)."""
    return shlex.quote(argument) if _SHELL_SPECIAL.search(argument) else argument


def target_and_words(arguments: Sequence[str], everything: bool) -> tuple[str | None, str]:
    """The target (a file, folder or glob; None: the working folder or, with --all, every
    indexed document) and the words of `search [TARGET] WORDS...`. The first argument is
    the target when there are more and it names something that exists, is a glob, or is
    written as a path (a folder separator, `~`, or a document's suffix: a mistyped
    `manual.pdf` is then named as missing instead of searched for as a word); the words
    are the rest joined by spaces, so `search manual.pdf named pipe` needs no quotes."""
    if everything or len(arguments) < 2:
        return None, " ".join(arguments)
    first = arguments[0]
    if _is_glob(first) or _written_as_path(first) or Path(first).expanduser().exists():
        return first, " ".join(arguments[1:])
    return None, " ".join(arguments)


def _written_as_path(argument: str) -> bool:
    return "/" in argument or argument.startswith("~") or Path(argument).suffix.lower() in SEARCHABLE_SUFFIXES


def _is_glob(argument: str) -> bool:
    return any(ch in argument for ch in "*?[")


def _words_before_target(arguments: Sequence[str]) -> bool:
    """Whether `search 营收 .` was typed for `search . 营收`: the first names nothing (the
    caller found no target), the last is a file or folder."""
    return Path(arguments[-1]).expanduser().exists()


def _text_lines(
    settings: Settings, results: Sequence[SearchResult], query: str | Sequence[str]
) -> dict[tuple[str, int], int]:
    """The line of each passage that has no other place (plain text, code): (item, chunk) ->
    the line where the first word of the query occurs in it (else where it starts), so a
    person can open the file there."""
    words = [w.lower() for q in ([query] if isinstance(query, str) else query) for w in query_words(q)]
    wanted: dict[str, dict[int, int]] = {}
    for result in results:
        for passage in result.matched:
            if not passage.place:
                text = passage.text.lower()
                found = [at for at in (text.find(w) for w in words) if at >= 0]
                offset = passage.start + (min(found) if found else 0)
                wanted.setdefault(result.item_id, {})[passage.chunk_index] = offset
    if not wanted:
        return {}
    lines: dict[tuple[str, int], int] = {}
    with (
        team_store(settings.paths, settings.documents) as team,
        SearchIndex(settings.paths.indexes_db, settings.documents, store=team["store"]) as index,
    ):
        for item_id, starts in wanted.items():
            at_line = line_numbers(index.db, item_id, list(starts.values()))
            lines.update({(item_id, chunk): at_line[start] for chunk, start in starts.items()})
    return lines


def _search_many(
    settings: Settings,
    pattern: str | None,
    query: str | list[str],
    max_results: int | None,
    as_json: bool,
) -> None:
    """`generalagent search "docs/*.pdf" QUERY` (the files a glob names, indexed as needed)
    and `generalagent search --all QUERY` (every indexed document, nothing read)."""
    try:
        with team_store(settings.paths, settings.documents) as team:
            result = _search_many_in(settings, pattern, query, max_results, team)
    except SearchFailure as exc:
        fail(exc.shown(_, ngettext), EXIT_FAILED)
    except INDEX_ERRORS as exc:
        fail(str(exc), EXIT_FAILED)
    _tell_unembedded(
        _unembedded(settings, result),
        None if pattern is None else _typed(pattern),
        terminal_console(stderr=True),
    )
    _print_many(settings, result, as_json, whole_index=pattern is None)


def _search_many_in(
    settings: Settings,
    pattern: str | None,
    query: str | list[str],
    max_results: int | None,
    team: dict[str, Any],
) -> FolderSearch:
    if pattern is None:
        return search_indexed(
            settings.paths.indexes_db,
            settings.documents,
            query,
            max_results,
            label="the index",  # --json's "folder", in English as the rest of it; the view says its own words
            vectors=embeddings_from_settings(settings),
            **team,
        )
    found = glob_files(Path(pattern).expanduser(), hidden=False)
    files = [f for f in found.files if f.suffix.lower() in SEARCHABLE_SUFFIXES]
    if not files:
        fail(_("{pattern}: no file matches").format(pattern=pattern), EXIT_FAILED)
    return search_files(
        settings.paths.indexes_db,
        settings.documents,
        files,
        query,
        max_results,
        label=pattern,
        vectors=embeddings_from_settings(settings),
        **team,
    )


def _print_many(settings: Settings, result: FolderSearch, as_json: bool, whole_index: bool = False) -> None:
    if as_json:  # a failed file's English `error`, without the exception the terminal translates
        found = _english_warning(asdict(result, dict_factory=_without_exceptions), result.warning)
        print(json.dumps(found, ensure_ascii=False, indent=2))
    else:
        lines = _text_lines(
            settings, [hit for document in result.documents for hit in document.results], result.query
        )
        terminal_console().print(render_folder_hits(result, lines, whole_index), highlight=False)
    if not result.documents:
        raise typer.Exit(EXIT_FAILED)


def _unembedded(settings: Settings, result: FileSearch | FolderSearch) -> int:
    """Chunks the search looked in that have no vector yet; none said of a team's store
    (SEARCH_DATABASE_URL), whose chunks are embedded as they are indexed or not at all."""
    return 0 if settings.paths.search_database_url is not None else result.unembedded


def _tell_unembedded(missing: int, shown: str | None, err: Console) -> None:
    """One dim line when chunks the search looked in have no vector yet (they were found by
    their words only); `shown`: the file, folder or glob `generalagent index` embeds them
    with (None: every indexed document, `--all`)."""
    if not missing:
        return
    if shown is None:
        line = ngettext(
            "{count} passage has no vector yet and was found by its words only; generalagent index on its file embeds it.",
            "{count} passages have no vector yet and were found by their words only; generalagent index on their files embeds them.",
            missing,
        ).format(count=missing)
    else:
        line = ngettext(
            "{count} passage has no vector yet and was found by its words only; generalagent index {path} embeds it.",
            "{count} passages have no vector yet and were found by their words only; generalagent index {path} embeds them.",
            missing,
        ).format(count=missing, path=shown)
    err.print(f"[dim]{escape(line)}[/dim]")


def _search_folder(
    settings: Settings,
    folder: Path,
    query: str | list[str],
    max_results: int | None,
    as_json: bool,
    err: Console,
) -> None:
    """`generalagent search FOLDER QUERY`: index what is new or changed (with a progress bar),
    then search every document under the folder."""
    with progress_bar(err) as progress:
        task = progress.add_task(escape(str(folder)), total=None)

        def advance(done: int, total: int, name: str) -> None:
            progress.update(task, completed=done, total=total, description=escape(name or str(folder)))

        try:
            with team_store(settings.paths, settings.documents) as team:
                result = search_folder(
                    settings.paths.indexes_db,
                    settings.documents,
                    folder.resolve(),
                    query,
                    max_results,
                    shown_as=lambda path: _shown(path, folder),
                    vectors=embeddings_from_settings(settings),
                    progress=advance,
                    **team,
                )
        except SearchFailure as exc:
            fail(exc.shown(_, ngettext), EXIT_FAILED)
        except INDEX_ERRORS as exc:
            fail(str(exc), EXIT_FAILED)
    _tell_unembedded(_unembedded(settings, result), _typed(str(folder)), err)
    _print_many(settings, result, as_json)


def _shown(path: Path, folder: Path) -> str:
    """A path as the user typed the folder: relative to it when inside."""
    base = folder.resolve()
    if path == base:
        return str(folder)
    try:
        return str(folder / path.relative_to(base))
    except ValueError:
        return str(path)
