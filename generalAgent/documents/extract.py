"""Text out of documents: PDF, DOCX, XLSX, PPTX, Markdown, plain text and source code.

Each extractor returns `Block`s that chunks never cross (a PDF page, a slide, a group of
spreadsheet rows under their header), keeping page/slide/sheet numbers. Everything a user
can hand us that we cannot read (encrypted, corrupt, empty, scanned, too big, an old binary
format) raises `DocumentError` with one sentence that says what is wrong and what to do.

The document libraries are imported inside the functions that use them: this module is
reachable from start-up, and the chat prompt must not wait for pypdfium2 or openpyxl.
"""

from __future__ import annotations

import codecs
import html
import io
import os
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from generalAgent.config.settings import DocumentSettings
from generalAgent.display import human_size, one_line
from generalAgent.documents.ocr import (
    OcrCancelled,
    OcrFailed,
    OcrUnavailable,
    current_call,
    ocr_installed,
    recognise_pages,
    worth_reading,
)
from generalAgent.search.chunking import BLOCK_SEPARATOR, Block

# (stage, done, total): lets the CLI draw a progress bar ("ocr": pages read so far).
ExtractProgress = Callable[[str, int, int], None]
# Opens a document's file for reading. The read tools pass one that verifies the file
# opened is the workspace file their path check allowed (`Workspace.open_for_reading`):
# a symlink swapped in after the check must not make a document outside readable.
OpenFile = Callable[[Path], BinaryIO]


def open_plainly(path: Path) -> BinaryIO:
    """The file at `path`, opened for reading as it is (for files the user named)."""
    return path.open("rb")


# Chinese files saved by Windows tools are often GBK/GB18030; GB18030 decodes them all.
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
# Told apart when a file is not UTF-8, in the order that wins a tie.
LEGACY_ENCODINGS = ("gb18030", "big5", "shift_jis", "euc_jp", "euc_kr", "cp1252")
TEXT_SAMPLE_BYTES = 64 * 1024
# A text file is read, decoded and handed to the indexer this many bytes at a time: a 200 MB
# log costs the memory of a few pieces, not of the whole text several times over.
TEXT_PIECE_BYTES = 1 << 20
PDF_TYPES = {".pdf": "pdf"}
OFFICE_TYPES = {".docx": "docx", ".xlsx": "xlsx", ".xlsm": "xlsx", ".pptx": "pptx"}
MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdx"}
# Old and WPS Office formats, read as their modern form once LibreOffice has converted them
# (documents/convert.py).
OLD_OFFICE = {
    ".doc": ".docx",
    ".xls": ".xlsx",
    ".ppt": ".pptx",
    ".wps": ".docx",
    ".et": ".xlsx",
    ".dps": ".pptx",
}
# What a folder walk picks up (a file named explicitly is tried whatever its suffix).
_TEXT_SUFFIXES = """
.txt .rst .org .tex .csv .tsv .json .jsonl .yaml .yml .toml .ini .cfg .conf .log .xml .html .htm
.css .py .pyi .js .jsx .ts .tsx .java .kt .go .rs .c .h .cc .cpp .hpp .cs .rb .php .swift .scala
.sh .bash .zsh .ps1 .sql .r .lua .pl .m .vue .svelte
"""
SEARCHABLE_SUFFIXES = frozenset([*PDF_TYPES, *OFFICE_TYPES, *MARKDOWN_SUFFIXES, *_TEXT_SUFFIXES.split()])
_OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # old Office files and encrypted new ones
_CJK_CHAR = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
# A PDF outline names the sections of the pages; entries past this many are not read (a
# hostile file may hold millions), and a page lists at most MAX_PAGE_SECTIONS of them.
MAX_OUTLINE_ENTRIES = 20_000
MAX_PAGE_SECTIONS = 3
MAX_HEADING_CHARS = 120
# pdfium marks a hyphen it inserted at a line break with one of these.
_SOFT_HYPHENS = ("\x02", "\u00ad", "\ufffe")
_NO_SOFT_HYPHENS = str.maketrans(dict.fromkeys(_SOFT_HYPHENS))


class DocumentError(Exception):
    """A document we cannot read; the message names the file, the problem and the fix."""


@dataclass(frozen=True)
class ExtractedDocument:
    name: str
    file_type: str  # pdf | docx | xlsx | pptx | markdown | text
    blocks: list[Block]

    @property
    def text(self) -> str:
        return BLOCK_SEPARATOR.join(block.text for block in self.blocks)


