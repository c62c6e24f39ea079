"""What every pdf-skill script shares: opening a PDF, page ranges, output paths, one-line errors.

The scripts are run by the agent (`python skills/pdf/scripts/<name>.py ...`) with the session
workspace as the current directory, and the model reads whatever they print. So a failure is
one line on stderr plus an exit status that tells the model what to do next:

    1  the file is missing, damaged or not a PDF; or the work failed
    2  the command line is wrong (bad page range, output outside outputs/ or temp/)
    3  the PDF is encrypted: ask the user for the password, pass --password
    4  the pages have no text layer (scanned images); there is no OCR here
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_raw
except ImportError:
    sys.exit(
        f"error: pypdfium2 is not installed for {sys.executable}; "
        "run the script with the Python that runs generalAgent."
    )

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PASSWORD = 3
EXIT_NO_TEXT = 4

WRITABLE_ROOTS = ("outputs", "temp")
PASSWORD_ENV = "PDF_PASSWORD"

# Users type ranges with Chinese punctuation too: "1-3，5" or "2～4".
_RANGE_PUNCTUATION = str.maketrans({"，": ",", "、": ",", "～": "-", "~": "-", "–": "-", "—": "-"})
_RANGE_ITEM = re.compile(r"^(\d+)(?:(-)(\d*))?$")
PAGE_SPEC = re.compile(r"^[\d\s,，、~～\-–—]+$")


class PdfSkillError(Exception):
    """A failure the user can act on; the message is one line, the exit code says which kind."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def run_cli(main: Callable[[], int]) -> None:
    """Run a script's `main`, turning every failure into one line on stderr and an exit code."""
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8")
    try:
        code = main()
    except PdfSkillError as error:
        print(f"error: {error}", file=sys.stderr)
        code = error.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        code = 130
    except Exception as error:  # a library failure must still reach the model as one line
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        code = EXIT_FAILED
    sys.exit(code)


def password_from(value: str | None) -> str | None:
    """The password given with --password, else the PDF_PASSWORD environment variable."""
    return value if value else os.environ.get(PASSWORD_ENV) or None


def check_pdf_file(path: str) -> Path:
    """The input path if it names a readable file that starts like a PDF, else a clear error."""
    file = Path(path)
    if not file.exists():
        raise PdfSkillError(f"{path}: no such file (uploaded files are under uploads/).")
    if file.is_dir():
        raise PdfSkillError(f"{path}: is a folder, not a PDF file.")
    try:
        with file.open("rb") as handle:
            head = handle.read(1024)
    except OSError as error:
        raise PdfSkillError(f"{path}: cannot be read ({error.strerror}).") from error
    # PDFium accepts junk before the header as long as it is within the first 1024 bytes.
    if b"%PDF-" not in head:
        raise PdfSkillError(f"{path}: not a PDF (no %PDF- header); check the file type.")
    return file


def open_pdf(path: str, password: str | None = None) -> pdfium.PdfDocument:
    """Open `path` with PDFium, or raise a `PdfSkillError` that says what is wrong."""
    file = check_pdf_file(path)
    try:
        pdf = pdfium.PdfDocument(file, password=password)
    except pdfium.PdfiumError as error:
        code = getattr(error, "err_code", None)
        if code == pdfium_raw.FPDF_ERR_PASSWORD or (code is None and "password" in str(error)):
            if password:
                raise PdfSkillError(
                    f"{path}: wrong password; ask the user for the right one.", EXIT_PASSWORD
                ) from error
            raise PdfSkillError(
                f"{path}: is password-protected; ask the user for the password and pass "
                "--password PASSWORD.",
                EXIT_PASSWORD,
            ) from error
        if code == pdfium_raw.FPDF_ERR_SECURITY:
            raise PdfSkillError(
                f"{path}: uses an encryption scheme PDFium cannot open (e.g. certificate-based).",
                EXIT_PASSWORD,
            ) from error
        reason = str(error).rstrip(".")
        raise PdfSkillError(
            f"{path}: damaged or not a valid PDF, cannot be opened ({reason})."
        ) from error
    if len(pdf) == 0:
        pdf.close()
        raise PdfSkillError(f"{path}: the PDF has no pages (damaged?).")
    return pdf


