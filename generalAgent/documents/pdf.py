"""PDF pages: pypdfium2's text layer, paragraphs rebuilt, sections from the outline, and
OCR (documents/ocr.py) for the pages that have no text layer but hold text as images.

Running heads, footers and page numbers are left out, a page set in two or three columns
is read column by column (pdf_layout.py, pdf_columns.py), and the tables are read as grids
(pdf_tables.py): a table's text leaves its page's block and comes back as
blocks of whole rows under the table's caption and header, cited "page 12, table 2, rows
5–9", so that no chunk holds a row without its column names.

pypdfium2 is imported inside the functions: this module is reachable from start-up.
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from generalAgent.config.install import install_hint
from generalAgent.config.settings import DocumentSettings
from generalAgent.display import N_, Message, N_plural
from generalAgent.documents.ocr import (
    MIN_IMAGE_COVERAGE,
    OcrCancelled,
    OcrFailed,
    OcrUnavailable,
    current_call,
    image_coverage,
    needs_ocr,
    ocr_installed,
    recognise_pages,
)
from generalAgent.documents.pdf_captions import set_captions_apart, take_caption_row
from generalAgent.documents.pdf_layout import (
    has_table_stack,
    is_running,
    may_hold_table,
    ordered_text,
    page_boxes,
    page_layout,
    page_rules,
    running_keys,
    strip_running,
)
from generalAgent.documents.pdf_tables import (
    Line,
    PageTable,
    Rule,
    Run,
    Table,
    find_tables,
    group_lines,
    join_cell_lines,
    merge_continued,
)
from generalAgent.documents.pdfium_lock import PDFIUM
from generalAgent.documents.reading import DocumentError, ExtractProgress, Reading, ReadLimit
from generalAgent.search.chunking import Block

_CJK_CHAR = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
# A PDF outline names the sections of the pages; entries past this many are not read (a
# hostile file may hold millions), and a page lists at most MAX_PAGE_SECTIONS of them.
MAX_OUTLINE_ENTRIES = 20_000
MAX_PAGE_SECTIONS = 3
MAX_HEADING_CHARS = 120
# pdfium marks a hyphen it inserted at a line break with one of these.
_SOFT_HYPHENS = ("\x02", "\u00ad", "\ufffe")
# A page with less text than this whose pictures cover FIGURE_COVERAGE of it is a figure
# (a chart, a diagram with its caption): a search hit there says to view the page.
FIGURE_TEXT_CHARS = 600
FIGURE_COVERAGE = 0.3


def read_pdf(
    document: BinaryIO,
    path: Path,
    settings: DocumentSettings,
    limit: ReadLimit,
    progress: ExtractProgress | None = None,
    reading: Reading | None = None,
) -> list[Block]:
    import pypdfium2 as pdfium

    try:
        # A file read into memory is handed over as bytes: pdfium then reads no Python file.
        with PDFIUM:
            pdf = pdfium.PdfDocument(document.getvalue() if isinstance(document, io.BytesIO) else document)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise DocumentError(
                N_("{name} is password-protected; save a copy without the password and try again."),
                name=path.name,
            ) from None
        raise DocumentError(
            N_("{name} is not a readable PDF (damaged, or not a PDF)."), name=path.name
        ) from None
    reading = reading or Reading()
    first = reading.first_pass if settings.pdf_tables else None
    try:
        if first is not None:
            texts, figures, recognised, ocr_runs, headings = (
                first.texts,
                first.figures,
                first.recognised,
                first.ocr_runs,
                first.headings,
            )
            geometry, orders = _candidates_geometry(pdf, first.candidates, texts)
            reading.notes.extend(first.notes)
            reading.ocr_read = first.ocr_read
            reading.table_pages = len(first.candidates) + len(recognised)
        else:
            texts, figures, recognised, ocr_runs, headings, geometry, orders = _read_pages(
                pdf, path, settings, limit, progress, reading
            )
    except pdfium.PdfiumError:
        raise DocumentError(N_("{name} is damaged: a page could not be read."), name=path.name) from None
    finally:
        with PDFIUM:
            pdf.close()
    keys = running_keys(texts)
    found = _page_tables(geometry, keys)
    if settings.pdf_tables and ocr_runs:
        found = sorted(found + _scanned_tables(ocr_runs, recognised), key=lambda table: table.page)
    tables = merge_continued(found)
    blocks: list[Block] = []
    for number, raw in enumerate(texts):
        heading = headings.get(number, "")
        here = [t for t in found if t.page == number]
        if number in recognised:
            pieces = _TABLE_MARK.split(_without(recognised[number], here))
        else:
            pieces = _TABLE_MARK.split(strip_running(_without(raw, here, orders.get(number)), keys))
        # The page's prose is one block, as it reads with its tables taken out; the tables'
        # blocks follow it, their places in it kept for a reader's view (`inserts`).
        prose, inserts = _page_prose(pieces[0::2])
        blocks.append(
            Block(
                text=prose,
                page=number + 1,
                heading=heading,
                place=f"page {number + 1}",
                ocr=number in recognised,
                figure=number in figures and number not in recognised,
                inserts=inserts,
            )
        )
        marked = [here[int(piece)].merged_into for piece in pieces[1::2]]
        for table in [*marked, *dict.fromkeys(t.merged_into for t in here if t.merged_into not in marked)]:
            rows = table_blocks(
                tables[table], table + 1, number + 1, heading, settings.chunk_max_size, settings.chunk_overlap
            )
            blocks.extend(_by_ocr(rows) if number in recognised else rows)
    return blocks


@dataclass
class PdfFirstPass:
    """What a PDF's first pass (its text read, its tables pending) leaves for its second,
    which reads the same bytes with their tables: every page's text, its sections, figure
    pages, OCR's text and pieces of text of its scanned pages, and the pages that may hold a
    table (`candidates`). The second pass opens only those pages again, and gives the blocks
    the one-pass reading gives, byte for byte: a page that is no candidate holds no table,
    so its block is the first pass's.

    A candidate is a page the table finder would read: set in columns (its regions are
    read), or whose text rectangles make a stack of lines that may be a table
    (`pdf_layout.has_table_stack`, the finder's own first step). A superset of the pages
    where a table is found, by construction; bench/pdf_two_pass.py checks it on every PDF.
    Memory: the page texts (a few KB a page) and, for scans, OCR's pieces of text."""

    texts: list[str]
    headings: dict[int, str]
    figures: set[int]
    candidates: list[int]
    recognised: dict[int, str]
    ocr_runs: dict[int, list[Run]]
    notes: list[Message]
    ocr_read: int

    def size(self) -> int:
        """About how many bytes this holds (for the index's bound on what it keeps)."""
        texts = sum(sys.getsizeof(text) for text in (*self.texts, *self.recognised.values()))
        runs = sum(len(runs) for runs in self.ocr_runs.values()) * _RUN_BYTES
        return texts + runs + 64 * (len(self.texts) + len(self.headings) + len(self.candidates))


# A Run kept for a scanned page: its tuple, four floats, two ints and its text.
_RUN_BYTES = 300


def _read_pages(
    pdf: Any,
    path: Path,
    settings: DocumentSettings,
    limit: ReadLimit,
    progress: ExtractProgress | None,
    reading: Reading,
) -> tuple[
    list[str],
    set[int],
    dict[int, str],
    dict[int, list[Run]],
    dict[int, str],
    dict[int, tuple[list[list[Line]], list[Rule]]],
    dict[int, list[tuple[int, int, str]]],
]:
    """Every page of `pdf` read: its text, figure pages, OCR of the scanned pages, sections,
    and the geometry of the pages that may hold a table or are set in columns. Asked to
    (`reading.keep_first_pass`, tables off), it leaves a `PdfFirstPass` in `reading`."""
    keep = reading.keep_first_pass and not settings.pdf_tables
    with PDFIUM:
        headings = outline_headings(pdf)
        pages = len(pdf)
    texts: list[str] = []
    scanned: list[int] = []
    figures: set[int] = set()
    geometry: dict[int, tuple[list[list[Line]], list[Rule]]] = {}  # pages that may hold a table
    orders: dict[int, list[tuple[int, int, str]]] = {}  # pages read in another order (columns)
    candidates: list[int] = []  # pages the table finder would read (`PdfFirstPass`)
    read = 0  # characters so far, for the limit
    table_pages = 0  # pages whose layout may hold a table
    for number in range(pages):
        if limit.reached(number + 1, read):
            break
        with PDFIUM:  # page by page: a background OCR reading renders between two
            page = pdf[number]
            textpage = page.get_textpage()
            try:
                raw = textpage.get_text_range()
                # Pictures are measured on short pages only: a page of text needs neither
                # OCR nor a figure mark, and walking its objects costs more than its text.
                thin = needs_ocr(raw)
                coverage = image_coverage(page) if thin or len(raw) < FIGURE_TEXT_CHARS else 0.0
                if not thin and may_hold_table(textpage, raw):
                    boxes = page_boxes(textpage)
                    read_geometry(geometry, orders, number, page, textpage, raw, settings.pdf_tables, boxes)
                    table_pages += 1
                    if keep and (number in orders or has_table_stack(boxes)):
                        candidates.append(number)
            finally:
                textpage.close()
                page.close()
        if thin and settings.ocr_enabled and coverage >= MIN_IMAGE_COVERAGE:
            scanned.append(number)
        elif coverage >= FIGURE_COVERAGE:
            figures.add(number)
        texts.append(raw)
        read += len(raw)
    ocr_runs: dict[int, list[Run]] = {}  # a scanned page's pieces of text, for its tables
    recognised = _recognise(pdf, path, scanned, settings, progress, reading, ocr_runs)
    reading.table_pages = table_pages + len(recognised)
    if keep:
        reading.table_pages = len(candidates) + len(recognised)
        # A scan whose OCR the call's limit cut short is read on in the background, whose
        # steps read the tables: no second pass to hand this to.
        if not reading.ocr_left:
            reading.first_pass = PdfFirstPass(
                texts,
                headings,
                figures,
                candidates,
                recognised,
                ocr_runs,
                list(reading.notes),
                reading.ocr_read,
            )
    return texts, figures, recognised, ocr_runs, headings, geometry, orders


def _candidates_geometry(
    pdf: Any, candidates: list[int], texts: list[str]
) -> tuple[dict[int, tuple[list[list[Line]], list[Rule]]], dict[int, list[tuple[int, int, str]]]]:
    """The geometry (and reading order) of the `candidates` pages, read again with their
    tables: the second pass's only use of the file."""
    geometry: dict[int, tuple[list[list[Line]], list[Rule]]] = {}
    orders: dict[int, list[tuple[int, int, str]]] = {}
    for number in candidates:
        with PDFIUM:
            page = pdf[number]
            textpage = page.get_textpage()
            try:
                read_geometry(geometry, orders, number, page, textpage, texts[number])
            finally:
                textpage.close()
                page.close()
    return geometry, orders


def _page_prose(pieces: list[str]) -> tuple[str, tuple[int, ...]]:
    """A page's pieces of text between its tables as one text, paragraphs rebuilt, and
    where in it each table stood (the end of the text before it).

    One block, not a block per piece: chunks never cross a block, so a table cut its page's
    prose into pieces each chunked alone, and the sentence that announces a table ("The
    Pythagorean theorem is:") became a chunk of its own, whose few words outweighed whole
    passages in BM25 (short chunks of prose 10 -> 32 in lshort-zh, 19 -> 41 in the Chinese
    Debian Reference, with tables read). Chunked whole, the prose is cut as it is when
    tables are not read, less the tables' own text."""
    text = ""
    inserts: list[int] = []
    for n, piece in enumerate(pieces):
        if n:
            inserts.append(len(text))
        part = join_pdf_lines(set_captions_apart(piece))
        if part.strip():
            text = f"{text}\n\n{part}" if text else part
    return text, tuple(inserts)


def _by_ocr(blocks: list[Block]) -> list[Block]:
    """Blocks of a table OCR read, marked so (search results say the text may be misread)."""
    return [replace(block, ocr=True) for block in blocks]


def read_pdf_tables(
    document: BinaryIO,
    path: Path,
    settings: DocumentSettings | None = None,
    notes: list[Message] | None = None,
) -> list[Table]:
    """Every table of the PDF, merged across the pages it spans (for `query_table` and
    `generalagent tables`); [] for a PDF without any. With `settings`, the tables of its
    pages without a text layer are read by OCR as the indexer reads them (marked `ocr`,
    within OCR_MAX_PAGES_PER_DOCUMENT), and what OCR could not read is said in `notes`."""
    import pypdfium2 as pdfium

    try:
        with PDFIUM:
            pdf = pdfium.PdfDocument(document.getvalue() if isinstance(document, io.BytesIO) else document)
    except pdfium.PdfiumError:
        raise DocumentError(
            N_("{name} is not a readable PDF (damaged, or not a PDF)."), name=path.name
        ) from None
    texts: list[str] = []
    geometry: dict[int, tuple[list[list[Line]], list[Rule]]] = {}
    scanned: list[int] = []
    try:
        for number in range(len(pdf)):
            with PDFIUM:
                page = pdf[number]
                textpage = page.get_textpage()
                try:
                    raw = textpage.get_text_range()
                    if may_hold_table(textpage, raw):
                        read_geometry(geometry, {}, number, page, textpage, raw)
                    elif settings is not None and _is_scanned(page, raw):
                        scanned.append(number)
                finally:
                    textpage.close()
                    page.close()
            texts.append(raw)
        found = _page_tables(geometry, running_keys(texts))
        if scanned and settings is not None:
            found = sorted(found + _ocr_tables(pdf, path, scanned, settings, notes), key=lambda t: t.page)
    except pdfium.PdfiumError:
        raise DocumentError(N_("{name} is damaged: a page could not be read."), name=path.name) from None
    finally:
        with PDFIUM:
            pdf.close()
    tables = merge_continued(found)
    for table in found:
        if table.page in scanned:
            tables[table.merged_into].ocr = True
    return tables


def _is_scanned(page: Any, raw: str) -> bool:
    """A page that holds its text as a picture: no text layer to speak of, mostly image."""
    return needs_ocr(raw) and image_coverage(page) >= MIN_IMAGE_COVERAGE


def _ocr_tables(
    pdf: Any, path: Path, pages: list[int], settings: DocumentSettings, notes: list[Message] | None
) -> list[PageTable]:
    """The tables of the scanned `pages`, read by OCR (documents/ocr.py) and found in its
    pieces of text as the indexer finds them (`_scanned_tables`). Without OCR, or with it
    off, none, and a note saying so; pages past the OCR limits are said likewise."""
    said = notes if notes is not None else []
    if not settings.ocr_enabled:
        said.append(
            Message(
                N_plural(
                    "{name} has {count} page without a text layer; OCR is off (OCR_ENABLED=false), "
                    "so its tables are not read.",
                    "{name} has {count} pages without a text layer; OCR is off (OCR_ENABLED=false), "
                    "so their tables are not read.",
                ),
                {"name": path.name, "count": len(pages)},
            )
        )
        return []
    if not ocr_installed():
        said.append(
            Message(
                N_plural(
                    "{name} has {count} page without a text layer; OCR is not installed, so its "
                    "tables are not read: {install}",
                    "{name} has {count} pages without a text layer; OCR is not installed, so their "
                    "tables are not read: {install}",
                ),
                {"name": path.name, "count": len(pages), "install": install_hint("ocr")},
            )
        )
        return []
    runs: dict[int, list[Run]] = {}
    reading = Reading()
    recognised = _recognise(pdf, path, pages, settings, None, reading, runs)
    said.extend(reading.notes)
    return _scanned_tables(runs, recognised)


def read_geometry(
    geometry: dict[int, tuple[list[list[Line]], list[Rule]]],
    orders: dict[int, list[tuple[int, int, str]]],
    number: int,
    page: Any,
    textpage: Any,
    raw: str,
    tables: bool = True,
    boxes: list[tuple[float, float, float, float]] | None = None,
) -> None:
    """Page `number`'s lines (region by region) and rules into `geometry` when its layout
    may hold a table, and its reading order into `orders` when it is set in columns
    (pdf_layout.page_layout reads only what is needed; `boxes`, the page's text
    rectangles when the caller has them)."""
    layout = page_layout(textpage, raw, tables, boxes)
    if layout is None:
        return
    if layout.regions:
        geometry[number] = (layout.regions, page_rules(page))
    if layout.order is not None:
        orders[number] = layout.order


def _page_tables(geometry: dict[int, tuple[list[list[Line]], list[Rule]]], keys: set[str]) -> list[PageTable]:
    """The tables of each page read as geometry, its running heads and footers set apart
    first (a table under a running head still opens its page). A page in columns is read
    a column at a time: a table is in one column, or laid across them in a region of its
    own; only a table of the first region opens the page, only one of the last ends it."""
    found: list[PageTable] = []
    for number in sorted(geometry):
        regions, rules = geometry[number]
        regions = [list(lines) for lines in regions]
        _drop_running(regions, keys)
        for n, lines in enumerate(regions):
            for table in find_tables(lines, rules, number):
                take_caption_row(table)
                table.opens_page = table.opens_page and n == 0
                table.ends_page = table.ends_page and n == len(regions) - 1
                found.append(table)
    return found


def _drop_running(regions: list[list[Line]], keys: set[str]) -> None:
    """The page's running heads and footers (two at most at each end) taken out of its
    first and last regions. A running line stands apart from the body, in the margin: a
    table's header repeated on every page is as repeated, but sits right above its rows.
    A page's only line stays."""
    for _ in range(2):
        first = regions[0]
        alone = len(first) == 1 and len(regions) > 1
        if (
            first
            and is_running(first[0].text, keys)
            and (alone or len(first) > 1 and _apart(first[0], first[1]))
        ):
            first.pop(0)
            if not first:
                regions.pop(0)
        last = regions[-1]
        alone = len(last) == 1 and len(regions) > 1
        if (
            last
            and is_running(last[-1].text, keys)
            and (alone or len(last) > 1 and _apart(last[-2], last[-1]))
        ):
            last.pop()
            if not last:
                regions.pop()


def _apart(upper: Line, lower: Line) -> bool:
    return upper.bottom - lower.top > 1.5 * max(upper.height, lower.height)


# Where a table stood in its page's text: "\x01<n>\x01", n its index among the page's tables.
_TABLE_MARK = re.compile("\x01(\\d+)\x01")


def _without(raw: str, tables: list[PageTable], order: list[tuple[int, int, str]] | None = None) -> str:
    """The page's text in reading order (`order`, pdf_layout.reading_order; as it came when
    None) with the characters of its tables (and their captions) taken out, a mark
    standing where each table began (on a line of its own)."""
    spans = sorted(span for table in tables for span in table.spans)
    if not spans:
        return ordered_text(raw, order)
    marks = {min(table.spans)[0]: n for n, table in enumerate(tables) if table.spans}
    parts: list[str] = []
    for first, last, after in order or [(0, len(raw), "")]:
        position = first
        for start, end in spans:
            if end <= first or start >= last:
                continue
            start, end = max(start, first), min(end, last)
            if start > position:
                parts.append(raw[position:start].replace("\x01", ""))
            if start in marks and start >= position:
                parts.append(f"\n\x01{marks.pop(start)}\x01\n")
            position = max(position, end)
        if last > position:
            parts.append(raw[position:last].replace("\x01", ""))
        parts.append(after)
    return "".join(parts)


_TABLE_PLACE = re.compile(r"^page \d+, table (\d+), rows? (\d+)(?:–(\d+))?$")


def pdf_preview_texts(blocks: list[Block]) -> list[str]:
    """The blocks' texts as a reader reads the PDF: a table's blocks of rows (each under
    its caption and column names, for search) shown as one Markdown table, each row once
    (a block repeats its neighbours' rows next to it, `table_blocks`)."""
    texts: list[str] = []
    previous = ""
    place = ""
    shown = 0  # the number of the last row of the current table shown
    for block in _in_reading_order(blocks):
        match = _TABLE_PLACE.match(block.place)
        table = match.group(1) if match else ""
        first = int(match.group(2)) if match else 0
        last_row = int(match.group(3) or first) if match else 0
        if table != previous:
            shown = 0
        if table and block.place == place and texts:  # a piece of a row cut for search
            head, _, last = texts[-1].rpartition("\n")
            piece = block.text.split("\n")[3]
            texts[-1] = head + "\n" + markdown_row(_joined_pieces(_cells_of(last), _cells_of(piece)))
        elif table and table == previous and texts:
            rows = block.text.split("\n")[3:]  # the title, the names and the rule again
            rows = rows[max(0, shown - first + 1) :]
            if rows:
                texts[-1] += "\n" + "\n".join(rows)
        elif table:
            title, _, rest = block.text.partition("\n")
            texts.append(re.sub(r" \(table (\d+), rows? [^)]*\)$", r" (table \1)", title) + "\n" + rest)
        else:
            texts.append(block.text)
        previous, place = table, block.place
        shown = max(shown, last_row)
    return texts


def _in_reading_order(blocks: list[Block]) -> list[Block]:
    """The blocks with each page's tables put back where they stood in its text: a page's
    prose block cut at its `inserts`, the blocks of its i-th table after its i-th piece."""
    ordered: list[Block] = []
    n = 0
    while n < len(blocks):
        block = blocks[n]
        n += 1
        if not block.inserts:
            ordered.append(block)
            continue
        groups: list[list[Block]] = []  # the page's tables' blocks, a list per table
        current = ""
        while n < len(blocks) and blocks[n].page == block.page:
            match = _TABLE_PLACE.match(blocks[n].place)
            if match is None:
                break
            if match.group(1) != current:
                groups.append([])
                current = match.group(1)
            groups[-1].append(blocks[n])
            n += 1
        cuts = [0, *block.inserts, len(block.text)]
        for k in range(len(cuts) - 1):
            piece = block.text[cuts[k] : cuts[k + 1]].strip()
            if piece:
                ordered.append(replace(block, text=piece, inserts=()))
            if k < len(groups):
                ordered.extend(groups[k])
        ordered.extend(block for group in groups[len(cuts) - 1 :] for block in group)
    return ordered


def _cells_of(row: str) -> list[str]:
    """The cells of a Markdown row written by `markdown_row`."""
    inner = row.strip()[2:-2]
    return [cell.replace("\\|", "|") for cell in re.split(r"(?<!\\) \| ", inner)]


def _joined_pieces(first: list[str], second: list[str]) -> list[str]:
    """A row and its next piece (`row_pieces`) as one row: the key cell once, the others
    joined as a wrapped cell's lines are."""
    joined = [first[0] if first else ""]
    for a, b in zip(first[1:], second[1:], strict=False):
        joined.append(join_cell_lines([a, b]))
    return joined


def markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in cells) + " |"


