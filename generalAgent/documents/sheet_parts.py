"""An XLSX workbook's small parts read with expat: its sheets (names, zip members), date
system, the styles that show dates and durations, and its shared strings (`Workbook`);
and the parser every part and sheet goes through: no DOCTYPE (entity expansion), 1 MB
pieces, no XML token past MAX_TOKEN_BYTES. documents/sheet_xml.py reads the sheets."""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from xml.parsers import expat

from generalAgent.display import N_, N_plural
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.sheet_values import (
    BUILTIN_DATE_FORMATS,
    BUILTIN_DURATION_FORMATS,
    MAC_EPOCH,
    WINDOWS_EPOCH,
    is_date_format,
    is_duration_format,
)

# The two spellings of SpreadsheetML: transitional (what Excel, LibreOffice, WPS and
# openpyxl write) and strict ISO 29500.
MAIN_NAMESPACES = (
    "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "http://purl.oclc.org/ooxml/spreadsheetml/main",
)
SEPARATOR = "}"  # expat joins namespace and local name with it: "…/main}c"
CHUNK = 1 << 20
# Excel keeps at most 32,767 characters in a cell; four times that is far past any real file.
MAX_CELL_CHARS = 131_072
# expat keeps an unfinished token (a tag, an attribute, a comment) in its buffer until it
# ends; no real token comes near this.
MAX_TOKEN_BYTES = 32 << 20


@dataclass
class Workbook:
    """What every sheet of a workbook needs: its sheets in order (name, zip member), the
    date system, which cell styles (`s=`) show dates and durations, the shared strings."""

    label: str  # the file's name, for messages
    sheets: list[tuple[str, str]]  # the sheets with cells
    names: list[str] = field(default_factory=list)  # every sheet, chart sheets too (openpyxl's sheetnames)
    epoch: datetime = WINDOWS_EPOCH
    date_styles: frozenset[int] = frozenset()
    duration_styles: frozenset[int] = frozenset()
    shared_strings: list[str] = field(default_factory=list)


def read_workbook(archive: zipfile.ZipFile, label: str, max_strings: int, cells: bool = True) -> Workbook:
    """The workbook part of an XLSX archive; `DocumentError` if it is not one, or if its
    shared string table holds more than `max_strings` strings. With `cells=False` only
    the sheets are read (their names), not the styles and strings their cells need."""
    names = set(archive.namelist())
    main = relationship_targets(archive, "_rels/.rels", "", names, label).get("officeDocument", [])
    workbook_part = main[0] if main else "xl/workbook.xml"
    if workbook_part not in names:
        raise DocumentError(N_("{name} is not a valid .xlsx file (no workbook part; damaged?)."), name=label)
    folder = posixpath.dirname(workbook_part)
    rels_part = posixpath.join(folder, "_rels", posixpath.basename(workbook_part) + ".rels")
    by_id = relationships(archive, rels_part, folder, label) if rels_part in names else {}
    targets: dict[str, list[str]] = {}
    for kind, target in by_id.values():
        targets.setdefault(kind.rpartition("/")[2], []).append(target)

    declared: list[tuple[str, str]] = []
    date1904 = [False]

    def workbook_start(name: str, attrs: dict[str, str]) -> None:
        local = name.rpartition(SEPARATOR)[2]
        if local == "sheet":
            rid = next((v for k, v in attrs.items() if k.endswith(SEPARATOR + "id")), "")
            if rid:  # openpyxl drops a sheet without one too
                declared.append((attrs.get("name", ""), rid))
        elif local == "workbookPr":
            date1904[0] = attrs.get("date1904", "").strip().lower() in ("1", "true")

    parse_part(archive, workbook_part, label, workbook_start)
    sheets, titles = [], []
    for title, rid in declared:
        kind, target = by_id.get(rid, ("", ""))
        if target not in names:
            continue  # a sheet whose part is missing is skipped, as openpyxl does
        titles.append(title)
        if kind.endswith("/worksheet") or kind.endswith("/dialogsheet"):  # a chart sheet has no cells
            sheets.append((title, target))
    epoch = MAC_EPOCH if date1904[0] else WINDOWS_EPOCH
    book = Workbook(label=label, sheets=sheets, names=titles, epoch=epoch)
    if not cells:
        return book
    styles = targets.get("styles", ["xl/styles.xml"])[0]
    if styles in names:
        book.date_styles, book.duration_styles = date_styles(archive, styles, label)
    strings = targets.get("sharedStrings", [])
    if strings and strings[0] in names:
        book.shared_strings = shared_strings(archive, strings[0], label, max_strings)
    return book


def xml_parser(label: str) -> Any:
    parser = expat.ParserCreate(namespace_separator=SEPARATOR)
    parser.buffer_text = True
    parser.buffer_size = 1 << 16

    def refuse_doctype(*_: object) -> None:
        # No part of an XLSX has one; a DOCTYPE is how entity expansion ("billion laughs") starts.
        raise DocumentError(
            N_("{name} has a DOCTYPE in its XML, which no spreadsheet writes; it was not opened."), name=label
        )

    parser.StartDoctypeDeclHandler = refuse_doctype
    parser.EntityDeclHandler = refuse_doctype
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    return parser


