"""The light look at an XLSX sheet's XML that python-calamine needs before it reads the sheet,
and the one thing calamine does not tell: which formula cells hold no cached value.

calamine (documents/workbook.py) builds a sheet as one dense grid from its first to its last
valued cell: a 4 KB file with cells at A1 and XFD1048576 asks it for 17 billion cells, and
the allocation failing aborts the whole process (a Rust abort, not an exception). So each
worksheet part is streamed here first, in 1 MB pieces, by bytes-level regular expressions
(no Python step per cell), and refused by name when:

- it has a DOCTYPE (no spreadsheet writes one; it is how entity expansion starts);
- the rectangle of its cells (last row by widest column) passes `max_cells`, or it holds
  more than twice `max_cells` cell elements (styled empty cells are common, not unbounded);
- a cell's text passes `MAX_CELL_CHARS`, or a row, or the part's head before `<sheetData>`,
  passes `MAX_TOKEN_BYTES` (a gigabyte-long attribute would sit whole in the parser).

The shared string table is checked the same way (`check_strings`). Formula cells without a
cached value (a file written by a script) come back as {(row, column): "=formula"}, 0-based;
calamine gives them as empty. A shared formula's dependent cell (`<f t="shared" si="0"/>`)
has no text of its own and reads "(a shared formula)".
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from xml.parsers import expat

from generalAgent.display import N_, N_plural
from generalAgent.documents.reading import DocumentError

CHUNK = 1 << 20
# Excel keeps at most 32,767 characters in a cell; four times that is far past any real file.
MAX_CELL_CHARS = 131_072
# No row, and no head of a sheet before its cells, comes near this in a real file.
MAX_TOKEN_BYTES = 32 << 20
# Excel's own limits.
MAX_ROWS = 1_048_576
MAX_COLUMNS = 16_384
# Cell elements (valued or not) per sheet, as a multiple of max_cells.
CELL_ELEMENTS_PER_CELL = 2

_P = rb"(?:[A-Za-z_][\w.-]*:)?"  # a namespace prefix, if the writer used one
_ROW = re.compile(rb"<" + _P + rb"row[\s/>]")
_ROW_NUMBER = re.compile(rb"<" + _P + rb"row\s[^>]*?\br\s*=\s*[\"']\s*(\d+)")
_CELL = re.compile(rb"<" + _P + rb"c[\s/>]")
# The reference of a cell that is not self-closed (`<c r="B2" s="1"/>` is an empty styled
# cell, which calamine leaves out of the grid as openpyxl did).
_CELL_COLUMN = re.compile(rb"<" + _P + rb"c\s[^>]*?\br\s*=\s*[\"']([A-Za-z]+)\d*[\"'][^>]*(?<!/)>")
_CELL_ROW = re.compile(rb"<" + _P + rb"c\s[^>]*?\br\s*=\s*[\"'][A-Za-z]+(\d+)[\"'][^>]*(?<!/)>")
_PLAIN_ROW_NUMBER = re.compile(rb'<row r="(\d+)"')
_PLAIN_CELL = re.compile(rb'<c r="([A-Z]{1,3})(\d{1,7})"[^>]*+(?<!/)>')
_PLAIN_UNCACHED = re.compile(
    rb'<c r="([A-Z]{1,3})(\d{1,7})"[^>]*+(?<!/)>\s*<f(?:\s[^>]*+)?(?:(?<=/)>|>([^<]*+)</f>)'
    rb"\s*(?:<v\s*/>|<v>\s*</v>)?\s*</c>"
)
_ANY_REFERENCE = re.compile(rb"<" + _P + rb"c\s[^>]*?\br\s*=")
# A whole cell (not self-closed), its attributes and content; an attribute; a value.
_WHOLE_CELL = re.compile(rb"<(" + _P + rb")c\s([^>]*?)(?<!/)>(.*?)</\1c\s*>", re.S)
_ATTRIBUTE = re.compile(rb"""\b([rt])\s*=\s*["']([^"']*)["']""")
_VALUE = re.compile(rb"<" + _P + rb"v\s*>([^<]*)</")
# A formula cell whose formula is followed by no value (or an empty one) before `</c>`.
_UNCACHED = re.compile(
    rb"<" + _P + rb"c\s[^>]*?\br\s*=\s*[\"']([A-Za-z]{1,3})(\d{1,7})[\"'][^>]*>\s*"
    rb"<" + _P + rb"f\b[^>]*?(?:/>|>([^<]*)</" + _P + rb"f\s*>)\s*"
    rb"(?:<" + _P + rb"v\s*/>|<" + _P + rb"v\s*>\s*</" + _P + rb"v\s*>)?\s*</" + _P + rb"c\s*>"
)
_REFERENCE = re.compile(rb"([A-Za-z]{1,3})(\d{1,7})")
_STRING = re.compile(rb"<" + _P + rb"si[\s>]")
_ENTITY = re.compile(r"&(?:#x([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|(amp|lt|gt|quot|apos));")
_NAMED_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def sheet_members(archive: zipfile.ZipFile, label: str) -> dict[str, str]:
    """{sheet name: zip member} from the workbook part and its relationships (expat, no
    DOCTYPE): the part each sheet calamine names is read from."""
    names = set(archive.namelist())
    main = [t for k, t in _relationships(archive, "_rels/.rels", "", label) if k.endswith("/officeDocument")]
    workbook = main[0] if main and main[0] in names else "xl/workbook.xml"
    if workbook not in names:
        return {}
    folder = posixpath.dirname(workbook)
    rels = posixpath.join(folder, "_rels", posixpath.basename(workbook) + ".rels")
    by_id = dict(_relationships(archive, rels, folder, label, with_ids=True)) if rels in names else {}
    members: dict[str, str] = {}

    def start(name: str, attrs: dict[str, str]) -> None:
        if name.rpartition("}")[2] == "sheet":
            rid = next((v for k, v in attrs.items() if k.endswith("}id")), "")
            if rid in by_id and by_id[rid] in names:
                members[attrs.get("name", "")] = by_id[rid]

    _parse(archive, workbook, label, start)
    return members


def shared_strings_member(archive: zipfile.ZipFile) -> str | None:
    return next((n for n in archive.namelist() if n.lower().endswith("sharedstrings.xml")), None)


def check_strings(archive: zipfile.ZipFile, member: str, label: str, max_strings: int) -> None:
    """The shared string table within `max_strings` strings, no DOCTYPE, no giant text."""
    count = 0
    for piece in _pieces(archive, member, label, b"si"):
        count += len(_STRING.findall(piece))
        _check_text(piece, label)
        if count > max_strings:
            raise DocumentError(
                N_plural(
                    "{name} shares more than {count:,} string between its cells, too many to load.",
                    "{name} shares more than {count:,} strings between its cells, too many to load.",
                ),
                name=label,
                count=max_strings,
            )


@dataclass
class SheetXml:
    """What the XML tells that calamine's values do not, by (row, column), 0-based: the
    formula cells that hold no cached value (their formula), and the error cells' text
    ("#N/A", which calamine gives as empty)."""

    uncached: dict[tuple[int, int], str] = field(default_factory=dict)
    errors: dict[tuple[int, int], str] = field(default_factory=dict)


def check_sheet(archive: zipfile.ZipFile, member: str, label: str, title: str, max_cells: int) -> SheetXml:
    """Refuses the sheet (see the module docstring) before calamine builds it; returns what
    its XML tells beyond calamine's values."""
    height = rows = width = elements = 0
    found = SheetXml()
    uncached = found.uncached
    element_limit = max_cells * CELL_ELEMENTS_PER_CELL
    for piece in _pieces(archive, member, label, b"row"):
        plain = b":c" not in piece and b":row" not in piece
        if plain:
            cells = piece.count(b"<c ") + piece.count(b"<c>") + piece.count(b"<c/")
        else:
            cells = len(_CELL.findall(piece))
        rows += piece.count(b"<row") if plain else len(_ROW.findall(piece))
        if plain and cells == piece.count(b'<c r="') and piece.count(b"<row") == piece.count(b'<row r="'):
            # As Excel, LibreOffice, WPS and openpyxl write a sheet (the reference first):
            # patterns without a lazy scan, about five times faster.
            numbers = _PLAIN_ROW_NUMBER.findall(piece)
            references = _PLAIN_CELL.findall(piece)
            letters = {column for column, _ in references}
            digits = [row for _, row in references]
        else:
            numbers = _ROW_NUMBER.findall(piece)
            letters = set(_CELL_COLUMN.findall(piece))
            digits = _CELL_ROW.findall(piece)
            if cells > len(_ANY_REFERENCE.findall(piece)):  # cells without a reference stand in a row
                width = max([width, *(len(_CELL.findall(row)) for row in _ROW.split(piece))])
        height = max(height, rows, *map(int, numbers), *map(int, digits))
        width = max([width, *map(_column, letters)])
        if height > MAX_ROWS or width > MAX_COLUMNS:
            raise DocumentError(
                N_(
                    "{name}: sheet {sheet} has a cell past Excel's {rows:,} rows or {columns:,} columns; "
                    "the file is damaged."
                ),
                name=label,
                sheet=title,
                rows=MAX_ROWS,
                columns=MAX_COLUMNS,
            )
        if height * width > max_cells:
            raise DocumentError(
                N_plural(
                    "{name}: sheet {sheet} has more than {count:,} cell ({height:,} rows by {wide:,} columns), "
                    "too many to load; split the sheet.",
                    "{name}: sheet {sheet} has more than {count:,} cells ({height:,} rows by {wide:,} columns), "
                    "too many to load; split the sheet.",
                ),
                name=label,
                sheet=title,
                count=max_cells,
                height=height,
                wide=width,
            )
        elements += cells
        if elements > element_limit:
            raise DocumentError(
                N_plural(
                    "{name}: sheet {sheet} has more than {count:,} cell element, too many to load; split the sheet.",
                    "{name}: sheet {sheet} has more than {count:,} cell elements, too many to load; split the sheet.",
                ),
                name=label,
                sheet=title,
                count=element_limit,
            )
        _check_text(piece, label, title)
        if b"f>" in piece or b"f/>" in piece or b"f " in piece:
            pattern = _PLAIN_UNCACHED if plain else _UNCACHED
            for column, row, formula in pattern.findall(piece):
                text = _xml_text(formula)
                uncached[(int(row) - 1, _column(column) - 1)] = "=" + text if text else "(a shared formula)"
        if b'"e"' in piece or b"'e'" in piece:
            _errors(piece, found.errors)
    return found


