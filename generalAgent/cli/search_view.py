"""Search results for a person at the terminal (`generalagent search`, `generalagent kb search`).

The model reads the same searches rendered for it (documents/search.py, knowledge/render.py):
every passage with its context and hints in tool-call syntax. A person wants less: each hit
with its place, one snippet around the words they looked for, and the command that shows
more. `--json` gives everything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.text import Text

from generalAgent.cli.terminal_text import terminal_safe
from generalAgent.i18n import _, ngettext

SNIPPET_CHARS = 240
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


def query_words(query: str) -> list[str]:
    """The words of a query to look for in a snippet: Latin words, and runs of Chinese."""
    return re.findall(r"[\w\u4e00-\u9fff]+", query)


def highlighted(text: str, words: Sequence[str]) -> Text:
    shown = Text(text)
    for word in words:
        if word:
            shown.highlight_words([word], style="bold", case_sensitive=False)
    return shown


def render_file_hits(result: dict[str, Any]) -> RenderableType:
    """`generalagent search FILE QUERY`: a line per passage, with its place and a snippet."""
    hits = result["hits"]
    what = f"/{result['query']}/" if result["regex"] else f'"{result["query"]}"'
    if not hits:
        advice = (
            _("Check the pattern, or search with words instead (without --regex).")
            if result["regex"]
            else _(
                "Try other words, a synonym or the other language, fewer words, or --regex for an exact pattern."
            )
        )
        line = _("No passage in {file} matches {query}.").format(file=result["file"], query=what)
        return Text(terminal_safe(f"{line} {advice}"))
    words = [] if result["regex"] else query_words(result["query"])
    count = ngettext(
        "{count} passage in {file} for {query}:", "{count} passages in {file} for {query}:", len(hits)
    )
    lines: list[RenderableType] = [
        Text(terminal_safe(count.format(count=len(hits), file=result["file"], query=what)))
    ]
    for number, hit in enumerate(hits, start=1):
        chunk = hit["matched_chunks"][0] if hit["matched_chunks"] else {"content": ""}
        place = hit.get("place") or _("chunk {index}").format(index=hit["chunk_index"])
        ocr = _(" (text read by OCR)") if hit.get("ocr") else ""
        lines.append(
            Text.from_markup(f"[bold]{number:>2}[/] [cyan]{escape(terminal_safe(place))}[/]{escape(ocr)}")
        )
        lines.append(Text("    ") + highlighted(snippet(chunk["content"], words), words))
    return Group(*lines)


def render_folder_hits(result: dict[str, Any]) -> RenderableType:
    """`generalagent search [FOLDER] QUERY`: each document with its places and a snippet each."""
    query = result["query"]
    phrasings = [query] if isinstance(query, str) else list(query)
    what = " | ".join(f'"{q}"' for q in phrasings)
    words = [w for q in phrasings for w in query_words(q)]
    searched = result["files"] - result["pending"] - len(result["failed"])
    lines: list[RenderableType] = []
    for failure in result["failed"]:
        lines.append(Text(terminal_safe(f"✗ {failure['error']}"), style="yellow"))
    if result["pending"]:
        lines.append(
            Text(
                terminal_safe(
                    _("{count} files are not indexed yet; search again to go on.").format(
                        count=result["pending"]
                    )
                ),
                style="yellow",
            )
        )
    if not result["documents"]:
        line = _("No passage in {count} documents under {folder} matches {query}.").format(
            count=searched, folder=result["folder"], query=what
        )
        lines.append(Text(terminal_safe(line)))
        return Group(*lines)
    places = sum(len(d["hits"]) for d in result["documents"])
    head = _("{places} passages in {documents} of {count} documents under {folder} for {query}:").format(
        places=places, documents=len(result["documents"]), count=searched, folder=result["folder"], query=what
    )
    lines.append(Text(terminal_safe(head)))
    number = 0
    for document in result["documents"]:
        lines.append(Text.from_markup(f"[bold cyan]{escape(terminal_safe(document['file']))}[/]"))
        for hit in document["hits"]:
            number += 1
            chunk = hit["matched_chunks"][0] if hit["matched_chunks"] else {"content": ""}
            place = hit.get("place") or _("chunk {index}").format(index=hit["chunk_index"])
            lines.append(Text.from_markup(f"[bold]{number:>2}[/] [cyan]{escape(terminal_safe(place))}[/]"))
            lines.append(Text("    ") + highlighted(snippet(chunk["content"], words), words))
    return Group(*lines)


def render_knowledge_hits(result: dict[str, Any], command: str) -> RenderableType:
    """`generalagent kb search QUERY`: a line per item, its best place, a snippet, how to read it."""
    results = result["results"]
    if not results:
        return Text(
            terminal_safe(
                _(
                    'Nothing in the knowledge base matches "{query}". Try other or fewer words, the other language, or no filters.'
                ).format(query=result["query"])
            )
        )
    words = query_words(result["query"])
    count = ngettext('{count} result for "{query}":', '{count} results for "{query}":', len(results))
    lines: list[RenderableType] = []
    if result.get("warning"):
        lines.append(Text(terminal_safe(result["warning"]), style="yellow"))
    lines.append(Text(terminal_safe(count.format(count=len(results), query=result["query"]))))
    for number, entry in enumerate(results, start=1):
        item = entry["item"]
        short = item["id"][:SHORT_ID_CHARS]
        labels = item["domain"] + (f" / {item['category']}" if item.get("category") else "")
        lines.append(
            Text.from_markup(
                f"[bold]{number:>2}[/] [cyan]{escape(terminal_safe(item['title']))}[/] "
                f"[dim]· {escape(terminal_safe(labels))} · {short}[/]"
            )
        )
        matched = entry["matched_chunks"][0] if entry["matched_chunks"] else None
        text = matched["content"] if matched else item.get("content", "")
        place = _place(matched or {})
        prefix = Text(f"    {terminal_safe(place)}: " if place else "    ", style="dim")
        lines.append(prefix + highlighted(snippet(text, words), words))
    lines.append(Text(_("Read one: {command} kb show ID").format(command=command), style="dim"))
    return Group(*lines)


def _place(chunk: dict[str, Any]) -> str:
    if chunk.get("place"):
        return str(chunk["place"])
    if chunk.get("page") is not None:
        return _("page {page}").format(page=chunk["page"])
    return f"§ {chunk['heading']}" if chunk.get("heading") else ""