@dataclass
class Reading:
    """How far a document's reading has got: bytes of a text file, blocks of the others;
    and notes on what was left unread (pages OCR did not reach), for the user."""

    done: int = 0
    total: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        return min(self.done / self.total, 1.0) if self.total else 0.0


@dataclass(frozen=True)
class DocumentStream:
    """A document's blocks as they are read (see `open_document`)."""

    name: str
    file_type: str
    blocks: Iterator[Block]
    reading: Reading


def file_type_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in PDF_TYPES:
        return "pdf"
    if suffix in OFFICE_TYPES:
        return OFFICE_TYPES[suffix]
    if suffix in OLD_OFFICE:
        return OFFICE_TYPES[OLD_OFFICE[suffix]]
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    return "text"


@dataclass
class ReadLimit:
    """How much of a document a preview needs: readers stop at `units` pages, sheets or
    slides, or once `chars` characters are read, and set `stopped` when there was more.
    A large document's preview then costs its first pages, not the whole file."""

    units: int | None = None
    chars: int | None = None
    stopped: bool = False

    def reached(self, unit: int, chars: int) -> bool:
        """Whether reading unit number `unit` (1-based), with `chars` read before it, is past the limit."""
        if (self.units is not None and unit > self.units) or (self.chars is not None and chars >= self.chars):
            self.stopped = True
        return self.stopped


def extract_document(
    path: Path,
    settings: DocumentSettings,
    progress: ExtractProgress | None = None,
    limit: ReadLimit | None = None,
    open_file: OpenFile = open_plainly,
) -> ExtractedDocument:
    """All text of the document at `path` (or, with `limit`, its start), in blocks;
    `DocumentError` if it cannot be read."""
    stream = open_document(path, settings, progress, limit, open_file)
    return ExtractedDocument(name=stream.name, file_type=stream.file_type, blocks=list(stream.blocks))


def open_document(
    path: Path,
    settings: DocumentSettings,
    progress: ExtractProgress | None = None,
    limit: ReadLimit | None = None,
    open_file: OpenFile = open_plainly,
) -> DocumentStream:
    """The document at `path`, checked, with its non-blank blocks to be read one by one.

    A text file is read TEXT_PIECE_BYTES at a time (blocks that continue one another); the
    other formats are read whole, within their own limits. `DocumentError` says what cannot
    be read, here or while iterating. The file is opened once, with `open_file`, and every
    reader reads that open file (closed when the blocks are exhausted). Pages of a PDF
    without a text layer are read by OCR when it is installed and on (OCR_ENABLED);
    `progress` hears of each page read that way.
    """
    limit = limit or ReadLimit()
    _check_file(path, settings)
    kind = file_type_of(path)
    reading = Reading()
    document: BinaryIO
    if path.suffix.lower() in OLD_OFFICE:
        from generalAgent.documents.convert import convert_legacy_office

        document = io.BytesIO(convert_legacy_office(path, open_file))
    else:
        try:
            document = open_file(path)
        except OSError as exc:
            raise DocumentError(f"{path.name} cannot be read: {exc.strerror or exc}.") from None
    blocks = _blocks(document, path, kind, settings, limit, progress, reading)
    return DocumentStream(path.name, kind, blocks, reading)


def _blocks(
    document: BinaryIO,
    path: Path,
    kind: str,
    settings: DocumentSettings,
    limit: ReadLimit,
    progress: ExtractProgress | None,
    reading: Reading,
) -> Iterator[Block]:
    name = path.name
    found = False
    try:
        with document:
            if kind in ("markdown", "text"):
                blocks: Iterable[Block] = _read_text(document, path, limit, reading)
            elif kind == "pdf":
                blocks = _read_pdf(document, path, settings, limit, progress, reading)
            else:
                reader = {"docx": _read_docx, "xlsx": _read_xlsx, "pptx": _read_pptx}[kind]
                blocks = reader(document, path, settings, limit)
            listed = blocks if isinstance(blocks, list) else None  # a text file counts its bytes
            if listed is not None:
                reading.total = len(listed)
            for block in blocks:
                if listed is not None:
                    reading.done += 1
                if block.text.strip():
                    found = True
                    yield block
    except DocumentError:
        raise
    except MemoryError:
        raise DocumentError(f"{name} is too large to read in memory; split it into parts.") from None
    except Exception as exc:  # a library's own error on a malformed file: say so, no traceback
        raise DocumentError(
            f"{name} could not be read ({type(exc).__name__}: {(one_line(exc, 160) or 'no details')}); it may be damaged."
        ) from None
    if not found:
        if kind == "pdf" and reading.notes:
            raise DocumentError(f"{name} has no text layer (scanned?); {' '.join(reading.notes)}")
        if kind == "pdf":
            raise DocumentError(f"{name} has no text layer (scanned?) and no text was recognised in it.")
        raise DocumentError(f"{name} contains no text to search.")