def feed(parser: Any, archive: zipfile.ZipFile, member: str, label: str) -> None:
    """Streams one part through `parser` in 1 MB pieces (zipfile stops at the size the
    archive's directory declares, which check_office_archive has bounded)."""
    fed = 0
    try:
        with archive.open(member) as stream:
            while chunk := stream.read(CHUNK):
                parser.Parse(chunk, False)
                fed += len(chunk)
                if fed - parser.CurrentByteIndex > MAX_TOKEN_BYTES:
                    raise DocumentError(
                        N_("{name}: {part} has a single XML token over {limit} MB; it was not loaded."),
                        name=label,
                        part=member,
                        limit=MAX_TOKEN_BYTES >> 20,
                    )
            parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise DocumentError(
            N_("{name}: {part} is not well-formed XML ({reason}); the file is damaged."),
            name=label,
            part=member,
            reason=str(exc),
        ) from None
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise DocumentError(
            N_("{name}: {part} cannot be inflated ({reason}); the file is damaged."),
            name=label,
            part=member,
            reason=str(exc),
        ) from None


def parse_part(
    archive: zipfile.ZipFile,
    member: str,
    label: str,
    start: Callable[[str, dict[str, str]], None],
    end: Callable[[str], None] | None = None,
    chars: Callable[[str], None] | None = None,
) -> None:
    parser = xml_parser(label)
    parser.StartElementHandler = start
    if end is not None:
        parser.EndElementHandler = end
    if chars is not None:
        parser.CharacterDataHandler = chars
    feed(parser, archive, member, label)


def relationship_targets(
    archive: zipfile.ZipFile, rels_part: str, folder: str, names: set[str], label: str
) -> dict[str, list[str]]:
    """{relationship type's last word: [targets as archive member names]}."""
    by_type: dict[str, list[str]] = {}
    if rels_part in names:
        for kind, target in relationships(archive, rels_part, folder, label).values():
            by_type.setdefault(kind.rpartition("/")[2], []).append(target)
    return by_type


def relationships(
    archive: zipfile.ZipFile, rels_part: str, folder: str, label: str
) -> dict[str, tuple[str, str]]:
    """{id: (type, target member)}: a target is relative to the part's folder unless it
    starts with "/"; external targets (links to other files) are left out."""
    found: dict[str, tuple[str, str]] = {}

    def start(name: str, attrs: dict[str, str]) -> None:
        if name.endswith("Relationship") and attrs.get("TargetMode") != "External":
            target = attrs.get("Target", "")
            member = (
                target[1:] if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            )
            found[attrs.get("Id", "")] = (attrs.get("Type", ""), member)

    parse_part(archive, rels_part, label, start)
    return found


def date_styles(archive: zipfile.ZipFile, member: str, label: str) -> tuple[frozenset[int], frozenset[int]]:
    """The cell styles (indexes into cellXfs) whose number format shows a date, and those
    showing a duration ("[h]:mm"), as openpyxl's stylesheet reader finds them."""
    custom: dict[int, str] = {}
    formats: list[int] = []
    inside = [False]

    def start(name: str, attrs: dict[str, str]) -> None:
        local = name.rpartition(SEPARATOR)[2]
        if local == "numFmt":
            number = attrs.get("numFmtId", "")
            if number.isdigit():
                custom[int(number)] = attrs.get("formatCode", "")
        elif local == "cellXfs":
            inside[0] = True
        elif local == "xf" and inside[0]:
            try:
                formats.append(int(attrs.get("numFmtId", "0") or 0))
            except ValueError:
                formats.append(0)

    def end(name: str) -> None:
        if name.endswith("cellXfs"):
            inside[0] = False

    parse_part(archive, member, label, start, end)
    dates, durations = set(), set()
    for index, number in enumerate(formats):
        if number in custom:
            code = custom[number]
            dated, lasting = is_date_format(code), is_duration_format(code)
        else:
            dated, lasting = number in BUILTIN_DATE_FORMATS, number in BUILTIN_DURATION_FORMATS
        if dated:
            dates.add(index)
        if lasting:
            durations.add(index)
    return frozenset(dates), frozenset(durations)


def shared_strings(archive: zipfile.ZipFile, member: str, label: str, max_strings: int) -> list[str]:
    """The shared string table: each `<si>`'s plain text and rich-text runs joined, its
    phonetic runs (`<rPh>`) left out; "x005F_" removed as openpyxl removes it."""
    strings: list[str] = []
    parts: list[str] = []
    text = [""]
    state = [0, False]  # [collecting a <t>, inside <rPh>]

    def start(name: str, attrs: dict[str, str]) -> None:
        local = name[name.rfind(SEPARATOR) + 1 :]
        if local == "t":
            if not state[1]:
                state[0] = 1
                text[0] = ""
        elif local == "si":
            parts.clear()
        elif local == "rPh":
            state[1] = True

    def end(name: str) -> None:
        local = name[name.rfind(SEPARATOR) + 1 :]
        if local == "t":
            if state[0]:
                parts.append(text[0])
                state[0] = 0
        elif local == "si":
            strings.append("".join(parts).replace("x005F_", ""))
            if len(strings) > max_strings:
                raise DocumentError(
                    N_plural(
                        "{name} shares more than {count:,} string between its cells, too many to load.",
                        "{name} shares more than {count:,} strings between its cells, too many to load.",
                    ),
                    name=label,
                    count=max_strings,
                )
        elif local == "rPh":
            state[1] = False

    def chars(data: str) -> None:
        if state[0]:
            text[0] += data
            if len(text[0]) > MAX_CELL_CHARS:
                raise DocumentError(
                    N_(
                        "{name} has a shared string longer than {limit:,} characters "
                        "(Excel keeps 32,767); it was not loaded."
                    ),
                    name=label,
                    limit=MAX_CELL_CHARS,
                )

    parse_part(archive, member, label, start, end, chars)
    return strings
