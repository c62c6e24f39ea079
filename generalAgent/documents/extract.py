"""Text out of documents: the one entry point that checks a file and picks its reader.

Each reader (pdf.py, office.py for DOCX and PPTX, sheets.py for XLSX, text.py for
Markdown, plain text and code) returns `Block`s that chunks never cross (a PDF page, a
slide, a group of spreadsheet rows under their header), keeping page/slide/sheet numbers.
Everything a user can hand us that we cannot read (encrypted, corrupt, empty, scanned, too
big, an old binary format) raises `DocumentError` (reading.py) with one sentence that says
what is wrong and what to do.

The document libraries are imported inside the readers: this module is reachable from
start-up, and the chat prompt must not wait for pypdfium2 or openpyxl.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from generalAgent.config.settings import DocumentSettings
from generalAgent.display import N_, one_line, os_error_reason
from generalAgent.documents.office import read_docx, read_pptx
from generalAgent.documents.pdf import pdf_preview_texts, read_pdf
from generalAgent.documents.reading import (
    OLD_OFFICE,
    DocumentError,
    DocumentStream,
    ExtractedDocument,
    ExtractProgress,
    OpenFile,
    Reading,
    ReadLimit,
    file_type_of,
    open_plainly,
)
from generalAgent.documents.sheets import read_xlsx, sheets_preview_text, xlsx_sheet_names
from generalAgent.documents.text import read_text
from generalAgent.search.chunking import BLOCK_SEPARATOR, Block


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
    reading: Reading | None = None,
) -> DocumentStream:
    """The document at `path`, checked, with its non-blank blocks to be read one by one.

    A text file is read TEXT_PIECE_BYTES at a time (blocks that continue one another); the
    other formats are read whole, within their own limits. `DocumentError` says what cannot
    be read, here or while iterating. The file is opened once, with `open_file`, and every
    reader reads that open file (closed when the blocks are exhausted). Pages of a PDF
    without a text layer are read by OCR when it is installed and on (OCR_ENABLED);
    `progress` hears of each page read that way. `reading`: the Reading to fill (a PDF's
    two passes hand their `first_pass` through it), a new one by default.
    """
    limit = limit or ReadLimit()
    _check_file(path, settings)
    kind = file_type_of(path)
    reading = reading or Reading()
    document: BinaryIO
    if path.suffix.lower() in OLD_OFFICE:
        from generalAgent.documents.convert import convert_legacy_office

        document = io.BytesIO(convert_legacy_office(path, open_file))
    else:
        try:
            document = open_file(path)
        except OSError as exc:
            raise DocumentError(
                N_("{name} cannot be read: {reason}."), name=path.name, reason=os_error_reason(exc)
            ) from None
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
                blocks: Iterable[Block] = read_text(document, path, limit, reading)
            elif kind == "pdf":
                blocks = read_pdf(document, path, settings, limit, progress, reading)
            else:
                reader = {"docx": read_docx, "xlsx": read_xlsx, "pptx": read_pptx}[kind]
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
        raise DocumentError(
            N_("{name} is too large to read in memory; split it into parts."), name=name
        ) from None
    except Exception as exc:  # a library's own error on a malformed file: say so, no traceback
        details = one_line(exc, 160)
        if not details:
            raise DocumentError(
                N_("{name} could not be read ({error}: no details); it may be damaged."),
                name=name,
                error=type(exc).__name__,
            ) from None
        raise DocumentError(
            N_("{name} could not be read ({error}: {details}); it may be damaged."),
            name=name,
            error=type(exc).__name__,
            details=details,
        ) from None
    if not found:
        if kind == "pdf" and reading.notes:
            raise DocumentError(
                N_("{name} has no text layer (scanned?); {notes}"), name=name, notes=reading.notes[0]
            )  # a PDF's one note: the pages OCR left unread
        if kind == "pdf":
            raise DocumentError(
                N_("{name} has no text layer (scanned?) and no text was recognised in it."), name=name
            )
        raise DocumentError(N_("{name} contains no text to search."), name=name)


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
    elif document.file_type == "pdf":
        text = BLOCK_SEPARATOR.join(pdf_preview_texts(blocks))
    else:
        text = BLOCK_SEPARATOR.join(b.text for b in blocks)
    # A PDF's table is shown once where its blocks repeat its header: count what is shown.
    read = len(text) if document.file_type == "pdf" else len(document.text)
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
        raise DocumentError(N_("{name} does not exist; check the path."), name=name)
    if path.is_dir():
        raise DocumentError(N_("{name} is a folder; give a file inside it."), name=name)
    size = path.stat().st_size
    if size == 0:
        raise DocumentError(N_("{name} is empty (0 bytes)."), name=name)
    limit = settings.index_max_file_mb * 1024 * 1024
    if size > limit:
        raise DocumentError(
            N_("{name} is {size:,.0f} MB, over the {limit} MB limit; split it or raise INDEX_MAX_FILE_MB."),
            name=name,
            size=size / 1_048_576,
            limit=settings.index_max_file_mb,
        )