def preview_document(path: Path, settings: DocumentSettings, open_file: OpenFile = open_plainly) -> str:
    """The start of a document within the per-type preview limits of the settings."""
    limits = {
        "pdf": (settings.pdf_preview_pages, settings.pdf_preview_chars),
        "docx": (None, settings.docx_preview_chars),
        "xlsx": (settings.xlsx_preview_sheets, settings.xlsx_preview_chars),
        "pptx": (settings.pptx_preview_slides, settings.pptx_preview_chars),
    }
    units, chars = limits.get(file_type_of(path), (None, settings.text_preview_chars))
    # One character past the limit is read, so a document of exactly `chars` is not "cut".
    limit = ReadLimit(units, chars + 1)
    document = extract_document(path, settings, limit=limit, open_file=open_file)
    blocks = [b for b in document.blocks if units is None or b.page is None or b.page <= units]
    if document.file_type == "xlsx":
        text = sheets_preview_text(blocks, xlsx_sheet_names(path, open_file))
    else:
        text = BLOCK_SEPARATOR.join(b.text for b in blocks)
    read = len(document.text)
    if len(text) > chars:
        text = text[:chars]
    if limit.stopped:
        text += f"\n\n[preview: the first {len(text):,} characters; the document goes on: search the file for the rest]"
    elif len(text) < read:
        text += f"\n\n[preview: {len(text):,} of {read:,} characters; search the file for the rest]"
    return text


# -- checks --------------------------------------------------------------------------------
def _check_file(path: Path, settings: DocumentSettings) -> None:
    name = path.name
    if not path.exists():
        raise DocumentError(f"{name} does not exist; check the path.")
    if path.is_dir():
        raise DocumentError(f"{name} is a folder; give a file inside it.")
    size = path.stat().st_size
    if size == 0:
        raise DocumentError(f"{name} is empty (0 bytes).")
    limit = settings.index_max_file_mb * 1024 * 1024
    if size > limit:
        raise DocumentError(
            f"{name} is {size / 1_048_576:,.0f} MB, over the "
            f"{settings.index_max_file_mb} MB limit; split it or raise INDEX_MAX_FILE_MB."
        )


def check_office_archive(document: BinaryIO, path: Path, what: str) -> None:
    """Office files are ZIP archives; an encrypted one is an OLE container instead. One
    that would inflate to far more than any real document (a "zip bomb") is refused from
    its directory, before a byte of it is inflated. Leaves `document` at its start."""
    document.seek(0)
    head = document.read(8)
    if head == _OLE_SIGNATURE:
        raise DocumentError(
            f"{path.name} is password-protected (or an old .doc/.xls/.ppt renamed); "
            f"save an unprotected {what} copy and try again."
        )
    if not zipfile.is_zipfile(document):
        raise DocumentError(f"{path.name} is not a valid {what} file (damaged, or another format renamed).")
    try:
        with zipfile.ZipFile(document) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise DocumentError(f"{path.name} is not a valid {what} file (damaged?).") from None
    finally:
        document.seek(0)
    inflated = sum(member.file_size for member in members)
    worst = max(
        (m.file_size / max(m.compress_size, 1) for m in members if m.file_size > RATIO_CHECKED_ABOVE),
        default=0.0,
    )
    if len(members) > MAX_ARCHIVE_MEMBERS or inflated > MAX_INFLATED_BYTES or worst > MAX_COMPRESSION_RATIO:
        raise DocumentError(
            f"{path.name} would inflate to {human_size(inflated)} in {len(members):,} parts "
            f"(compression up to {worst:,.0f}:1), more than a real {what} file; it was not opened."
        )