def table_markdown(table: Table, rows: list[list[str]] | None = None) -> str:
    """The table (or some of its rows) as a Markdown table under its column names."""
    names = table.column_names()
    lines = [markdown_row(names), "| " + " | ".join("---" for _ in names) + " |"]
    width = len(names)
    lines.extend(
        markdown_row([*r, *[""] * (width - len(r))][:width]) for r in (table.rows if rows is None else rows)
    )
    return "\n".join(lines)


def table_blocks(
    table: Table, number: int, page: int, heading: str, max_size: int, overlap: int = 0
) -> list[Block]:
    """The rows of `table` that are on `page`, in blocks of whole rows each under the
    caption and the column names, as many rows as fit in a chunk of `max_size`. A row too
    long for a chunk on its own is cut into pieces (`row_pieces`), each a block under the
    caption and the column names with the row's key cell: the chunker would otherwise cut
    it anywhere, and the pieces after the first would have lost the names of their cells.

    Blocks overlap as prose chunks do (`overlap`, CHUNK_OVERLAP): a block opens with the
    last row of the block before when that row's line is no longer than `overlap`, so
    words of a question that sit in two neighbouring rows meet in one passage even where
    the first block is full. A block also carries the row before its first and the row
    after its last when they still fit (`with_neighbours`), without room set aside.
    Chosen on the retrieval sets' tuning halves (docs/benchmarks.md, round 6): every
    last row carried won two questions but re-cut the rows where e5 vectors had found a
    Chinese question's page (zh-en with vectors recall@5 0.76 -> 0.72); only the key cell
    carried, or one row of overlap without the neighbour before, lost that question and
    a gain; short rows only kept the gains and the question. Earlier rejected: a table-level block of the key column beside
    the rows (cell questions' row in the top five 1.0 -> 0.90: it outranked the rows)."""
    title = table.caption or f"Table {number}"
    names = table.column_names()
    width = len(names)
    head = markdown_row(names) + "\n| " + " | ".join("---" for _ in names) + " |"
    blocks: list[Block] = []

    def label(indexes: list[int]) -> str:
        first, last = indexes[0] + 1, indexes[-1] + 1
        return f"row {first}" if first == last else f"rows {first}–{last}"

    def line_of(cells: list[str]) -> str:
        return markdown_row([*cells, *[""] * (width - len(cells))][:width])

    def opening(indexes: list[int]) -> str:
        return f"{title} (table {number}, {label(indexes)})\n{head}"

    def add(indexes: list[int], lines: list[str]) -> None:
        blocks.append(
            Block(
                text="\n".join([opening(indexes), *lines]),
                page=page,
                heading=heading,
                whole=True,
                place=f"page {page}, table {number}, {label(indexes)}",
            )
        )

    def with_neighbours(indexes: list[int], lines: list[str], size: int) -> None:
        """Add the group, with the row before and the row after it when they fit."""
        for side in (indexes[0] - 1, indexes[-1] + 1):
            if 0 <= side < len(table.rows) and table.row_pages[side] == page:
                line = line_of(table.rows[side])
                wider = sorted([*indexes, side])
                if len(opening(wider)) + size + 1 + len(line) <= max_size:
                    lines = [line, *lines] if side < indexes[0] else [*lines, line]
                    indexes, size = wider, size + 1 + len(line)
        add(indexes, lines)

    # Each row's line is written once and the group's length summed as rows join it (a
    # table of a thousand rows was written out again for every row it gained).
    group: list[int] = []
    lines: list[str] = []
    size = 0  # the group's rows' characters, a newline before each
    for index, row_page in enumerate(table.row_pages):
        if row_page != page:
            continue
        line = line_of(table.rows[index])
        if group and len(opening([group[0], index])) + size + 1 + len(line) > max_size:
            with_neighbours(group, lines, size)
            last, carried = group[-1], lines[-1]
            group, lines, size = [], [], 0
            if (
                len(carried) <= overlap
                and len(opening([last, index])) + 2 + len(carried) + len(line) <= max_size
            ):
                group, lines, size = [last], [carried], 1 + len(carried)
        if len(opening([index])) + 1 + len(line) > max_size:
            room = max_size - len(opening([index])) - 1 - len(line_of([]))
            for piece in row_pieces(table.rows[index], room):
                add([index], [line_of(piece)])
            continue
        group.append(index)
        lines.append(line)
        size += 1 + len(line)
    if group:
        with_neighbours(group, lines, size)
    return blocks


