"""Search results for a person at the terminal (`generalagent search`, `generalagent kb search`).

The model reads the same searches rendered for it (documents/search.py, knowledge/render.py):
every passage with its context and hints in tool-call syntax. A person wants less: each hit
with its place, one snippet around the words they looked for, and the command that shows
more. `--json` gives everything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.text import Text

from generalAgent.cli.terminal_text import one_line, terminal_safe
from generalAgent.display import Message
from generalAgent.documents.folder import FolderSearch
from generalAgent.documents.search import FileSearch
from generalAgent.i18n import _, ngettext
from generalAgent.knowledge.search import KnowledgeSearch
from generalAgent.search.results import Passage, SearchResult

SNIPPET_CHARS = 240
SHEET_ROWS = 6  # rows of a spreadsheet hit shown, one per line
# (item id, chunk index) -> line: where a passage of a plain text file is (search_commands).
Lines = dict[tuple[str, int], int]
SHORT_ID_CHARS = 12  # as `kb list` shows ids; kb show takes any unique start


def snippet(text: str, words: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """About `width` characters of `text` on one line, around the first of `words` it holds."""
    flat = " ".join(terminal_safe(text).split())
    if len(flat) <= width:
        return flat
    lowered = flat.lower()
    found = [i for i in (lowered.find(w.lower()) for w in words if w) if i >= 0]
    start = max(0, min(found) - width // 3) if found else 0
    end = min(len(flat), start + width)
    start = max(0, end - width)
    return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")


# A Chinese character: a gloss holding one is the English-to-Chinese one (search/english_gloss.py).
_CHINESE = re.compile(r"[\u4e00-\u9fff]")


def query_words(query: str) -> list[str]:
    """The words of a query to look for in a snippet: Latin words, and runs of Chinese."""
    return re.findall(r"[\w\u4e00-\u9fff]+", query)


def highlighted(text: str, words: Sequence[str]) -> Text:
    shown = Text(text)
    for word in words:
        if word:
            shown.highlight_words([word], style="bold", case_sensitive=False)
    return shown


def _query_text(query: str | Sequence[str]) -> str:
    return query if isinstance(query, str) else " | ".join(query)


def sheet_rows(
    text: str, words: Sequence[str], rows: int = SHEET_ROWS, width: int = SNIPPET_CHARS
) -> list[str]:
    """The rows of a spreadsheet passage to show, one per line: those holding the words (all
    of them when none does), at most `rows`, each cut to `width`."""
    lines = [" ".join(terminal_safe(line).split()) for line in text.split("\n")]
    lines = [line for line in lines if line]
    lowered = [w.lower() for w in words if w]
    holding = [line for line in lines if any(w in line.lower() for w in lowered)]
    chosen = (holding or lines)[:rows]
    return [line if len(line) <= width else line[: width - 1] + "…" for line in chosen]


def render_file_hits(result: FileSearch, places: Lines | None = None) -> RenderableType:
    """`generalagent search FILE QUERY`: the file, then a line per place and a snippet."""
    hits = result.results
    query = _query_text(result.query)
    what = f"/{query}/" if result.regex else f'"{query}"'
    if not hits:
        advice = (
            _("Check the pattern, or search with words instead (without --regex).")
            if result.regex
            else _(
                "Try other words, a synonym or the other language, fewer words, or --regex for an exact pattern."
            )
        )
        line = _("No passage in {file} matches {query}.").format(file=one_line(result.file), query=what)
        return Group(*_warned(result.warning), Text(terminal_safe(f"{line} {advice}")))
    words = [] if result.regex else query_words(query) + query_words(result.glossed)
    count = ngettext(
        "{count} passage in {file} for {query}:",
        "{count} passages in {file} for {query}:",
        sum(1 for hit in hits if hit.hit is not None),
    )
    shown = [hit for hit in hits if hit.hit is not None]
    lines: list[RenderableType] = [
        *_warned(result.warning),
        Text(terminal_safe(count.format(count=len(shown), file=one_line(result.file), query=what))),
        *_glossed(result.glossed),
    ]
    for number, hit in enumerate(shown, start=1):
        lines += _hit_lines(number, hit, words, places or {})
    lines += _left_out(len(hits) - len(shown), result.capped, result.max_results)
    return Group(*lines)


def _glossed(keywords: str) -> list[RenderableType]:
    """The line naming the keywords a question was also searched as in the documents'
    language (the dictionary gloss: English for a Chinese question, Chinese for an English
    one), so a person sees why passages in the other language answer it."""
    if not keywords:
        return []
    if _CHINESE.search(keywords):
        line = _('Also searched in Chinese as "{keywords}" (from an English-Chinese dictionary).')
    else:
        line = _('Also searched in English as "{keywords}" (from a Chinese-English dictionary).')
    return [Text(terminal_safe(line.format(keywords=one_line(keywords))), style="dim")]


def _warned(warning: Message | None) -> list[RenderableType]:
    """The line saying semantic search is off (keywords answered), in the UI's language."""
    return [Text(terminal_safe(warning.shown(_, ngettext)), style="yellow")] if warning else []