# -- PDF -----------------------------------------------------------------------------------
def _read_pdf(
    document: BinaryIO,
    path: Path,
    settings: DocumentSettings,
    limit: ReadLimit,
    progress: ExtractProgress | None = None,
    reading: Reading | None = None,
) -> list[Block]:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(document)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise DocumentError(
                f"{path.name} is password-protected; save a copy without the password and try again."
            ) from None
        raise DocumentError(f"{path.name} is not a readable PDF (damaged, or not a PDF).") from None
    try:
        headings = outline_headings(pdf)
        texts: list[str] = []
        scanned: list[int] = []
        read = 0  # characters so far, for the limit
        for number in range(len(pdf)):
            if limit.reached(number + 1, read):
                break
            page = pdf[number]
            textpage = page.get_textpage()
            try:
                raw = textpage.get_text_range()
                if settings.ocr_enabled and worth_reading(raw, page):
                    scanned.append(number)
            finally:
                textpage.close()
                page.close()
            texts.append(raw)
            read += len(raw)
        recognised = _recognise(pdf, path, scanned, settings, progress, reading or Reading())
        return [
            Block(
                text=join_pdf_lines(recognised.get(number, raw)),
                page=number + 1,
                heading=headings.get(number, ""),
                place=f"page {number + 1}",
                ocr=number in recognised,
            )
            for number, raw in enumerate(texts)
        ]
    except pdfium.PdfiumError:
        raise DocumentError(f"{path.name} is damaged: a page could not be read.") from None
    finally:
        pdf.close()


def _recognise(
    pdf: Any,
    path: Path,
    pages: list[int],
    settings: DocumentSettings,
    progress: ExtractProgress | None,
    reading: Reading,
) -> dict[int, str]:
    """OCR text of the scanned `pages`, within the limits of the document and of the
    running call (documents/ocr.py); {} when there are none or OCR is off. What the
    limits leave unread is said in `reading.notes`, naming the setting to raise."""
    if not pages or not settings.ocr_enabled:
        return {}
    if not ocr_installed():
        if len(pages) == len(pdf):
            raise DocumentError(
                f"{path.name} has no text layer (scanned?). OCR is not installed: "
                "pip install 'generalAgent[ocr]' (offline Chinese and English models)."
            )
        return {}  # a few picture pages in a text PDF: index the text, as without OCR
    call = current_call()
    allowed, setting = settings.ocr_max_pages_per_document, "OCR_MAX_PAGES_PER_DOCUMENT"
    if call is not None and call.pages_left is not None and call.pages_left < allowed:
        allowed, setting = call.pages_left, call.setting
    chosen = pages[: max(allowed, 0)]
    if len(chosen) < len(pages):
        reading.notes.append(_unread_note(pages, len(chosen), setting, settings))
    try:
        texts = recognise_pages(
            pdf,
            chosen,
            (lambda done, total: progress("ocr", done, total)) if progress else None,
            call.cancelled if call is not None else None,
        )
    except OcrCancelled:
        raise DocumentError(f"Reading {path.name} by OCR was cancelled.") from None
    except OcrFailed as exc:  # the engine's process died (killed, out of memory): not the file's fault
        raise DocumentError(
            f"OCR of {path.name} failed: {exc}; try again, or set OCR_ENABLED=false."
        ) from None
    except OcrUnavailable as exc:
        if len(pages) == len(pdf):
            raise DocumentError(f"{path.name} has no text layer (scanned?). {exc}.") from None
        return {}
    if call is not None and call.pages_left is not None:
        call.pages_left -= len(texts)
    return texts


def _unread_note(pages: list[int], read: int, setting: str, settings: DocumentSettings) -> str:
    """One sentence: which scanned pages OCR left unread, the limit, and how to read more."""
    first, last, left = pages[read] + 1, pages[-1] + 1, len(pages) - read
    per_call = setting == "OCR_MAX_PAGES_PER_CALL"
    value = settings.ocr_max_pages_per_call if per_call else settings.ocr_max_pages_per_document
    unread = f"page {first:,} was" if left == 1 else f"{left:,} pages ({first:,}–{last:,}) were"
    more = (
        "the user can read more with `generalagent index --force FILE` (up to OCR_MAX_PAGES_PER_DOCUMENT)"
        if per_call
        else "raise it and index the file again with `generalagent index --force FILE`"
    )
    return (
        f"OCR read {read:,} of its {len(pages):,} pages without a text layer; {unread} not read "
        f"(limit {setting}={value}; {more})."
    )


