"""An XLSX workbook's sheets read straight from their XML with expat: the cell values
openpyxl's read-only `iter_rows(values_only=True)` gives, without its cell objects.

openpyxl builds a dict and a cell per cell and imports numpy with itself; a 50k-row sheet
then takes about two seconds to read. Here the workbook's small parts (workbook.xml, its
relationships, styles.xml, sharedStrings.xml) are parsed once, and each worksheet's XML is
streamed through one expat parser whose handlers keep a few local variables per cell: the
value is converted when its `</c>` arrives and placed in its row's list. What openpyxl does
is followed exactly (the property test in tests/property/test_sheet_xml.py compares the
two on random sheets): numbers as int when written without "." or an exponent, shared and
inline strings (rich-text runs joined, phonetic runs left out), booleans, ISO dates
(`t="d"`), errors as their text, and numbers whose style's format is a date as
date/time/datetime/timedelta in the workbook's 1900 or 1904 date system.

Two things differ on purpose. Cells outside the sheet's `<dimension>` are read (openpyxl
drops them, so a sheet with a stale dimension lost data). A formula cell without a cached
value is reported with its formula (openpyxl gives it as empty).

Bounded: a DOCTYPE (entity expansion) is refused; the sheet is inflated in 1 MB pieces and
never held whole; the rectangle of valued cells is checked against `max_cells` row by row
(a cell at XFD1048576 alone is refused before any row is padded), the cell elements
counted, no cell's text may exceed `MAX_CELL_CHARS`, and no single token of XML may run
past `MAX_TOKEN_BYTES` (a gigabyte-long attribute would otherwise sit in expat's buffer).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from typing import Any

from generalAgent.display import N_, N_plural
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.sheet_parts import (
    CHUNK,
    MAIN_NAMESPACES,
    MAX_CELL_CHARS,
    MAX_TOKEN_BYTES,
    SEPARATOR,
    Workbook,
    feed,
    xml_parser,
)
from generalAgent.documents.sheet_values import excel_date, iso_date

# Excel's own limits (also what openpyxl accepts for a column).
MAX_ROWS = 1_048_576
MAX_COLUMNS = 16_384
# Cell elements (valued or not) per sheet, as a multiple of max_cells: styled empty cells
# are common (a formatted column), but not without bound.
CELL_ELEMENTS_PER_CELL = 2
_DIGITS = "0123456789"


@dataclass
class SheetCells:
    """A sheet's values as rows (a rectangle as wide as its rightmost value, as long as its
    last row with one; None for an empty cell) and {(row, column) (0-based): formula} of
    the formula cells that hold no cached value."""

    rows: list[list[Any]]
    uncached: dict[tuple[int, int], str]


def read_sheet(
    archive: zipfile.ZipFile, book: Workbook, title: str, member: str, max_cells: int
) -> SheetCells:
    """One worksheet's values and uncached formulas (see the module docstring for what is
    bounded and how); `DocumentError` names the sheet and the limit it broke.

    The sheet is scanned first (`_scan_sheet`); XML written in a way the scanner does not
    take is read again by expat (`_parse_sheet`), which takes any well-formed sheet."""
    try:
        return _scan_sheet(archive, book, _SheetGrid(book.label, title, max_cells), member)
    except _NotPlain:
        return _parse_sheet(archive, book, _SheetGrid(book.label, title, max_cells), member)


class _NotPlain(Exception):
    """The sheet's XML uses a form the scanner leaves to expat (a comment, a namespace
    prefix, CDATA, a cell without its reference first, rich text, ...)."""


class _SheetGrid:
    """The rows of values read so far, kept within `max_cells` as each row is added: the
    rectangle (rows up to this one, by the widest row) is checked before any list is made,
    so a lone cell at XFD1048576 is refused, not padded to 17 billion cells."""

    def __init__(self, label: str, title: str, max_cells: int) -> None:
        self.label, self.title, self.max_cells = label, title, max_cells
        self.rows: list[list[Any]] = []
        self.width = 0
        self.elements = 0  # cell elements seen, valued or not
        self.element_limit = max_cells * CELL_ELEMENTS_PER_CELL
        self.uncached: dict[tuple[int, int], str] = {}
        self.columns: dict[str, int] = {}  # column letters -> 1-based index

    def add(self, number: int, row: list[Any]) -> None:
        """Row `number` (1-based) with its values; a row numbered at or before one already
        added is dropped, as openpyxl's read-only reader drops it."""
        rows = self.rows
        index = number - 1
        if index < len(rows):
            return
        wide = self.width if self.width >= len(row) else len(row)
        if number * wide > self.max_cells:
            raise self.too_many(number, wide)
        if index > len(rows):
            rows.extend([] for _ in range(index - len(rows)))
        rows.append(row)
        self.width = wide

    def count(self, elements: int) -> None:
        self.elements += elements
        if self.elements > self.element_limit:
            raise DocumentError(
                N_plural(
                    "{name}: sheet {sheet} has more than {count:,} cell element, too many to load; split the sheet.",
                    "{name}: sheet {sheet} has more than {count:,} cell elements, too many to load; split the sheet.",
                ),
                name=self.label,
                sheet=self.title,
                count=self.element_limit,
            )

    def column(self, letters: str) -> int:
        number = 0
        for letter in letters:
            if not "A" <= letter <= "Z":
                raise DocumentError(
                    N_(
                        "{name}: sheet {sheet} has a cell reference {letters!r} that is not a column; "
                        "the file is damaged."
                    ),
                    name=self.label,
                    sheet=self.title,
                    letters=letters,
                )
            number = number * 26 + ord(letter) - 64
        if not 0 < number <= MAX_COLUMNS:
            raise self.past_excel()
        self.columns[letters] = number
        return number

    def past_excel(self) -> DocumentError:
        return DocumentError(
            N_(
                "{name}: sheet {sheet} has a cell past Excel's {rows:,} rows or {columns:,} columns; the file is damaged."
            ),
            name=self.label,
            sheet=self.title,
            rows=MAX_ROWS,
            columns=MAX_COLUMNS,
        )

    def too_many(self, height: int, wide: int) -> DocumentError:
        return DocumentError(
            N_plural(
                "{name}: sheet {sheet} has more than {count:,} cell ({height:,} rows by {wide:,} columns), "
                "too many to load; split the sheet.",
                "{name}: sheet {sheet} has more than {count:,} cells ({height:,} rows by {wide:,} columns), "
                "too many to load; split the sheet.",
            ),
            name=self.label,
            sheet=self.title,
            count=self.max_cells,
            height=height,
            wide=wide,
        )

    def damaged(self, row: int, column: int, exc: Exception) -> DocumentError:
        return DocumentError(
            N_(
                "{name}: sheet {sheet} has a cell that is not what its type says "
                "(row {row}, column {column}: {reason}); the file is damaged."
            ),
            name=self.label,
            sheet=self.title,
            row=row,
            column=column,
            reason=str(exc),
        )

    def result(self) -> SheetCells:
        width = self.width
        for values in self.rows:
            if len(values) < width:
                values.extend([None] * (width - len(values)))
        return SheetCells(self.rows, self.uncached)