def _hit_lines(number: int, hit: SearchResult, words: Sequence[str], lines: Lines) -> list[RenderableType]:
    """A place: its number, where it is, and a snippet of its best passage (a spreadsheet's
    matching rows, one per line)."""
    best = hit.hit
    line = lines.get((hit.item_id, hit.chunk_index))
    if hit.place:
        place = shown_place(hit.place)
    elif line is not None:
        place = _("line {line}").format(line=line)
    else:
        place = _("chunk {index}").format(index=hit.chunk_index)
    ocr = _(" (text read by OCR)") if best is not None and best.ocr else ""
    text = best.text if best is not None else ""
    shown: list[RenderableType] = [
        Text.from_markup(f"[bold]{number:>2}[/] [cyan]{escape(terminal_safe(place))}[/]{escape(ocr)}")
    ]
    if hit.place.startswith("sheet "):
        shown += [Text("    ") + highlighted(row, words) for row in sheet_rows(text, words)]
    else:
        shown.append(Text("    ") + highlighted(snippet(text, words), words))
    return shown


def _left_out(budget_cut: int, capped: bool, most: int) -> list[RenderableType]:
    """What a person asked for and does not see, and why."""
    notes: list[RenderableType] = []
    if capped:
        notes.append(Text(_("At most {most} passages per search.").format(most=most), style="dim"))
    if budget_cut:
        notes.append(
            Text(
                ngettext(
                    "{count} more passage was found but left out by the content budget "
                    "(MAX_TOTAL_CONTENT_SIZE): ask for fewer with -n, or narrow the search.",
                    "{count} more passages were found but left out by the content budget "
                    "(MAX_TOTAL_CONTENT_SIZE): ask for fewer with -n, or narrow the search.",
                    budget_cut,
                ).format(count=budget_cut),
                style="dim",
            )
        )
    return notes


def render_folder_hits(
    result: FolderSearch, places: Lines | None = None, whole_index: bool = False
) -> RenderableType:
    """`generalagent search [FOLDER] QUERY`: each document with its places and a snippet each;
    `whole_index`: `--all`, every indexed document (no folder to name)."""
    query = result.query
    phrasings = [query] if isinstance(query, str) else list(query)
    what = " | ".join(f'"{q}"' for q in phrasings)
    words = [w for q in [*phrasings, result.glossed] for w in query_words(q)]
    lines: list[RenderableType] = _warned(result.warning)
    for failure in result.failed:
        said = failure.unreadable.shown(_, ngettext) if failure.unreadable else failure.error
        lines.append(Text(terminal_safe(f"✗ {said}"), style="yellow"))
    if result.pending:
        lines.append(
            Text(
                terminal_safe(
                    _("{count} files are not indexed yet; search again to go on.").format(
                        count=result.pending
                    )
                ),
                style="yellow",
            )
        )
    if not result.documents:
        none = (
            _("No passage in {count} indexed documents matches {query}.")
            if whole_index
            else _("No passage in {count} documents under {folder} matches {query}.")
        )
        line = none.format(count=result.searched, folder=result.folder, query=what)
        lines.append(Text(terminal_safe(line)))
        return Group(*lines)
    found = sum(1 for d in result.documents for hit in d.results if hit.hit is not None)
    head = (
        ngettext(
            "{places} passage in {documents} of {count} indexed documents for {query}:",
            "{places} passages in {documents} of {count} indexed documents for {query}:",
            found,
        )
        if whole_index
        else ngettext(
            "{places} passage in {documents} of {count} documents under {folder} for {query}:",
            "{places} passages in {documents} of {count} documents under {folder} for {query}:",
            found,
        )
    ).format(
        places=found,
        documents=len(result.documents),
        count=result.searched,
        folder=result.folder,
        query=what,
    )
    lines.append(Text(terminal_safe(head)))
    lines += _glossed(result.glossed)
    number = left_out = 0
    for document in result.documents:
        lines.append(Text.from_markup(f"[bold cyan]{escape(one_line(document.file))}[/]"))
        for hit in document.results:
            if hit.hit is None:
                left_out += 1
                continue
            number += 1
            lines += _hit_lines(number, hit, words, places or {})
    lines += _left_out(left_out, False, result.max_results)
    return Group(*lines)