def outline_headings(pdf: Any) -> dict[int, str]:
    """Page index -> the section titles the PDF's outline (bookmarks) gives that page.

    A page where sections start is named after them (at most MAX_PAGE_SECTIONS, joined by
    " / "); a page inside a section after the last one that started before it. A PDF
    without an outline, or with a damaged one, gives {}: pages are then cited by number only.
    """
    starts: dict[int, list[str]] = {}
    try:
        for number, bookmark in enumerate(pdf.get_toc(max_depth=8)):
            if number >= MAX_OUTLINE_ENTRIES:
                break
            destination = bookmark.get_dest()
            index = destination.get_index() if destination is not None else None
            title = " ".join((bookmark.get_title() or "").split())
            if index is not None and 0 <= index < len(pdf) and title:
                starts.setdefault(index, []).append(title[:MAX_HEADING_CHARS])
    except Exception:  # pdfium raises several kinds for a malformed outline; the text is still good
        return {}
    headings: dict[int, str] = {}
    current = ""
    for index in range(len(pdf)):
        if index in starts:
            titles = list(dict.fromkeys(starts[index]))
            headings[index] = " / ".join(titles[:MAX_PAGE_SECTIONS])
            current = titles[-1]
        elif current:
            headings[index] = current
    return headings


def join_pdf_lines(raw: str) -> str:
    """Rebuild paragraphs from a PDF page's lines.

    PDF text comes as one line per printed line. Lines of a paragraph are joined: with no
    space between two CJK characters (Chinese has no spaces), dropping a hyphen the
    typesetter inserted, keeping a real one with no space, and with one space otherwise.
    A blank line, or a short line that ends a sentence, ends the paragraph.
    """
    lines = [line.strip() for line in raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    longest = max((len(line) for line in lines), default=0)
    paragraphs: list[str] = []
    current = ""
    for line in lines:
        if not line:
            if current:
                paragraphs.append(current)
                current = ""
            continue
        if not current:
            current = line
        elif current.endswith(_SOFT_HYPHENS):
            current = current.rstrip("".join(_SOFT_HYPHENS)) + line
        elif current.endswith("-") and line[0].isalnum():
            current += line  # "multi-" + "agent": an identifier wrapped at its hyphen
        elif _CJK_CHAR.match(current[-1]) and _CJK_CHAR.match(line[0]):
            current += line
        else:
            current += " " + line
        if line[-1] in ".!?。！？:：" and len(line) < 0.7 * longest:
            paragraphs.append(current)
            current = ""
    if current:
        paragraphs.append(current)
    # A hyphenation mark pdfium left inside a line (the break fell elsewhere) goes too:
    # "auto\ufffegenerated" must be found as "autogenerated".
    return "\n\n".join(p.replace("\x00", "").translate(_NO_SOFT_HYPHENS) for p in paragraphs)


# -- DOCX ----------------------------------------------------------------------------------
# Limits of an Office archive, checked before it is opened: real documents stay far below
# them (a 300-page report with images inflates to tens of MB; text compresses about 5:1,
# XML at most about 100:1), while a crafted file inflates a few MB to gigabytes.
MAX_INFLATED_BYTES = 1024 * 1024 * 1024
MAX_ARCHIVE_MEMBERS = 50_000
MAX_COMPRESSION_RATIO = 200
RATIO_CHECKED_ABOVE = 1024 * 1024  # small members may compress very well without harm


def _read_docx(
    document_file: BinaryIO, path: Path, settings: DocumentSettings, limit: ReadLimit
) -> list[Block]:
    check_office_archive(document_file, path, ".docx")
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(document_file)
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile):
        raise DocumentError(f"{path.name} is not a valid .docx file (damaged?).") from None
    lines: list[str] = []
    read = 0  # characters so far, for the limit
    for element in document.element.body.iterchildren():
        if limit.reached(1, read):
            break
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = Paragraph(element, document)
            text = paragraph.text.strip()
            if text:
                level = _heading_level(paragraph.style.name if paragraph.style is not None else "")
                lines.append(f"{'#' * level} {text}" if level else text)
                read += len(lines[-1]) + 2
        elif tag == "tbl":
            lines.append(_table_text(Table(element, document)))
            read += len(lines[-1]) + 2
    return [Block(text="\n\n".join(line for line in lines if line))]


def _heading_level(style: str) -> int:
    """Markdown level of a Word paragraph style: Title -> 1, Heading 2 / 标题 2 -> 2, else 0."""
    if style == "Title":
        return 1
    match = re.match(r"^(?:Heading|标题)\s*(\d)$", style)
    return min(int(match.group(1)), 6) if match else 0


def _table_text(table: Any) -> str:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or text != cells[-1]:  # a merged cell repeats its text per column
                cells.append(text)
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