def row_pieces(cells: list[str], room: int) -> list[list[str]]:
    """A row whose Markdown is longer than `room` as several rows that each fit: the key
    (first) cell in every one, the other cells' text in order, a cell too long for what is
    left cut at a space (anywhere between two Chinese characters)."""
    key, rest = (cells[0] if cells else ""), cells[1:]
    # What a piece's Markdown row costs besides its cells' text: "| ", " | " per cell, " |".
    budget = max(20, room - len(markdown_row([key, *[""] * len(rest)])))
    pieces: list[list[str]] = []
    current = [""] * len(rest)
    left = budget
    for column, value in enumerate(rest):
        text = " ".join(value.split())
        while text:
            if len(text) <= left:
                current[column] = text
                left -= len(text)
                break
            cut = text.rfind(" ", 0, left + 1)
            if cut <= 0 and left < budget:  # start the cell in the next piece instead
                pieces.append(current)
                current, left = [""] * len(rest), budget
                continue
            if cut <= 0:
                cut = left
            current[column] = text[:cut].rstrip()
            pieces.append(current)
            current, left = [""] * len(rest), budget
            text = text[cut:].lstrip()
    if any(current) or not pieces:
        pieces.append(current)
    return [[key, *piece] for piece in pieces]


def _scanned_tables(ocr_runs: dict[int, list[Run]], recognised: dict[int, str]) -> list[PageTable]:
    """The tables of the scanned pages, found in OCR's pieces of text as in a text layer's
    runs (no rules: a scan's lines are pixels), their places in the page's OCR text."""
    found: list[PageTable] = []
    for number in sorted(ocr_runs):
        if number in recognised:
            for table in find_tables(group_lines(ocr_runs[number]), [], number):
                take_caption_row(table)
                found.append(table)
    return found