def render_knowledge_hits(result: KnowledgeSearch, command: str) -> RenderableType:
    """`generalagent kb search QUERY`: a line per item, its best place, a snippet, how to read it."""
    results = result.results
    if not results:
        return Text(
            terminal_safe(
                _(
                    'Nothing in the knowledge base matches "{query}". Try other or fewer words, the other language, or no filters.'
                ).format(query=result.query)
            )
        )
    words = query_words(result.query) + query_words(result.glossed)
    count = ngettext('{count} result for "{query}":', '{count} results for "{query}":', len(results))
    lines: list[RenderableType] = []
    if result.warning:
        lines.append(Text(terminal_safe(result.warning.shown(_, ngettext)), style="yellow"))
    lines.append(Text(terminal_safe(count.format(count=len(results), query=result.query))))
    lines += _glossed(result.glossed)
    for number, entry in enumerate(results, start=1):
        item = entry.item
        short = item.id[:SHORT_ID_CHARS]
        labels = item.domain + (f" / {item.category}" if item.category else "")
        lines.append(
            Text.from_markup(
                f"[bold]{number:>2}[/] [cyan]{escape(terminal_safe(item.title))}[/] "
                f"[dim]· {escape(terminal_safe(labels))} · {short}[/]"
            )
        )
        matched = entry.found.hit
        text = matched.text if matched is not None else entry.found.content
        place = _place(matched)
        prefix = Text(f"    {terminal_safe(place)}: " if place else "    ", style="dim")
        lines.append(prefix + highlighted(snippet(text, words), words))
    lines.append(Text(_("Read one: {command} kb show ID").format(command=command), style="dim"))
    return Group(*lines)


def _place(passage: Passage | None) -> str:
    if passage is None:
        return ""
    if passage.page is not None and passage.place == f"page {passage.page}":
        return _("page {page}").format(page=passage.page)  # no place of its own: the page number
    return shown_place(passage.place)


# The places the document readers name (documents/pdf.py, office.py, sheets.py), in English
# for the model; shown to a person in the UI's language.
_PAGE_PLACE = re.compile(r"^page (\d+)$")
_SLIDE_PLACE = re.compile(r"^slide (\d+)$")
_SHEET_PLACE = re.compile(r"^sheet (.+), rows? (\d+)(?:–(\d+))?$", re.DOTALL)


def shown_place(place: str) -> str:
    """`page 12`, `slide 3`, `sheet 营收, rows 2–5` in the UI's language; any other place as it is."""
    if match := _PAGE_PLACE.match(place):
        return _("page {page}").format(page=match.group(1))
    if match := _SLIDE_PLACE.match(place):
        return _("slide {slide}").format(slide=match.group(1))
    if match := _SHEET_PLACE.match(place):
        sheet, first, last = match.groups()
        if last is None:
            return _("sheet {sheet}, row {row}").format(sheet=sheet, row=first)
        return _("sheet {sheet}, rows {first}–{last}").format(sheet=sheet, first=first, last=last)
    return place