def _errors(piece: bytes, errors: dict[tuple[int, int], str]) -> None:
    for _, attributes, content in _WHOLE_CELL.findall(piece):
        named = dict(_ATTRIBUTE.findall(attributes))
        value = _VALUE.search(content)
        reference = _REFERENCE.fullmatch(named.get(b"r", b""))
        if named.get(b"t") == b"e" and value and reference:
            errors[(int(reference.group(2)) - 1, _column(reference.group(1)) - 1)] = _xml_text(value.group(1))


def _pieces(archive: zipfile.ZipFile, member: str, label: str, element: bytes) -> Iterator[bytes]:
    """A part's bytes in pieces of about 1 MB, each cut after the end tag of `element` (a
    whole row, a whole string): no element is split between two pieces. No DOCTYPE, and
    nothing between two such ends longer than MAX_TOKEN_BYTES."""
    end = re.compile(rb"</" + _P + element + rb"\s*>")
    pending = b""
    try:
        with archive.open(member) as stream:
            while True:
                chunk = stream.read(CHUNK)
                data = pending + chunk
                if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
                    raise DocumentError(
                        N_(
                            "{name} has a DOCTYPE in its XML, which no spreadsheet writes; it was not opened."
                        ),
                        name=label,
                    )
                if not chunk:
                    yield data
                    return
                cut = _last_end(data, element, end)
                if cut < 0:
                    if len(data) > MAX_TOKEN_BYTES:
                        raise DocumentError(
                            N_("{name}: {part} has a single XML token over {limit} MB; it was not loaded."),
                            name=label,
                            part=member,
                            limit=MAX_TOKEN_BYTES >> 20,
                        )
                    pending = data
                    continue
                pending = data[cut:]
                yield data[:cut]
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise DocumentError(
            N_("{name}: {part} cannot be inflated ({reason}); the file is damaged."),
            name=label,
            part=member,
            reason=str(exc),
        ) from None