# -- XLSX ----------------------------------------------------------------------------------
def _read_xlsx(document: BinaryIO, path: Path, settings: DocumentSettings, limit: ReadLimit) -> list[Block]:
    check_office_archive(document, path, ".xlsx")
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(document, read_only=True, data_only=True)
        archive = zipfile.ZipFile(document)
    except (KeyError, ValueError, OSError, zipfile.BadZipFile):
        raise DocumentError(f"{path.name} is not a valid .xlsx file (damaged?).") from None
    blocks: list[Block] = []
    try:
        for number, sheet in enumerate(workbook.worksheets, start=1):
            if limit.reached(number, sum(len(b.text) for b in blocks)):
                break
            # A formula never calculated (a file written by a script) has no value: its
            # formula is shown instead, so the cell does not read as empty.
            formulas = uncached_formulas(archive, str(getattr(sheet, "_worksheet_path", "")).lstrip("/"))
            rows = (
                (row_number, _row_text(row, formulas, row_number - 1))
                for row_number, row in enumerate(sheet.iter_rows(values_only=True), start=1)
            )
            blocks.extend(
                Block(
                    text=text,
                    page=number,
                    heading=sheet.title,
                    whole=True,
                    place=f"sheet {sheet.title}, {_rows_label(first, last)}",
                )
                for text, first, last in group_rows([(n, r) for n, r in rows if r], settings)
            )
    finally:
        archive.close()
        workbook.close()
    return blocks


# A formula cell whose value was never computed: `<f>` with no `<v>` (or an empty one).
# Every part is bounded, so the scan is linear in the sheet's size.
_UNCACHED_FORMULA = re.compile(
    rb'<c r="([A-Z]{1,3})(\d{1,7})"[^>]{0,300}>\s*<f(?:\s[^>]{0,300})?(?:/>|>([^<]{0,4000})</f>)'
    rb"\s*(?:<v\s*/>|<v></v>)?\s*</c>"
)


def uncached_formulas(archive: zipfile.ZipFile, member: str) -> dict[tuple[int, int], str]:
    """{(row, column) (0-based): formula} of the formula cells of one worksheet that hold no
    cached value. openpyxl gives such a cell as empty; reading the sheet's XML once more
    for `<f>` elements costs far less than a second openpyxl pass over every cell."""
    try:
        data = archive.read(member)
    except (KeyError, OSError, zipfile.BadZipFile):
        return {}
    if b"<f" not in data:
        return {}
    found: dict[tuple[int, int], str] = {}
    for match in _UNCACHED_FORMULA.finditer(data):
        letters, number, formula = match.groups()
        text = html.unescape(formula.decode("utf-8", "replace")) if formula else "(a shared formula)"
        found[(int(number) - 1, column_index(letters.decode()))] = "=" + text if formula else text
    return found