class _Styles:
    """Style attribute text (`s="3"`) -> 0 not a date, 1 a date, 2 a duration, memoised:
    a sheet uses a handful of styles over and over."""

    def __init__(self, book: Workbook) -> None:
        self.book = book
        self.kinds: dict[Any, int] = {}

    def kind(self, style: str | bytes | None) -> int:
        found = self.kinds.get(style)
        if found is None:
            number = int(style) if style else 0  # no s= is style 0, which may be a date style
            found = (
                (2 if number in self.book.duration_styles else 1) if number in self.book.date_styles else 0
            )
            self.kinds[style] = found
        return found


def _cell_value(kind: str, dated: int, text: str, book: Workbook) -> Any:
    """A cell's value from its type (`t=`), its style's date kind and its `<v>` text (not
    empty), as openpyxl's WorkSheetParser.parse_cell gives it."""
    if kind == "n":
        number = float(text) if "." in text or "E" in text or "e" in text else int(text)
        return excel_date(number, book.epoch, duration=dated == 2) if dated else number
    if kind == "s":
        return book.shared_strings[int(text)]
    if kind == "b":
        return bool(int(text))
    if kind == "d":
        return iso_date(text)
    return text  # "str" (a formula's text result), "e" (an error such as #N/A), anything else


# -- the scanner ---------------------------------------------------------------------------
# One cell as Excel, LibreOffice, WPS, openpyxl and XlsxWriter write it: the reference
# first, then the other attributes, then its content up to `</c>`. Groups: column letters,
# row digits, the other attributes, then one of: a lone value's text (`<v>12</v>`), a
# plain inline string's text, any other content (b"" when self-closed or empty). The
# content may not hold another cell's start, and its repeats are possessive, so a cell
# never closed fails at the next one: a scan is linear in the sheet's size.
_CELL = re.compile(
    rb'<c r="([A-Z]{1,3})(\d{1,7})"([^<>]{0,400}?)(?:/>|>'
    rb"(?:<v>([^<]++)</v>|<is><t>([^<]++)</t></is>|((?:[^<]++|<(?!c[\s/>]|/c>))*+))</c>)"
)
# The forms of a cell's content the scanner reads; anything else goes to expat.
_CONTENT = re.compile(
    rb"(<f(?:\s[^<>]{0,400})?(?:/>|>([^<]*)</f>))?"  # a formula, and its text
    rb"(?:<v>([^<]*)</v>|<v/>)?"  # the (cached) value
    rb"(?:(<is>)<t(?:\s[^<>]{0,100})?>([^<]*)</t></is>)?"  # a plain inline string
)
_ATTRIBUTES = re.compile(rb'(?:\s+[A-Za-z]{1,12}="[^"<&]{0,40}")*\s*')
_CELL_ATTRIBUTE = re.compile(rb'\s([A-Za-z]{1,12})="([^"]*)"')
# Inside <sheetData>, any of these hands the sheet to expat: a comment, CDATA, a DOCTYPE
# or processing instruction, a namespace being set, a cell with a namespace prefix, a cell
# tag followed by a tab or a new line (the counts below look for "<c " "<c>" "<c/"), a
# carriage return (XML turns CR LF into LF). Each is a plain substring search; text that
# happens to contain one ("a:c b") only costs the slower reading.
_NOT_PLAIN = (b"<!", b"<?", b"xmlns", b"\r", b"<c\t", b"<c\n", b":c ", b":c>", b":c/")
# The root, declaring SpreadsheetML as the default namespace, in UTF-8.
_SHEET_HEAD = re.compile(
    rb"^(?:\xef\xbb\xbf)?(?:<\?xml([^>]{0,200})\?>\s*)?<worksheet\s[^>]{0,4000}?"
    rb'xmlns="http://schemas\.openxmlformats\.org/spreadsheetml/2006/main"'
)
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([^"']*)["']""")
_ENTITY = re.compile(r"&(?:#x([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|(amp|lt|gt|quot|apos));")
_NAMED_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def _xml_text(raw: bytes) -> str:
    """Text as it stands in the XML, decoded: UTF-8, with XML's five entities and
    character references replaced (html.unescape would read "&#128;" as "€"). Text
    longer than a cell may hold goes to expat, which refuses it by name."""
    if len(raw) > MAX_CELL_CHARS:
        raise _NotPlain
    text = raw.decode("utf-8")
    if "&" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        hexadecimal, decimal, name = match.groups()
        if name:
            return _NAMED_ENTITIES[name]
        return chr(int(hexadecimal, 16) if hexadecimal else int(decimal))

    decoded = _ENTITY.sub(replace, text)
    if "&" in _ENTITY.sub("", text):
        raise _NotPlain  # an entity XML does not define: expat says what is wrong
    return decoded


def _cell_kind(attributes: bytes, styles: _Styles) -> tuple[str, int]:
    """(type, date kind) from a cell's attributes after its reference (` s="3" t="s"`)."""
    if not _ATTRIBUTES.fullmatch(attributes):
        raise _NotPlain  # single quotes, an entity: expat reads them
    found = dict(_CELL_ATTRIBUTE.findall(attributes))
    return found.get(b"t", b"n").decode(), styles.kind(found.get(b"s", b"").decode())


def _scan_sheet(archive: zipfile.ZipFile, book: Workbook, grid: _SheetGrid, member: str) -> SheetCells:
    """The sheet's cells by one bounded regular expression per piece of `<sheetData>`:
    one Python step per cell where expat takes five or seven handler calls. Raises
    `_NotPlain` at the first sign of XML it does not take (checked per piece: every `<c`
    must be a cell it matched)."""
    styles = _Styles(book)
    shared = book.shared_strings
    columns: dict[bytes, int] = {}  # column letters -> 1-based index
    uncached = grid.uncached
    kinds: dict[bytes, tuple[str, int]] = {}  # the attributes after r= -> (type, date kind)
    row: list[Any] = []
    row_number = 0
    row_digits = b""
    inline: bytes | None = None
    head = b""
    inside = False  # past <sheetData>
    pending = b""
    try:
        with archive.open(member) as stream:
            while True:
                chunk = stream.read(CHUNK)
                if not inside:
                    head += chunk
                    opened = head.find(b"<sheetData")
                    if opened < 0:
                        if not chunk or len(head) > MAX_TOKEN_BYTES:
                            raise _NotPlain  # <x:sheetData>, or none: expat reads what there is
                        continue
                    root = _SHEET_HEAD.match(head)
                    declared = _ENCODING.search(root.group(1) or b"") if root else None
                    if (
                        not root
                        or (declared and declared.group(1).lower() != b"utf-8")
                        or b"<!" in head[:opened]
                    ):
                        raise _NotPlain
                    inside = True
                    chunk, head = head[opened:], b""
                data = pending + chunk
                if chunk:
                    cut = data.rfind(b"</row>")
                    if cut < 0:
                        if len(data) > MAX_TOKEN_BYTES:
                            raise _NotPlain  # a row of over 32 MB: expat says whether it is too much
                        pending = data
                        continue
                    cut += 6
                    piece, pending = data[:cut], data[cut:]
                else:
                    end = data.find(b"</sheetData>")
                    piece, pending = (data[:end], b"") if end >= 0 else (data, b"")
                for mark in _NOT_PLAIN:
                    if mark in piece:
                        raise _NotPlain
                cells = _CELL.findall(piece)
                if len(cells) != piece.count(b"<c ") + piece.count(b"<c>") + piece.count(b"<c/"):
                    raise _NotPlain
                for letters, digits, attributes, value, inline, content in cells:
                    if digits != row_digits:
                        number = int(digits)
                        if number <= row_number or number > MAX_ROWS:
                            if number > MAX_ROWS:
                                raise grid.past_excel()
                            raise _NotPlain  # rows out of order: openpyxl drops some, expat too
                        if row:
                            grid.add(row_number, row)
                            row = []
                        row_number, row_digits = number, digits
                    parsed = kinds.get(attributes)
                    if parsed is None:
                        parsed = kinds[attributes] = _cell_kind(attributes, styles)
                    kind, dated = parsed
                    if content:  # a formula, rich or spaced text: the general form
                        parts = _CONTENT.fullmatch(content)
                        if parts is None:
                            raise _NotPlain
                        formula_tag, formula, value, inline_tag, inline = parts.groups()
                        if formula_tag and formula is None:
                            formula = b""  # <f t="shared" si="0"/>: the master cell holds the text
                        if kind == "inlineStr" and inline_tag:
                            value, inline = b"", inline or b""
                            cell: Any = _xml_text(inline)
                        elif not value or kind == "inlineStr":
                            if formula is not None:
                                known = columns.get(letters)
                                index = known if known is not None else grid.column(letters.decode())
                                text = _xml_text(formula)
                                uncached[(row_number - 1, index - 1)] = (
                                    "=" + text if text else "(a shared formula)"
                                )
                            continue
                    if value:
                        if kind == "n" and not dated:
                            cell = (
                                int(value)
                                if value.isdigit()
                                else float(value)
                                if b"." in value or b"E" in value or b"e" in value
                                else int(value)
                            )
                        elif kind == "s":
                            cell = shared[int(value)]
                        elif kind == "inlineStr":
                            continue  # openpyxl ignores a <v> in an inline string cell
                        else:
                            cell = _cell_value(kind, dated, _xml_text(value), book)
                    elif inline:
                        if kind != "inlineStr":
                            continue
                        if b"&" in inline or len(inline) > MAX_CELL_CHARS:
                            cell = _xml_text(inline)
                        else:
                            cell = inline.decode()
                    elif not content:
                        continue  # an empty cell, <c r="B2" s="1"/>
                    column = columns.get(letters)
                    if column is None:
                        column = columns[letters] = grid.column(letters.decode())
                    index = column - 1
                    filled = len(row)
                    if index == filled:
                        row.append(cell)
                    elif index > filled:
                        row.extend([None] * (index - filled))
                        row.append(cell)
                    else:
                        row[index] = cell
                grid.count(len(cells))  # after the piece, so a valued cell over the limit is named as such
                if not chunk:
                    break
    except (ValueError, IndexError, OverflowError, UnicodeDecodeError):
        raise _NotPlain from None  # expat reads it again and says exactly what is wrong
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise DocumentError(
            N_("{name}: {part} cannot be inflated ({reason}); the file is damaged."),
            name=grid.label,
            part=member,
            reason=str(exc),
        ) from None
    if row:
        grid.add(row_number, row)
    return grid.result()


# -- expat: any well-formed sheet ------------------------------------------------------------
def _parse_sheet(archive: zipfile.ZipFile, book: Workbook, grid: _SheetGrid, member: str) -> SheetCells:
    """The sheet's cells by expat's start/end/text handlers, element by element: any
    namespace prefix, attribute order, comment, CDATA or rich inline text."""
    styles = _Styles(book)
    columns = grid.columns
    uncached = grid.uncached
    cell_name = row_name = value_name = formula_name = inline_name = text_name = phonetic_name = ""
    row: list[Any] = []
    row_number = 0  # 1-based, of the row being read (0 before the first)
    column = 0  # 1-based, of the cell being read
    kind = "n"
    style: str | None = None
    value_text: str | None = None
    formula: str | None = None
    inline: list[str] | None = None  # the text runs of an inline string
    text = ""
    collecting = False  # inside a <v>, an <f> or an inline string's <t>
    phonetic = False  # inside <rPh>: a reading aid, not part of the text

    def start(name: str, attrs: dict[str, str]) -> None:
        nonlocal column, kind, style, value_text, formula, inline, text, collecting, phonetic, row, row_number
        if name == cell_name:
            reference = attrs.get("r")
            if reference:
                letters = reference.rstrip(_DIGITS)
                found = columns.get(letters)
                column = found if found is not None else grid.column(letters)
            else:
                column += 1
                if column > MAX_COLUMNS:
                    raise grid.past_excel()
            kind = attrs.get("t", "n")
            style = attrs.get("s")
            value_text = formula = inline = None
            grid.count(1)
        elif name in (value_name, formula_name):
            text, collecting = "", True
        elif name == row_name:
            number = attrs.get("r")
            row_number = _row_number(number, grid) if number else row_number + 1
            if row_number > MAX_ROWS:
                raise grid.past_excel()
            row, column = [], 0
        elif name == text_name:
            if inline is not None and not phonetic:
                text, collecting = "", True
        elif name == inline_name:
            inline = []
        elif name == phonetic_name:
            phonetic = True
        elif not cell_name:
            namespace, _, local = name.rpartition(SEPARATOR)
            if local in ("worksheet", "dialogsheet") and namespace in MAIN_NAMESPACES:
                set_names(namespace + SEPARATOR)
            elif local == "worksheet" and not namespace:  # written without its namespace
                set_names("")

    def end(name: str) -> None:
        nonlocal collecting, value_text, formula, phonetic
        if name == cell_name:
            finish_cell()
        elif collecting:
            if name == value_name:
                value_text = text
            elif name == formula_name:
                formula = text
            elif name == text_name and inline is not None:
                inline.append(text)
            collecting = False
        elif name == row_name:
            if row:
                grid.add(row_number, row)
        elif name == phonetic_name:
            phonetic = False

    def chars(data: str) -> None:
        nonlocal text
        if collecting:
            text += data
            if len(text) > MAX_CELL_CHARS:
                raise DocumentError(
                    N_(
                        "{name}: sheet {sheet} has a cell longer than {limit:,} characters "
                        "(Excel keeps 32,767); it was not loaded."
                    ),
                    name=grid.label,
                    sheet=grid.title,
                    limit=MAX_CELL_CHARS,
                )

    def finish_cell() -> None:
        if kind == "inlineStr":
            value = "".join(inline) if inline is not None else None
        elif value_text:
            try:
                value = _cell_value(kind, styles.kind(style), value_text, book)
            except (ValueError, IndexError, OverflowError) as exc:
                raise grid.damaged(row_number, column, exc) from None
        else:
            value = None
        if value is None:
            if formula is not None:
                uncached[(row_number - 1, column - 1)] = "=" + formula if formula else "(a shared formula)"
            return
        index = column - 1
        filled = len(row)
        if index == filled:
            row.append(value)
        elif index > filled:
            row.extend([None] * (index - filled))
            row.append(value)
        else:  # written out of order: the later cell wins, as in openpyxl
            row[index] = value

    def set_names(prefix: str) -> None:
        nonlocal cell_name, row_name, value_name, formula_name, inline_name, text_name, phonetic_name
        cell_name, row_name, value_name, formula_name = (prefix + n for n in ("c", "row", "v", "f"))
        inline_name, text_name, phonetic_name = (prefix + n for n in ("is", "t", "rPh"))

    parser = xml_parser(grid.label)
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    feed(parser, archive, member, grid.label)
    return grid.result()


# -- the workbook's small parts --------------------------------------------------------------
def _row_number(text: str, grid: _SheetGrid) -> int:
    """A `<row r=…>` number, read as openpyxl reads it ("7.0" is row 7)."""
    try:
        number = int(text)
    except ValueError:
        try:
            whole = float(text)
        except ValueError:
            whole = 0.5
        if not whole.is_integer():
            raise DocumentError(
                N_("{name}: sheet {sheet} has a row numbered {number!r}; the file is damaged."),
                name=grid.label,
                sheet=grid.title,
                number=text,
            ) from None
        number = int(whole)
    if number <= 0:
        raise DocumentError(
            N_("{name}: sheet {sheet} has a row numbered {number!r}; the file is damaged."),
            name=grid.label,
            sheet=grid.title,
            number=text,
        )
    return number
