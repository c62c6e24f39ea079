"""The report as data: blocks and inline spans, parsed from Markdown or from JSON.

Pure functions, no python-docx: `parse_markdown` and `parse_json` both return a `Report`, which
`_docx_writer` turns into a .docx. The Markdown subset is what a model writes for a report:
ATX and setext headings, paragraphs, bullet / numbered / task lists (nested by indentation),
pipe tables with alignment, fenced code, block quotes, images on their own line, horizontal
rules, `\\newpage`, and inline **bold**, *italic*, ~~strike~~, `code` and [links](url).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

import yaml


class ReportInputError(Exception):
    """The input cannot be read as a report; the message says where and what to fix."""


@dataclass(frozen=True)
class Span:
    text: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    code: bool = False
    url: str | None = None

    @property
    def look(self) -> tuple[bool, bool, bool, bool, str | None]:
        """Everything but the text: spans that look the same can be one run."""
        return (self.bold, self.italic, self.strike, self.code, self.url)


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class ListItem:
    level: int
    ordered: bool
    text: str
    start: int = 1


@dataclass(frozen=True)
class ListBlock:
    items: list[ListItem]


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]
    align: list[str | None]


@dataclass(frozen=True)
class CodeBlock:
    text: str


@dataclass(frozen=True)
class Quote:
    text: str


@dataclass(frozen=True)
class Image:
    path: str
    caption: str = ""
    width_cm: float | None = None


@dataclass(frozen=True)
class Rule:
    pass


@dataclass(frozen=True)
class PageBreak:
    pass


Block = Heading | Paragraph | ListBlock | Table | CodeBlock | Quote | Image | Rule | PageBreak


@dataclass
class Report:
    blocks: list[Block] = field(default_factory=list)
    title: str | None = None
    subtitle: str | None = None
    author: str | None = None
    date: str | None = None
    title_page: bool = False
    toc: bool = False


META_KEYS = ("title", "subtitle", "author", "date", "title_page", "toc")

# -- inline ---------------------------------------------------------------------------

_INLINE = re.compile(
    r"(?P<escape>\\[\\`*_{}\[\]()#+\-.!|~<>])"
    r"|(?P<ticks>`+)(?P<code>.+?)(?P=ticks)"
    r"|\[(?P<link_text>[^\]]+)\]\((?P<link_url>[^)\s]+)\)"
    r"|\*\*\*(?P<strong_em>\S(?:.*?\S)?)\*\*\*"
    r"|\*\*(?P<strong>\S(?:.*?\S)?)\*\*(?!\*)"
    r"|(?<!\w)__(?P<strong_u>\S(?:.*?\S)?)__(?!\w)"
    r"|\*(?P<em>[^*\s](?:.*?[^*\s])?)\*"
    r"|(?<!\w)_(?P<em_u>[^_\s](?:.*?[^_\s])?)_(?!\w)"
    r"|~~(?P<strike>\S(?:.*?\S)?)~~"
    r"|(?P<br><br\s*/?>)",
    re.IGNORECASE,
)


def parse_inline(
    text: str,
    *,
    bold: bool = False,
    italic: bool = False,
    strike: bool = False,
    url: str | None = None,
) -> list[Span]:
    """Inline Markdown as spans; neighbouring spans with the same look are merged."""
    spans: list[Span] = []

    def plain(value: str) -> None:
        if value:
            spans.append(Span(value, bold, italic, strike, False, url))

    position = 0
    for match in _INLINE.finditer(text):
        plain(text[position : match.start()])
        position = match.end()
        groups = match.groupdict()
        if groups["escape"]:
            plain(groups["escape"][1])
        elif groups["code"] is not None:
            spans.append(Span(groups["code"].strip(), bold, italic, strike, True, url))
        elif groups["link_text"] is not None:
            spans += parse_inline(
                groups["link_text"], bold=bold, italic=italic, strike=strike, url=groups["link_url"]
            )
        elif groups["strong_em"] is not None:
            spans += parse_inline(
                groups["strong_em"], bold=True, italic=True, strike=strike, url=url
            )
        elif groups["strong"] is not None or groups["strong_u"] is not None:
            inner = groups["strong"] if groups["strong"] is not None else groups["strong_u"]
            spans += parse_inline(inner, bold=True, italic=italic, strike=strike, url=url)
        elif groups["em"] is not None or groups["em_u"] is not None:
            inner = groups["em"] if groups["em"] is not None else groups["em_u"]
            spans += parse_inline(inner, bold=bold, italic=True, strike=strike, url=url)
        elif groups["strike"] is not None:
            spans += parse_inline(groups["strike"], bold=bold, italic=italic, strike=True, url=url)
        elif groups["br"]:
            plain("\n")
    plain(text[position:])
    return _merge(spans)


def _merge(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for span in spans:
        if merged and merged[-1].look == span.look:
            merged[-1] = replace(span, text=merged[-1].text + span.text)
        else:
            merged.append(span)
    return merged


def plain_text(text: str) -> str:
    """Inline Markdown without its markup: for headings in the TOC and document properties."""
    return "".join(span.text for span in parse_inline(text))


# -- Markdown blocks ------------------------------------------------------------------

_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*(?:\n|\Z)", re.DOTALL)
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>[-*+]|\d{1,9}[.)])[ \t]+(?P<text>.*)$")
_TASK = re.compile(r"^\[([ xX])\][ \t]+")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_IMAGE_LINE = re.compile(
    r"^[ \t]*!\[(?P<alt>[^\]]*)\]\((?P<path>[^)\s]+)(?:[ \t]+\"[^\"]*\")?\)[ \t]*$"
)
_PAGE_BREAK = re.compile(r"^[ \t]*(\\newpage|\\pagebreak|<!--\s*pagebreak\s*-->)[ \t]*$")


def join_lines(lines: list[str]) -> str:
    """Soft-wrapped lines as one paragraph: a space between words, none between CJK characters.

    A line ending in two spaces or a backslash is a hard break, kept as a newline.
    """
    text = ""
    for line in lines:
        hard = line.endswith("  ") or line.endswith("\\")
        piece = line.strip()
        if piece.endswith("\\"):
            piece = piece[:-1].rstrip()
        if text and not text.endswith("\n"):
            needs_space = not (_CJK.match(text[-1]) and _CJK.match(piece[:1] or " "))
            text += " " if needs_space else ""
        text += piece + ("\n" if hard else "")
    return text.rstrip("\n")


def split_front_matter(source: str) -> tuple[dict[str, Any], str]:
    """YAML front matter (title, author, ...) and the Markdown after it."""
    match = _FRONT_MATTER.match(source)
    if not match:
        return {}, source
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        raise ReportInputError(f"front matter is not valid YAML: {error}") from error
    if not isinstance(meta, dict):
        raise ReportInputError("front matter must be key: value lines (title, author, ...).")
    return meta, source[match.end() :]


def _table_cells(line: str) -> list[str]:
    stripped = line.strip()
    if stripped.startswith("|"):
        stripped = stripped[1:]
    if stripped.endswith("|") and not stripped.endswith("\\|"):
        stripped = stripped[:-1]
    cells = re.split(r"(?<!\\)\|", stripped)
    return [cell.strip().replace("\\|", "|") for cell in cells]


def _alignment(cell: str) -> str | None:
    left, right = cell.startswith(":"), cell.endswith(":")
    return "center" if left and right else "right" if right else "left" if left else None


def _indent_width(indent: str) -> int:
    return len(indent.replace("\t", "    "))


def _starts_block(line: str, next_line: str | None) -> bool:
    return bool(
        _ATX.match(line)
        or _FENCE.match(line)
        or _LIST_ITEM.match(line)
        or line.lstrip().startswith(">")
        or _IMAGE_LINE.match(line)
        or _PAGE_BREAK.match(line)
        or ("|" in line and next_line is not None and _TABLE_SEPARATOR.match(next_line))
    )


def parse_markdown(source: str) -> Report:
    """A report from Markdown, with its YAML front matter as title, author, date, toc, ..."""
    meta, body = split_front_matter(source.replace("\r\n", "\n").replace("\r", "\n"))
    report = Report()
    apply_meta(report, meta, where="front matter")
    lines = body.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        next_line = lines[i + 1] if i + 1 < len(lines) else None
        if not line.strip():
            i += 1
            continue
        if fence := _FENCE.match(line):
            marker = fence.group(1)
            code: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker):
                code.append(lines[i])
                i += 1
            report.blocks.append(CodeBlock("\n".join(code)))
            i += 1
            continue
        if heading := _ATX.match(line):
            report.blocks.append(Heading(len(heading.group(1)), (heading.group(2) or "").strip()))
            i += 1
            continue
        if _PAGE_BREAK.match(line):
            report.blocks.append(PageBreak())
            i += 1
            continue
        if _RULE.match(line):
            report.blocks.append(Rule())
            i += 1
            continue
        if image := _IMAGE_LINE.match(line):
            report.blocks.append(Image(image.group("path"), image.group("alt")))
            i += 1
            continue
        if "|" in line and next_line is not None and _TABLE_SEPARATOR.match(next_line):
            i = _parse_table(lines, i, report)
            continue
        if _LIST_ITEM.match(line):
            i = _parse_list(lines, i, report)
            continue
        if line.lstrip().startswith(">"):
            quoted = []
            while i < len(lines) and lines[i].lstrip().startswith(">"):
                quoted.append(re.sub(r"^\s*>\s?", "", lines[i]))
                i += 1
            report.blocks.append(Quote(join_lines(quoted)))
            continue
        paragraph = [line]
        i += 1
        while i < len(lines) and lines[i].strip():
            following = lines[i + 1] if i + 1 < len(lines) else None
            if setext := _SETEXT.match(lines[i]):
                level = 1 if setext.group(1).startswith("=") else 2
                report.blocks.append(Heading(level, join_lines(paragraph)))
                paragraph = []
                i += 1
                break
            if _starts_block(lines[i], following) or _RULE.match(lines[i]):
                break
            paragraph.append(lines[i])
            i += 1
        if paragraph:
            report.blocks.append(Paragraph(join_lines(paragraph)))
    return report


def _parse_table(lines: list[str], i: int, report: Report) -> int:
    header = _table_cells(lines[i])
    align = [_alignment(cell) for cell in _table_cells(lines[i + 1])]
    width = len(header)
    align = (align + [None] * width)[:width]
    rows = []
    i += 2
    while i < len(lines) and lines[i].strip() and "|" in lines[i]:
        cells = _table_cells(lines[i])
        rows.append((cells + [""] * width)[:width])
        i += 1
    report.blocks.append(Table(header, rows, align))
    return i


def _parse_list(lines: list[str], i: int, report: Report) -> int:
    """Consecutive list items (blank lines allowed between them) as one list block."""
    items: list[ListItem] = []
    indents: list[int] = []
    while i < len(lines):
        line = lines[i]
        match = _LIST_ITEM.match(line)
        if match is None:
            if not line.strip():
                following = next((x for x in lines[i + 1 :] if x.strip()), None)
                if following is None or not (
                    _LIST_ITEM.match(following) or following.startswith((" ", "\t"))
                ):
                    break
                i += 1
                continue
            if not items or _starts_block(line, lines[i + 1] if i + 1 < len(lines) else None):
                break
            last = items[-1]
            items[-1] = ListItem(
                last.level, last.ordered, join_lines([last.text, line]), last.start
            )
            i += 1
            continue
        indent = _indent_width(match.group("indent"))
        ordered = match.group("marker")[0].isdigit()
        if items and indent <= indents[0] and ordered != items[0].ordered:
            break  # bullets after numbers (or the reverse) at the top level start a new list
        while indents and indent < indents[-1]:
            indents.pop()
        if not indents or indent > indents[-1]:
            indents.append(indent)
        marker, text = match.group("marker"), match.group("text").strip()
        if task := _TASK.match(text):
            text = ("☑ " if task.group(1) in "xX" else "☐ ") + text[task.end() :]
        start = int(marker[:-1]) if ordered else 1
        items.append(ListItem(min(len(indents) - 1, 8), ordered, text, start))
        i += 1
    report.blocks.append(ListBlock(items))
    return i


# -- JSON -----------------------------------------------------------------------------

BLOCK_TYPES = (
    "heading",
    "paragraph",
    "bullets",
    "numbered",
    "table",
    "code",
    "quote",
    "image",
    "rule",
    "page_break",
    "markdown",
)


def apply_meta(report: Report, meta: dict[str, Any], *, where: str) -> None:
    for key, value in meta.items():
        if key not in META_KEYS:
            continue
        if key in ("title_page", "toc"):
            if not isinstance(value, bool):
                raise ReportInputError(f"{where}: {key} must be true or false.")
            setattr(report, key, value)
        elif value is not None:
            setattr(report, key, str(value))


def parse_json(source: str) -> Report:
    """A report from JSON: {"title", ..., "blocks": [{"type": "heading", ...}, ...]}."""
    try:
        data = json.loads(source)
    except json.JSONDecodeError as error:
        raise ReportInputError(
            f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from error
    if not isinstance(data, dict) or not isinstance(data.get("blocks"), list):
        raise ReportInputError('JSON input must be an object with a "blocks" list.')
    report = Report()
    apply_meta(report, data, where="JSON")
    for number, raw in enumerate(data["blocks"]):
        report.blocks.extend(_json_block(raw, f"blocks[{number}]"))
    return report


def _text(raw: dict[str, Any], key: str, where: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise ReportInputError(f'{where}: needs "{key}" as a string.')
    return value


def _json_block(raw: Any, where: str) -> list[Block]:
    if not isinstance(raw, dict) or raw.get("type") not in BLOCK_TYPES:
        found = raw.get("type") if isinstance(raw, dict) else raw
        raise ReportInputError(
            f"{where}: unknown block type {found!r}; use one of: {', '.join(BLOCK_TYPES)}."
        )
    kind = raw["type"]
    if kind == "heading":
        level = raw.get("level", 1)
        if not isinstance(level, int) or not 1 <= level <= 6:
            raise ReportInputError(f"{where}: heading level must be 1-6.")
        return [Heading(level, _text(raw, "text", where))]
    if kind == "paragraph":
        return [Paragraph(_text(raw, "text", where))]
    if kind == "quote":
        return [Quote(_text(raw, "text", where))]
    if kind == "code":
        return [CodeBlock(_text(raw, "text", where))]
    if kind == "markdown":
        return parse_markdown(_text(raw, "text", where)).blocks
    if kind == "rule":
        return [Rule()]
    if kind == "page_break":
        return [PageBreak()]
    if kind == "image":
        width = raw.get("width_cm")
        if width is not None and not (isinstance(width, int | float) and 0 < width <= 50):
            raise ReportInputError(f"{where}: width_cm must be a number of centimetres (0-50].")
        return [Image(_text(raw, "path", where), str(raw.get("caption", "")), width)]
    if kind in ("bullets", "numbered"):
        start = raw.get("start", 1)
        if not isinstance(start, int) or start < 0:
            raise ReportInputError(f"{where}: start must be a whole number.")
        items: list[ListItem] = []
        _json_items(raw.get("items"), kind == "numbered", 0, start, items, where)
        return [ListBlock(items)]
    return [_json_table(raw, where)]


def _json_items(
    raw: Any, ordered: bool, level: int, start: int, out: list[ListItem], where: str
) -> None:
    """Items are strings, or {"text", "items": [...nested...], "numbered": bool} objects."""
    if not isinstance(raw, list) or not raw:
        raise ReportInputError(f'{where}: needs "items" as a non-empty list.')
    if level > 8:
        raise ReportInputError(f"{where}: lists nest at most 9 levels deep.")
    for number, item in enumerate(raw):
        here = f"{where}.items[{number}]"
        if isinstance(item, str):
            out.append(ListItem(level, ordered, item, start))
            continue
        if not isinstance(item, dict):
            raise ReportInputError(f'{here}: an item is a string or an object with "text".')
        out.append(ListItem(level, ordered, _text(item, "text", here), start))
        if "items" in item:
            nested_ordered = item.get("numbered", ordered)
            _json_items(item["items"], bool(nested_ordered), level + 1, 1, out, here)


def _json_table(raw: dict[str, Any], where: str) -> Table:
    header = raw.get("header")
    rows = raw.get("rows", [])
    if not isinstance(header, list) or not header:
        raise ReportInputError(f'{where}: a table needs "header" as a non-empty list.')
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise ReportInputError(f'{where}: "rows" must be a list of lists.')
    for number, row in enumerate(rows):
        if len(row) > len(header):
            raise ReportInputError(
                f"{where}.rows[{number}] has {len(row)} cells but the header has {len(header)}."
            )
    align = raw.get("align") or [None] * len(header)
    if not isinstance(align, list) or any(
        a not in (None, "left", "center", "right") for a in align
    ):
        raise ReportInputError(f"{where}: align entries are left, center, right or null.")
    width = len(header)
    return Table(
        [_cell(cell) for cell in header],
        [[_cell(cell) for cell in row] + [""] * (width - len(row)) for row in rows],
        (list(align) + [None] * width)[:width],
    )


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