def _recognise(
    pdf: Any,
    path: Path,
    pages: list[int],
    settings: DocumentSettings,
    progress: ExtractProgress | None,
    reading: Reading,
    runs: dict[int, list[Run]] | None = None,
) -> dict[int, str]:
    """OCR text of the scanned `pages`, within the limits of the document and of the
    running call (documents/ocr.py); {} when there are none or OCR is off. What the
    limits leave unread is said in `reading.notes`, naming the setting to raise. The
    pages read now (not those an earlier call read) leave their pieces of text in `runs`."""
    if not pages or not settings.ocr_enabled:
        return {}
    if not ocr_installed():
        if len(pages) == len(pdf):
            raise DocumentError(
                N_(
                    "{name} has no text layer (scanned?). OCR is not installed: "
                    "{install} (offline Chinese and English models)."
                ),
                name=path.name,
                install=install_hint("ocr"),
            )
        return {}  # a few picture pages in a text PDF: index the text, as without OCR
    call = current_call()
    within = pages[: max(settings.ocr_max_pages_per_document, 0)]
    known = call.known if call is not None and call.known is not None else {}
    fresh = [page for page in within if page not in known]
    allowed, setting = len(fresh), "OCR_MAX_PAGES_PER_DOCUMENT"
    if call is not None and call.pages_left is not None and call.pages_left < allowed:
        allowed, setting = max(call.pages_left, 0), call.setting
    chosen = fresh[:allowed]
    read = len(within) - len(fresh) + len(chosen)  # the pages read, first to last
    reading.ocr_read = read
    if read < len(pages):
        reading.ocr_left = len(fresh) - len(chosen)
        reading.notes.append(_unread_note(pages, read, setting, settings))
    try:
        texts = recognise_pages(
            pdf,
            chosen,
            (lambda done, total: progress("ocr", done, total)) if progress else None,
            call.cancelled if call is not None else None,
            runs=runs,
        )
    except OcrCancelled:
        raise DocumentError(N_("Reading {name} by OCR was cancelled."), name=path.name) from None
    except OcrFailed as exc:  # the engine's process died (killed, out of memory): not the file's fault
        raise DocumentError(
            N_("OCR of {name} failed: {reason}; try again, or set OCR_ENABLED=false."),
            name=path.name,
            reason=str(exc),
        ) from None
    except OcrUnavailable as exc:
        if len(pages) == len(pdf):
            raise DocumentError(
                N_("{name} has no text layer (scanned?). {reason}."), name=path.name, reason=str(exc)
            ) from None
        return {}
    if call is not None and call.pages_left is not None:
        call.pages_left -= len(texts)
    if call is not None and call.known is not None:
        call.known.update(texts)
    if call is not None and call.known_runs is not None and runs is not None:
        call.known_runs.update(runs)
        runs.update(
            {page: call.known_runs[page] for page in within if page in known and page in call.known_runs}
        )
    return {**{page: known[page] for page in within if page in known}, **texts}