@contextmanager
def opened_pdf(path: str, password: str | None = None) -> Iterator[pdfium.PdfDocument]:
    """`open_pdf` as a context manager that always closes the document."""
    pdf = open_pdf(path, password)
    try:
        yield pdf
    finally:
        pdf.close()


def is_encrypted(pdf: pdfium.PdfDocument) -> bool:
    """Whether the document has a security handler (user or owner password)."""
    return pdfium_raw.FPDF_GetSecurityHandlerRevision(pdf.raw) != -1


def load_page(pdf: pdfium.PdfDocument, index: int, path: str) -> pdfium.PdfPage:
    """Page `index` (0-based), or a clear error naming the 1-based page when it is damaged."""
    try:
        return pdf[index]
    except pdfium.PdfiumError as error:
        raise PdfSkillError(f"{path}: page {index + 1} is damaged and cannot be read.") from error


def parse_page_ranges(spec: str | None, page_count: int) -> list[int]:
    """0-based page indices for a 1-based spec like "1-3,7,9-" (all pages when `spec` is None).

    Pages come back in the order written, so "3,1" reorders; "5-3" counts down; "9-" runs to
    the last page.
    """
    if spec is None or not spec.strip():
        return list(range(page_count))
    pages: list[int] = []
    for raw_item in spec.translate(_RANGE_PUNCTUATION).split(","):
        item = raw_item.replace(" ", "")
        if not item:
            continue
        match = _RANGE_ITEM.match(item)
        if not match:
            raise PdfSkillError(
                f"bad page range {raw_item.strip()!r}: use numbers like 1-3,7,9- "
                "(pages start at 1).",
                EXIT_USAGE,
            )
        first = int(match.group(1))
        last = first if not match.group(2) else int(match.group(3) or page_count)
        for number in (first, last):
            if not 1 <= number <= page_count:
                raise PdfSkillError(
                    f"page {number} is out of range: the PDF has {page_count} pages.", EXIT_USAGE
                )
        step = 1 if last >= first else -1
        pages.extend(n - 1 for n in range(first, last + step, step))
    if not pages:
        raise PdfSkillError(f"bad page range {spec!r}: it names no page.", EXIT_USAGE)
    return pages


def describe_pages(indices: list[int]) -> str:
    """1-based and compact, with the noun: [0, 1, 2, 6] -> "pages 1-3, 7"; [4] -> "page 5"."""
    parts: list[str] = []
    start = previous = None
    for index in indices:
        number = index + 1
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = number
    if start is not None:
        parts.append(str(start) if start == previous else f"{start}-{previous}")
    noun = "page" if len(parts) == 1 and "-" not in parts[0] else "pages"
    return f"{noun} {', '.join(parts)}"


def plural(count: int, noun: str) -> str:
    """ "1 page", "3 pages": summaries the model repeats to the user should read naturally."""
    return f"{count} {noun}" if count == 1 else f"{count:,} {noun}s"


def output_path(path: str, *, suffix: str | None = None, folder: bool = False) -> Path:
    """Where to write a result: only under outputs/ or temp/ of the current directory.

    Creates the parent folders (or the folder itself when `folder`), so the caller just writes.
    """
    cwd = Path.cwd().resolve()
    target = (cwd / path).resolve()
    roots = [(cwd / name).resolve() for name in WRITABLE_ROOTS]
    if not any(root in target.parents or (folder and target == root) for root in roots):
        example = "outputs/pages/" if folder else f"outputs/{Path(path).name}"
        raise PdfSkillError(
            f"{path}: results are written only under outputs/ or temp/ (e.g. {example}).",
            EXIT_USAGE,
        )
    if suffix and not folder and target.suffix.lower() != suffix:
        raise PdfSkillError(f"{path}: the output file name must end in {suffix}.", EXIT_USAGE)
    if folder:
        if target.exists() and not target.is_dir():
            raise PdfSkillError(f"{path}: exists and is not a folder.", EXIT_USAGE)
        target.mkdir(parents=True, exist_ok=True)
    else:
        if target.is_dir():
            raise PdfSkillError(f"{path}: is a folder; give a file name.", EXIT_USAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
    return target


def shown(path: Path) -> str:
    """A written path as the user and the model should see it: relative to the workspace."""
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def normalise_text(text: str) -> str:
    """PDFium's page text with Unix line ends, no trailing blanks, no NUL or non-characters."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\x00", "").replace("\ufffe", "").replace("\uffff", "")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")