def _last_end(data: bytes, element: bytes, end: re.Pattern[bytes]) -> int:
    """Where the last end tag of `element` in `data` ends, or -1."""
    tail = element + b">"
    before = len(data)
    while (found := data.rfind(tail, 0, before)) >= 0:
        opened = data.rfind(b"</", 0, found)
        if opened >= 0 and end.fullmatch(data, opened, found + len(tail)):
            return found + len(tail)
        before = found
    return -1


def _check_text(piece: bytes, label: str, title: str | None = None) -> None:
    """No text between two tags longer than MAX_CELL_CHARS characters. The pattern starts
    with a literal ">", so re tries it only there: the scan stays linear."""
    if len(piece) <= MAX_CELL_CHARS:
        return
    runs = re.compile(rb">([^<]{%d,})" % (MAX_CELL_CHARS + 1)).finditer(piece)
    if any(len(_xml_text(run.group(1))) > MAX_CELL_CHARS for run in runs):
        if title is None:
            raise DocumentError(
                N_(
                    "{name} has a shared string longer than {limit:,} characters "
                    "(Excel keeps 32,767); it was not loaded."
                ),
                name=label,
                limit=MAX_CELL_CHARS,
            )
        raise DocumentError(
            N_(
                "{name}: sheet {sheet} has a cell longer than {limit:,} characters "
                "(Excel keeps 32,767); it was not loaded."
            ),
            name=label,
            sheet=title,
            limit=MAX_CELL_CHARS,
        )