def column_index(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - 64
    return index - 1


def xlsx_sheet_names(path: Path, open_file: OpenFile = open_plainly) -> list[str]:
    """The names of a workbook's sheets, in order (from its directory, no cell is read)."""
    import openpyxl

    with open_file(path) as handle:
        workbook = openpyxl.load_workbook(handle, read_only=True)
        try:
            return list(workbook.sheetnames)
        finally:
            workbook.close()


def sheets_preview_text(blocks: list[Block], names: list[str]) -> str:
    """A workbook's preview: the list of its sheets, then each sheet under its name with
    its header once (the blocks repeat it so each chunk reads alone; a preview need not)."""
    lines = [f"Sheets ({len(names)}): " + ", ".join(names)]
    sheet = None
    for block in blocks:
        rows = block.text.split("\n")
        if block.page != sheet:
            sheet = block.page
            lines.extend(["", f"## Sheet {block.page}: {block.heading}", *rows])
        else:
            lines.extend(rows[1:])
    return "\n".join(lines)


def _rows_label(first: int, last: int) -> str:
    return f"row {first}" if first == last else f"rows {first}–{last}"


def _row_text(values: Iterable[Any], formulas: dict[tuple[int, int], str] | None = None, row: int = 0) -> str:
    cells = [
        (formulas.get((row, column), "") if formulas else "") if v is None else _cell_text(v)
        for column, v in enumerate(values)
    ]
    while cells and not cells[-1]:
        cells.pop()
    return " | ".join(cells) if any(cells) else ""


def _cell_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return " ".join(str(value).split())


def group_rows(rows: list[tuple[int, str]], settings: DocumentSettings) -> Iterator[tuple[str, int, int]]:
    """The header row, then groups of data rows each repeated under it, as (text, first row
    number, last row number) — the numbers a citation gives.

    A group has at most `xlsx_rows_per_chunk` rows and stays within `chunk_max_size` with
    its header, so every chunk of a sheet can be read on its own; a row too long for any
    chunk goes alone (the chunker cuts it further).
    """
    if not rows:
        return
    (header_row, header), data = rows[0], rows[1:]
    if not data:
        yield header, header_row, header_row
        return
    group: list[tuple[int, str]] = []
    size = len(header)
    for row in data:
        if group and (
            len(group) >= settings.xlsx_rows_per_chunk or size + 1 + len(row[1]) > settings.chunk_max_size
        ):
            yield "\n".join([header, *(text for _, text in group)]), group[0][0], group[-1][0]
            group, size = [], len(header)
        group.append(row)
        size += 1 + len(row[1])
    yield "\n".join([header, *(text for _, text in group)]), group[0][0], group[-1][0]


# -- PPTX ----------------------------------------------------------------------------------
def _read_pptx(document: BinaryIO, path: Path, settings: DocumentSettings, limit: ReadLimit) -> list[Block]:
    check_office_archive(document, path, ".pptx")
    import pptx
    from pptx.exc import PackageNotFoundError

    try:
        presentation = pptx.Presentation(document)
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile):
        raise DocumentError(f"{path.name} is not a valid .pptx file (damaged?).") from None
    blocks: list[Block] = []
    for number, slide in enumerate(presentation.slides, start=1):
        if limit.reached(number, sum(len(b.text) for b in blocks)):
            break
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        parts = [f"# {title}"] if title else []
        for shape in slide.shapes:
            if shape is title_shape:
                continue
            parts.extend(_shape_texts(shape))
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                parts.append("Notes: " + notes.text.strip())
        blocks.append(
            Block(
                text="\n\n".join(p for p in parts if p.strip()),
                page=number,
                heading=title,
                place=f"slide {number}",
            )
        )
    return blocks


def _shape_texts(shape: Any) -> Iterator[str]:
    if getattr(shape, "shape_type", None) is not None and hasattr(shape, "shapes"):
        for inner in shape.shapes:  # a group of shapes
            yield from _shape_texts(inner)
        return
    if getattr(shape, "has_table", False) and shape.has_table:
        yield _table_text(shape.table)
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        yield shape.text_frame.text.strip()


# -- text, Markdown, code ------------------------------------------------------------------
def _read_text(document: BinaryIO, path: Path, limit: ReadLimit, reading: Reading) -> Iterator[Block]:
    markdown = file_type_of(path) == "markdown"
    reading.total = os.fstat(document.fileno()).st_size
    if limit.chars is None:
        for text, continues in _text_pieces(document, path.name, reading):
            yield Block(text=text, markdown=markdown, continues=continues)
        return
    # A preview reads the start only: at most 4 bytes a character in any encoding we read.
    data = document.read(limit.chars * 4 + 4)
    truncated = document.read(1) != b""
    text = decode_text(data, path.name, truncated=truncated)
    if truncated or len(text) > limit.chars:
        limit.stopped = True
    yield Block(text=text.replace("\r\n", "\n"), markdown=markdown)


def _text_pieces(handle: BinaryIO, name: str, reading: Reading) -> Iterator[tuple[str, bool]]:
    """The text of an open file, TEXT_PIECE_BYTES at a time, each piece but the last ending
    at a paragraph break (or a line break, or anywhere in a line longer than half a piece),
    with whether it continues the piece before. Joined by BLOCK_SEPARATOR the pieces give
    the file's text back (line ends as "\n"), but for an extra line break at a cut."""
    data = handle.read(TEXT_PIECE_BYTES)
    ahead = handle.read(TEXT_PIECE_BYTES)
    encoding = _encoding_or_error(data, name, truncated=bool(ahead))
    decoder = codecs.getincrementaldecoder(encoding)()
    plain = True  # all text so far is ASCII, which reads the same in every encoding we know
    carry = ""
    continues = False
    while data:
        final = not ahead
        try:
            text = decoder.decode(data, final)
        except UnicodeDecodeError:
            if not (plain and encoding == "utf-8"):
                raise _damaged(name, encoding) from None
            # A long ASCII start chose UTF-8; the first other character shows the real encoding.
            data = decoder.getstate()[0] + data
            encoding = _encoding_or_error(data + ahead, name, truncated=not final)
            decoder = codecs.getincrementaldecoder(encoding)()
            try:
                text = decoder.decode(data, final)
            except UnicodeDecodeError:
                raise _damaged(name, encoding) from None
        plain = plain and text.isascii()
        reading.done += len(data)
        buffer = carry + text
        held = "\r" if not final and buffer.endswith("\r") else ""  # half of a "\r\n"
        buffer = buffer[: len(buffer) - len(held)].replace("\r\n", "\n")
        if final:
            piece, carry = buffer, ""
        else:
            cut, gap = _piece_end(buffer)
            piece, carry = buffer[:cut], buffer[cut + gap :] + held
        if piece.strip():
            yield piece, continues
            continues = True
        data, ahead = ahead, (handle.read(TEXT_PIECE_BYTES) if ahead else b"")