def _unread_note(pages: list[int], read: int, setting: str, settings: DocumentSettings) -> Message:
    """One sentence: which scanned pages OCR left unread, the limit, and how to read more
    (in English for the model, in the UI language where `generalagent index` shows it)."""
    first, last, left = pages[read] + 1, pages[-1] + 1, len(pages) - read
    per_call = setting == "OCR_MAX_PAGES_PER_CALL"
    value = settings.ocr_max_pages_per_call if per_call else settings.ocr_max_pages_per_document
    more = (
        N_("the user can read more with `generalagent index --force FILE` (up to OCR_MAX_PAGES_PER_DOCUMENT)")
        if per_call
        else N_("raise it and index the file again with `generalagent index --force FILE`")
    )
    return Message(
        N_(
            "OCR read {read:,} of its {total:,} pages without a text layer; page {first:,} was not "
            "read (limit {setting}={value}; {more})."
        )
        if left == 1
        else N_(
            "OCR read {read:,} of its {total:,} pages without a text layer; {count:,} pages "
            "({first:,}–{last:,}) were not read (limit {setting}={value}; {more})."
        ),
        {
            "read": read,
            "total": len(pages),
            "count": left,
            "first": first,
            "last": last,
            "setting": setting,
            "value": value,
            "more": Message(more),
        },
    )


def page_text(textpage: Any) -> str:
    """One page's text layer as a reader reads it, columns one after the other and
    paragraphs rebuilt (what view_page gives a model that does not see)."""
    raw = textpage.get_text_range()
    if may_hold_table(textpage, raw):
        layout = page_layout(textpage, raw, tables=False)
        if layout is not None:
            raw = ordered_text(raw, layout.order)
    return join_pdf_lines(raw)


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
    text = "\n\n".join(paragraphs)
    for mark in ("\x00", *_SOFT_HYPHENS):  # str.replace is many times faster than translate
        if mark in text:
            text = text.replace(mark, "")
    return text