def _column(letters: bytes) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + letter - 64
    return number


def _xml_text(raw: bytes) -> str:
    """Text as it stands in the XML, decoded, with XML's five entities and character
    references replaced."""
    text = raw.decode("utf-8", "replace")
    if "&" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        hexadecimal, decimal, name = match.groups()
        if name:
            return _NAMED_ENTITIES[name]
        try:
            return chr(int(hexadecimal, 16) if hexadecimal else int(decimal))
        except (ValueError, OverflowError):
            return match.group(0)

    return _ENTITY.sub(replace, text)


def _relationships(
    archive: zipfile.ZipFile, rels_part: str, folder: str, label: str, with_ids: bool = False
) -> list[tuple[str, str]]:
    """[(type, or id with `with_ids`; target member)] of a relationships part: a target is
    relative to the part's folder unless it starts with "/"; external targets are left out."""
    found: list[tuple[str, str]] = []
    if rels_part not in archive.namelist():
        return found

    def start(name: str, attrs: dict[str, str]) -> None:
        if name.endswith("Relationship") and attrs.get("TargetMode") != "External":
            target = attrs.get("Target", "")
            member = (
                target[1:] if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            )
            found.append((attrs.get("Id" if with_ids else "Type", ""), member))

    _parse(archive, rels_part, label, start)
    return found


def _parse(
    archive: zipfile.ZipFile, member: str, label: str, start: Callable[[str, dict[str, str]], None]
) -> None:
    """One small part through expat, DOCTYPE refused (entity expansion)."""

    def refuse_doctype(*_: object) -> None:
        raise DocumentError(
            N_("{name} has a DOCTYPE in its XML, which no spreadsheet writes; it was not opened."), name=label
        )

    parser = expat.ParserCreate(namespace_separator="}")
    parser.StartDoctypeDeclHandler = refuse_doctype
    parser.EntityDeclHandler = refuse_doctype
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = start
    try:
        for piece in _pieces(archive, member, label, b"Relationship"):
            parser.Parse(piece, False)
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise DocumentError(
            N_("{name}: {part} is not well-formed XML ({reason}); the file is damaged."),
            name=label,
            part=member,
            reason=str(exc),
        ) from None