def _piece_end(text: str) -> tuple[int, int]:
    """Where a piece of `text` ends (in its second half) and how many break characters follow."""
    half = len(text) // 2
    for separator in ("\n\n", "\n"):
        cut = text.rfind(separator, half)
        if cut >= 0:
            return cut, len(separator)
    return len(text), 0


def decode_text(data: bytes, name: str, truncated: bool = False) -> str:
    """The text of a file's bytes, in the encoding they are in (`text_encoding`), or
    DocumentError for a binary file or one that is no text encoding we know.

    `truncated`: the bytes are the start of a longer file, so a character cut at the end
    is not a wrong encoding."""
    encoding = _encoding_or_error(data, name, truncated)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(data) - 4:
            return data[: exc.start].decode(encoding)
        raise _damaged(name, encoding) from None


def _damaged(name: str, encoding: str) -> DocumentError:
    return DocumentError(f"{name} is not valid {encoding} text (damaged?); save it as UTF-8 and try again.")


def _encoding_or_error(data: bytes, name: str, truncated: bool) -> str:
    encoding = text_encoding(data, truncated)
    if encoding is None and b"\x00" in data[:TEXT_SAMPLE_BYTES]:
        raise DocumentError(
            f"{name} is a binary file, not text; supported are PDF, DOCX, XLSX, PPTX, "
            "Markdown, text and source code."
        )
    if encoding is None:
        raise DocumentError(
            f"{name} is not text in an encoding generalAgent knows (UTF-8, UTF-16, GB18030, Big5, "
            "Shift-JIS, EUC, Windows-1252); save it as UTF-8 and try again."
        )
    return encoding


def text_encoding(data: bytes, truncated: bool = False) -> str | None:
    """The encoding of a text file's bytes; None when they are not text.

    A byte-order mark decides (UTF-8, UTF-16, UTF-32); UTF-16 without one is recognised by
    its zero bytes; then UTF-8. Anything else is told apart by charset-normalizer among the
    encodings our users' files are in (GB18030 first, then Big5, Shift-JIS, EUC-JP,
    EUC-KR and Windows-1252), GB18030 winning a tie: it decodes nearly any bytes, so
    trying it blindly turned Big5 and Shift-JIS files into garbage."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    sample = data[:TEXT_SAMPLE_BYTES]
    if b"\x00" in sample:
        return _utf16_without_bom(sample)
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(data) - 4:  # a character cut by the read, not another encoding
            return "utf-8"
    import charset_normalizer

    matches = list(charset_normalizer.from_bytes(sample, cp_isolation=list(LEGACY_ENCODINGS)))
    if not matches:
        return None
    best = min(
        matches,
        key=lambda m: (round(m.percent_chaos), -m.percent_coherence, LEGACY_ENCODINGS.index(m.encoding)),
    )
    return best.encoding


def _utf16_without_bom(sample: bytes) -> str | None:
    """UTF-16 text without a byte-order mark has a zero in most odd (LE) or even (BE) bytes,
    and reads as printable text; binary data with zeros does not."""
    even, odd = sample[0::2], sample[1::2]
    for zeros, encoding in ((odd, "utf-16-le"), (even, "utf-16-be")):
        if not zeros or zeros.count(0) / len(zeros) <= 0.3:
            continue
        try:
            text = sample[: len(sample) // 2 * 2].decode(encoding)
        except UnicodeDecodeError:
            continue
        readable = sum(ch.isprintable() or ch in "\t\n\r" for ch in text)
        if text and readable / len(text) >= 0.95:
            return encoding
    return None
