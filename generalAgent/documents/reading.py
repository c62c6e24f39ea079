"""What every reader of a document shares: the error, the blocks read, how far reading got.

The readers of each format (pdf.py, office.py, sheets.py, text.py) and the dispatcher that
picks one (extract.py) all use these types; they live apart from both so that a reader
never imports the dispatcher, which imports every reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from generalAgent.display import N_, Message, Plural, english_plural

if TYPE_CHECKING:
    # Only named in annotations: the chunker (its patterns compiled on import) loads when a
    # document is chunked, not whenever a tool module names DocumentError (`-p` start-up).
    from generalAgent.documents.pdf import PdfFirstPass
    from generalAgent.search.chunking import Block

# (stage, done, total): lets the CLI draw a progress bar ("ocr": pages read so far).
ExtractProgress = Callable[[str, int, int], None]
# Opens a document's file for reading. The read tools pass one that verifies the file
# opened is the workspace file their path check allowed (`Workspace.open_for_reading`):
# a symlink swapped in after the check must not make a document outside readable.
OpenFile = Callable[[Path], BinaryIO]


def open_plainly(path: Path) -> BinaryIO:
    """The file at `path`, opened for reading as it is (for files the user named)."""
    return path.open("rb")


PDF_TYPES = {".pdf": "pdf"}
# Every spreadsheet format python-calamine reads is an "xlsx" (documents/workbook.py); WPS's
# .et is an .xls inside.
OFFICE_TYPES = {
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".xlsb": "xlsx",
    ".xls": "xlsx",
    ".et": "xlsx",
    ".ods": "xlsx",
    ".pptx": "pptx",
}
MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdx"}
# Old and WPS Office formats, read as their modern form once LibreOffice has converted them
# (documents/convert.py).
OLD_OFFICE = {
    ".doc": ".docx",
    ".ppt": ".pptx",
    ".wps": ".docx",
    ".dps": ".pptx",
}
# What a folder walk picks up (a file named explicitly is tried whatever its suffix).
_TEXT_SUFFIXES = """
.txt .rst .org .tex .csv .tsv .json .jsonl .yaml .yml .toml .ini .cfg .conf .log .xml .html .htm
.css .py .pyi .js .jsx .ts .tsx .java .kt .go .rs .c .h .cc .cpp .hpp .cs .rb .php .swift .scala
.sh .bash .zsh .ps1 .sql .r .lua .pl .m .vue .svelte
"""
SEARCHABLE_SUFFIXES = frozenset([*PDF_TYPES, *OFFICE_TYPES, *MARKDOWN_SUFFIXES, *_TEXT_SUFFIXES.split()])


class DocumentError(Exception):
    """A document we cannot read; the message names the file, the problem and the fix.

    Raised with an English template marked for the terminal's catalog (`N_`, or `N_plural`
    for a message with a `count` field) and its named fields. `str(exc)` is the English
    sentence: what the model reads in a tool's answer, and what logs and JSON output keep.
    `shown(_, ngettext)` is the same sentence in the terminal's language, with the same fields.
    """

    def __init__(self, template: str | tuple[str, str], /, **fields: object) -> None:
        self.template = template
        self.fields = fields
        super().__init__(self.shown())

    def __reduce__(self) -> tuple[Callable[..., DocumentError], tuple[object, ...]]:
        # Copied (dataclasses.asdict) and pickled with its template and fields, not as the
        # English sentence, which is no template (a file name may hold a brace).
        return _rebuilt, (self.template, self.fields)

    @property
    def said(self) -> Message:
        """The sentence as data, for a tool's answer (tools/errors.py)."""
        fields = {n: v if isinstance(v, int | Message) else str(v) for n, v in self.fields.items()}
        return Message(self.template, fields)

    def shown(self, translate: Callable[[str], str] = str, ngettext: Plural = english_plural) -> str:
        """The sentence in the language of `translate` and `ngettext` (the terminal passes
        its `_` and `ngettext`; without them, English)."""
        if isinstance(self.template, tuple):
            singular, plural = self.template
            count = self.fields["count"]
            message = ngettext(singular, plural, count if isinstance(count, int) else 0)
        else:
            message = translate(self.template)
        values = {
            n: v.shown(translate, ngettext) if isinstance(v, Message) else v for n, v in self.fields.items()
        }
        return message.format(**values)


def _rebuilt(template: str | tuple[str, str], fields: dict[str, object]) -> DocumentError:
    return DocumentError(template, **fields)


@dataclass(frozen=True)
class ExtractedDocument:
    name: str
    file_type: str  # pdf | docx | xlsx | pptx | markdown | text
    blocks: list[Block]

    @property
    def text(self) -> str:
        from generalAgent.search.chunking import BLOCK_SEPARATOR

        return BLOCK_SEPARATOR.join(block.text for block in self.blocks)


@dataclass
class Reading:
    """How far a document's reading has got: bytes of a text file, blocks of the others;
    and notes on what was left unread (pages OCR did not reach), for the user."""

    done: int = 0
    total: int = 0
    # English for the model (.english()), the UI's language for a person (.shown(_, ngettext))
    notes: list[Message] = field(default_factory=list)
    # Scanned pages within OCR_MAX_PAGES_PER_DOCUMENT that the call's own OCR limit left
    # unread: the index reads them in the background (ocr_background.py).
    ocr_left: int = 0
    ocr_read: int = 0  # scanned pages whose OCR text is in the blocks
    # Pages of a PDF read without its tables (documents/index.py reads them later) on
    # which a table may stand: its layout looked like one, or it was read by OCR. None of
    # them: the reading with tables would give the same blocks, nothing is left to read.
    table_pages: int = 0
    # Tables read after the text (documents/index.py): the first pass, asked with
    # `keep_first_pass`, leaves in `first_pass` what its second pass needs again (pdf.py
    # `PdfFirstPass`); handed to the second pass's reading, it is read instead of the file.
    keep_first_pass: bool = False
    first_pass: PdfFirstPass | None = None

    @property
    def share(self) -> float:
        return min(self.done / self.total, 1.0) if self.total else 0.0


class ReadingCancelled(DocumentError):
    """The call that started a long reading (indexing a 40 MB file) was cancelled: raised
    between pieces, chunk batches or pages (`ocr.stop_if_cancelled`), so Ctrl-C ends the
    turn within a second instead of after the whole file."""

    def __init__(self, name: str) -> None:
        super().__init__(N_("reading {name} was stopped: the user cancelled (Ctrl-C)."), name=name)


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
