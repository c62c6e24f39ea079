"""What a chat line asks for besides its text: `@name` mentions and `#path` attachments.

Mentions are parsed here and classified (tool, skill, agent) where tools are made visible
(tools/visibility.py). A `#path` reference may be a file, a folder (its files, recursively)
or a glob (`#docs/*.pdf`); `#"a name with spaces.pdf"` quotes a path, as do single quotes
and backslash escapes (`#my\\ report.pdf`, what a terminal writes when a file is dragged
in). `~` is the home folder. A reference never guesses: it names an existing path, or the
turn stops with "no such file" and the close names of that folder; an existing folder is
never taken for a file under it that does not exist. The full-width `＃` and `＠` of a
Chinese input method work as `#` and `@`. Markdown headings (`# Title`, `## Title`) are
not references. Attached files are copied into the session's
`uploads/`, within per-type size limits, and described (type, size, pages) for the
reminder that announces them once. `/upload PATH` attaches the same way. A folder or a
glob never leads out of itself through a symbolic link (documents/folder_walk.py): such a
link is skipped and named in a notice.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from generalAgent.display import os_error_message
from generalAgent.documents.convert import legacy_office_problem, modern_suffix
from generalAgent.documents.folder_walk import FolderFiles, glob_anchor, glob_files, leads_out_of, walk_folder
from generalAgent.documents.reading import OFFICE_TYPES, OLD_OFFICE, PDF_TYPES
from generalAgent.graph.state import UploadedFile
from generalAgent.i18n import _
from generalAgent.private_storage import tighten
from generalAgent.tools.workspace import Workspace

# `@name` not preceded by an ASCII word character, so `user@example.com` is not one but
# `然后@agent` is; names are ASCII letters, digits, `_` and `-` (a trailing `-` is
# punctuation), and Chinese text may follow them directly (`@agent总结`).
_MENTION = re.compile(
    r"(?<![A-Za-z0-9_@＠./+-])[@＠]([A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)(?![A-Za-z0-9_@])"
)


def parse_mentions(text: str) -> list[str]:
    """The @names in `text`, in order, without duplicates."""
    seen: dict[str, None] = {}
    for match in _MENTION.finditer(text):
        seen.setdefault(match.group(1), None)
    return list(seen)


# `#` (or the full-width `＃`) directly followed by a path: a `#` followed by a space or
# another `#` starts a Markdown heading instead. A quoted path (`#"my report.pdf"`) is
# taken as it is; in an unquoted one a backslash escapes the next character (`my\ file`).
_REFERENCE = re.compile(
    r"""[#＃](?:"([^"\n]+)"|'([^'\n]+)'|((?:\\[^\n]|[^\s#＃"'\\])(?:\\[^\n]|[^\s\\])*))"""
)
# What a shell (and a terminal, for a dragged-in file) escapes with a backslash; any other
# backslash stays (a Windows path, `docs\q3.pdf`).
_SHELL_ESCAPE = re.compile(r"""\\([ \t'"()\[\]{}&;!$`#,|<>])""")
# After a name that exists, what shows the name goes on: `#docs/x.pdf` is not `#docs`,
# `#report.pdfx` is not `#report.pdf` (Chinese text may follow a name directly).
_NAME_GOES_ON = re.compile(r"[A-Za-z0-9_~/\\-]")
# Unquoted words after a reference that names nothing, tried as one name with spaces.
MAX_SPACED_WORDS = 6
# Entries of a folder compared with a name that is not there (a folder of 100,000 files
# is not read whole to suggest a name).
MAX_SUGGESTION_ENTRIES = 5000
# Where an unquoted reference that names nothing is cut for the error message: Chinese and
# English punctuation that ends a clause (a file name may still hold them: 报告（2024）.txt).
_CLAUSE_PUNCTUATION = re.compile(r"[，。；：！？、（）「」『』【】《》〈〉…—,;:!?)\]}]")
_TRAILING_PUNCTUATION = ".,;:!?)]}，。；：！？）、"
# No file name is longer: a reference is never checked beyond this many characters.
MAX_REFERENCE_CHARS = 260
# A Chinese input method in full-width mode types `季度报告．pdf` or `docs／q3.pdf`: a name
# that names nothing is tried again with the full-width forms of ASCII (U+FF01-U+FF5E,
# one character each, so the lengths agree) as ASCII.
_HALF_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}

DOCUMENT_TYPES = {**PDF_TYPES, **OFFICE_TYPES, **{old: OFFICE_TYPES[new] for old, new in OLD_OFFICE.items()}}
TEXT_TYPES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".csv": "text",
    ".tsv": "text",
    ".json": "text",
    ".jsonl": "text",
    ".yaml": "text",
    ".yml": "text",
    ".toml": "text",
    ".xml": "text",
    ".html": "text",
    ".htm": "text",
    ".log": "text",
    ".rst": "text",
    ".ini": "text",
}
CODE_SUFFIXES = {
    ".py",
    ".js",
    ".ts",
    ".tsx",
    ".jsx",
    ".java",
    ".go",
    ".rs",
    ".c",
    ".h",
    ".cpp",
    ".hpp",
    ".cs",
    ".rb",
    ".php",
    ".sh",
    ".sql",
    ".kt",
    ".swift",
    ".scala",
    ".r",
    ".m",
    ".lua",
}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"}

MB = 1024 * 1024
# Documents can be big books; text far beyond 20 MB is a data dump nobody reads in chat.
SIZE_LIMITS = {"document": 200 * MB, "text": 20 * MB, "code": 20 * MB, "image": 20 * MB, "other": 50 * MB}
MAX_FILES_PER_REFERENCE = 200
# What an attachment's first bytes are checked for (`unreadable_reason`).
SNIFF_BYTES = 64 * 1024
# The members a zip-packaged Office file cannot be read without.
ZIP_PACKAGES = {
    ".docx": frozenset({"[Content_Types].xml", "word/document.xml"}),
    ".xlsx": frozenset({"[Content_Types].xml", "xl/workbook.xml"}),
    ".xlsm": frozenset({"[Content_Types].xml", "xl/workbook.xml"}),
    ".pptx": frozenset({"[Content_Types].xml", "ppt/presentation.xml"}),
}
OLE_OFFICE = frozenset({".xls", ".doc", ".ppt", ".et", ".wps", ".dps"})
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# A glob stops counting here: enough to say it matches too many, without walking a whole disk.
MAX_GLOB_MATCHES = MAX_FILES_PER_REFERENCE + 1


@dataclass
class UploadReport:
    files: list[UploadedFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the turn is not sent
    notices: list[str] = field(default_factory=list)  # shown; the rest is attached (a link not followed)


@dataclass(frozen=True)
class Reference:
    """A `#path` of a chat line: `path` names what exists (or a glob), None if nothing does."""

    typed: str  # as typed after `#`, up to the first clause punctuation when it names nothing
    path: str | None
    # Set when nothing has the typed name but it and the words after it name a file with
    # spaces (`#销售数据 2025.xlsx`): the name to quote.
    spaced: str | None = None


def find_references(text: str, cwd: Path) -> list[Reference]:
    """The `#path` references of a chat line, in order, without duplicates.

    Chinese is written without spaces, so `总结#报告.pdf的内容` refers to `报告.pdf`: after
    `#`, the longest start of the following text that names an existing file or folder wins
    (a glob is taken up to the first clause punctuation). Text that names nothing is a
    reference only when it stands apart (a space or the line's start before `#`) and looks
    like a path (`#docs/q3.pdf`); `C#`, `issue#12`, `#123` and `#重要` are left alone.
    """
    found: dict[str, Reference] = {}
    for match in _REFERENCE.finditer(text):
        start = match.start()
        apart = start == 0 or text[start - 1].isspace()
        quoted = match.group(1) or match.group(2)
        reference: Reference | None
        if quoted:
            named = next((name for name in (quoted, half_width(quoted)) if _exists(name, cwd)), None)
            reference = Reference(quoted, named)
        else:
            reference = _half_width_reference(match.group(3)[:MAX_REFERENCE_CHARS], cwd)
            if reference is not None and reference.path is None and apart:
                spaced = _spaced_name(reference.typed, text[match.end() :], cwd)
                if spaced:
                    reference = Reference(spaced, None, spaced=spaced)
            meant_as_path = reference is not None and apart and looks_like_path(reference.typed)
            if reference is None or (reference.path is None and not meant_as_path and not reference.spaced):
                continue
        found.setdefault(reference.typed, reference)
    return list(found.values())


# An image path pasted into the chat (a terminal pastes a dragged file as its path, quoted
# or with its spaces escaped): absolute, from home or relative with ./ or ../.
_PASTED_PATH = re.compile(r"""(?<![#\w])(?:'([^'\n]+)'|"([^"\n]+)"|((?:~|\.{1,2})?/(?:\\ |[^\s'"])+))""")


def find_image_paths(text: str, cwd: Path) -> list[str]:
    """Paths of existing image files written in the chat line without `#` (pasted or
    dragged in), in order, each once; they are attached like `#path`."""
    found: dict[str, None] = {}
    for match in _PASTED_PATH.finditer(text[: MAX_REFERENCE_CHARS * 40]):
        raw = next(group for group in match.groups() if group).replace("\\ ", " ")
        # Chinese runs on without a space (`/tmp/a.png，还有`): the longest start that is an
        # existing image file wins.
        ends = [m.end() for m in _IMAGE_SUFFIX_END.finditer(raw)]
        for end in reversed(ends):
            path = raw[:end]
            if len(path) <= MAX_REFERENCE_CHARS and (cwd / Path(path).expanduser()).is_file():
                found.setdefault(path, None)
                break
    return list(found)


_IMAGE_SUFFIX_END = re.compile(
    "|".join(re.escape(suffix) for suffix in sorted(IMAGE_SUFFIXES, key=len, reverse=True)), re.IGNORECASE
)


def unescape(reference: str) -> str:
    """A path as a shell would read it: `my\\ report.pdf` → `my report.pdf`."""
    return _SHELL_ESCAPE.sub(r"\1", reference)


def half_width(text: str) -> str:
    """`text` with the full-width forms of ASCII as ASCII: `季度报告．pdf` → `季度报告.pdf`."""
    return text.translate(_HALF_WIDTH)


def _half_width_reference(token: str, cwd: Path) -> Reference | None:
    """The reference of `token`, or, when it names nothing, of its half-width form (typed as
    it was typed, so the message keeps the user's text)."""
    reference = _unquoted_reference(token, cwd)
    if reference is not None and reference.path is not None:
        return reference
    ascii_token = half_width(token)
    if ascii_token == token:
        return reference
    found = _unquoted_reference(ascii_token, cwd)
    if found is None or found.path is None:
        return reference
    return Reference(token[: len(found.typed)], found.path)


def _unquoted_reference(token: str, cwd: Path) -> Reference | None:
    clause = _CLAUSE_PUNCTUATION.split(token, maxsplit=1)[0].rstrip(_TRAILING_PUNCTUATION)
    if not clause or clause.isdigit():
        return None
    if _exists(unescape(token), cwd):
        return Reference(token, unescape(token))
    if any(c in clause for c in "*?["):
        return Reference(clause, unescape(clause))
    for end in range(len(token) - 1, 0, -1):
        candidate = token[:end]
        if candidate.endswith(("/", "\\")) or not _ends_a_name(token[end:]):
            continue
        if re.split(r"[/\\]", candidate)[-1] in {".", ".."}:  # `#docs/.x` is not docs/ itself
            continue
        if _exists(unescape(candidate), cwd):
            return Reference(candidate, unescape(candidate))
    return Reference(clause, None)


def _ends_a_name(rest: str) -> bool:
    """Whether the text after an existing name leaves it whole: Chinese text or punctuation
    may follow (`#报告.pdf的内容`, `#报告.pdf。`), a `/`, a letter or a digit may not (a parent
    folder or a shorter name is never taken for the path typed), nor a `.` that goes on
    (their full-width forms neither: `#docs／q3.pdf` is not `#docs`)."""
    rest = half_width(rest)
    if _NAME_GOES_ON.match(rest):
        return False
    return not rest.startswith(".") or not rest.rstrip(_TRAILING_PUNCTUATION)


def _spaced_name(typed: str, after: str, cwd: Path) -> str | None:
    """The name with spaces that `typed` and the words after it make, if such a file exists."""
    words = after.split(" ")[1 : MAX_SPACED_WORDS + 1]
    name = typed
    for word in words:
        if not word or "\n" in word:
            return None
        name += " " + word
        for candidate in (name, name.rstrip(_TRAILING_PUNCTUATION)):
            if _exists(candidate, cwd):
                return candidate
    return None


def _exists(reference: str, cwd: Path) -> bool:
    try:
        raw = Path(reference).expanduser()
        return (raw if raw.is_absolute() else cwd / raw).exists()
    except (OSError, ValueError, RuntimeError):  # a name too long, a NUL byte, an unknown ~user
        return False


def split_paths(argument: str, cwd: Path) -> list[str]:
    """The paths of `/upload`'s argument, quoted or escaped as in a shell (`"a b.xlsx" c.pdf`);
    a name with spaces that exists is one path even unquoted, and one typed with full-width
    punctuation (`季度报告．pdf`) that names nothing is its ASCII form if that exists."""
    return [_existing_form(path, cwd) for path in _split_paths(argument, cwd)]


def _existing_form(path: str, cwd: Path) -> str:
    if _exists(path, cwd) or not _exists(half_width(path), cwd):
        return path
    return half_width(path)


def _split_paths(argument: str, cwd: Path) -> list[str]:
    argument = argument.strip().replace("＂", '"')
    if not argument:
        return []
    if not any(c in argument for c in "\"'\\"):
        return [argument] if " " in argument and _exists(argument, cwd) else argument.split()
    try:
        return shlex.split(argument)
    except ValueError:  # an unbalanced quote: the argument as it is
        return [argument]


def missing_reference(reference: str, cwd: Path) -> str:
    """The line that says a reference names nothing, with the close names of its folder."""
    close = close_names(reference, cwd)
    if close:
        return _("#{reference}: no such file or folder (did you mean {names}?)").format(
            reference=reference, names=", ".join(_quoted_reference(name) for name in close)
        )
    return _("#{reference}: no such file or folder").format(reference=reference)


def spaced_reference(name: str) -> str:
    """The line that says a name with spaces must be quoted to be attached."""
    return _("#{name}: a name with spaces must be quoted: {quoted}").format(
        name=name, quoted=_quoted_reference(name)
    )


def _quoted_reference(name: str) -> str:
    return f'#"{name}"' if " " in name else f"#{name}"


def close_names(reference: str, cwd: Path, limit: int = 3) -> list[str]:
    """Names close to a reference that names nothing, written as it was written: the first
    part of it that does not exist is compared with the entries of the folder it is in
    (`docs/季度报告2.docx` → `docs/季度报告.docx`; `doc/a.pdf` → `docs/a.pdf`)."""
    parts = Path(reference).parts
    if not parts or any(c in reference for c in "*?["):
        return []
    for index in range(len(parts)):
        try:
            partial = Path(*parts[: index + 1]).expanduser()
            if not (partial if partial.is_absolute() else cwd / partial).exists():
                break
        except (OSError, ValueError, RuntimeError):
            return []
    else:
        return []
    folder_parts = parts[:index]
    folder = Path(*folder_parts).expanduser() if folder_parts else Path(".")
    folder = folder if folder.is_absolute() else cwd / folder
    missing = parts[index]
    try:
        with os.scandir(folder) as entries:
            names = [
                entry.name
                for entry, _unused in zip(entries, range(MAX_SUGGESTION_ENTRIES), strict=False)
                if missing.startswith(".") or not entry.name.startswith(".")
            ]
    except OSError:
        return []
    by_case = {name.casefold(): name for name in names}
    close = [by_case[missing.casefold()]] if missing.casefold() in by_case else []
    close += [n for n in difflib.get_close_matches(missing, names, n=limit, cutoff=0.6) if n not in close]
    return [str(Path(*folder_parts, name, *parts[index + 1 :])) for name in close[:limit]]


def looks_like_path(reference: str) -> bool:
    """Whether text after `#` that names nothing was meant as a path (and is worth an error)."""
    return any(c in half_width(reference) for c in "/.*?[~\\")


def expand_reference(reference: str, cwd: Path) -> FolderFiles:
    """The files a reference names (sorted; none when nothing matches), and the links that
    lead out of the folder walked, or of the working folder, that were not followed."""
    raw = Path(reference).expanduser()
    base = raw if raw.is_absolute() else cwd / raw
    if any(c in reference for c in "*?["):
        anchor, _pattern = glob_anchor(base)
        if leads_out_of(anchor, cwd):
            return FolderFiles(links_out=[anchor])
        return glob_files(base, limit=MAX_GLOB_MATCHES)
    if leads_out_of(base, cwd):
        return FolderFiles(links_out=[base])
    if base.is_dir():
        return walk_folder(base)
    return FolderFiles(files=[base] if base.is_file() else [])


def file_type(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in DOCUMENT_TYPES:
        return DOCUMENT_TYPES[suffix]
    if suffix in TEXT_TYPES:
        return TEXT_TYPES[suffix]
    if suffix in CODE_SUFFIXES:
        return "code"
    if suffix in IMAGE_SUFFIXES:
        return "image"
    return "other"


def size_class(kind: str) -> str:
    if kind in DOCUMENT_TYPES.values():
        return "document"
    if kind in {"markdown", "text"}:
        return "text"
    return kind if kind in SIZE_LIMITS else "other"


def upload(references: list[str], workspace: Workspace, cwd: Path) -> UploadReport:
    """Copy what the references name into uploads/; problems are reported, never raised."""
    report = UploadReport()
    for reference in references:
        found = expand_reference(reference, cwd)
        paths = found.files
        report.notices += [
            _("#{reference}: {link} was not attached: it is a link to a place outside the folder").format(
                reference=reference, link=link
            )
            for link in found.links_out
        ]
        if not paths:
            if not found.links_out:
                report.problems.append(missing_reference(reference, cwd))
            continue
        if len(paths) > MAX_FILES_PER_REFERENCE:
            report.problems.append(
                _(
                    "#{reference}: {count} files; attach at most {limit} at once "
                    "(use a narrower glob such as #folder/*.pdf)"
                ).format(reference=reference, count=len(paths), limit=MAX_FILES_PER_REFERENCE)
            )
            continue
        for path in paths:
            try:
                report.files.append(copy_into_uploads(path, workspace))
            except OSError as exc:  # in words naming the file, not `[Errno 13] Permission denied: '/…'`
                report.problems.append(os_error_message(exc, path.name).shown(_))
            except ValueError as exc:
                report.problems.append(f"{path.name}: {exc}")
                continue
            reason = unreadable_reason(path, file_type(path))
            if reason:  # said now, not when the model first fails to read it
                report.notices.append(
                    _("{name} was attached, but {reason}: the model will not be able to read it").format(
                        name=path.name, reason=reason
                    )
                )
    return report


def unreadable_reason(path: Path, kind: str) -> str | None:
    """Why the file at `path` cannot be read as the `kind` its name says (empty, not that
    format at all, a damaged package), from its first bytes and, for a PDF, pdfium opening
    it; None when it looks readable. Cheap and bounded: the real reading comes later."""
    try:
        with path.open("rb") as stream:
            head = stream.read(SNIFF_BYTES)
    except OSError:
        return None  # the copy said what was wrong
    suffix = path.suffix.lower()
    if not head:
        return _("the file is empty")
    if kind == "pdf":
        if b"%PDF-" not in head[:1024]:
            return _("it is not a PDF (it has no PDF header)")
        if count_pages(path, kind) is None:
            return _("it is a damaged PDF that cannot be opened")
    elif suffix in ZIP_PACKAGES:
        try:
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return _("it is not a {suffix} file (not the zip package that format is)").format(suffix=suffix)
        if not ZIP_PACKAGES[suffix] <= names:
            return _("it is a damaged {suffix} file (its package has no document in it)").format(
                suffix=suffix
            )
    elif suffix in OLE_OFFICE:
        # Old Office files are OLE2 compound files; an .xls saved by a web page is often HTML
        # or CSV text, which is read as such. Binary data that is neither is not a document.
        if not head.startswith((OLE_MAGIC, b"PK")) and b"\x00" in head[:4096]:
            return _("it is not a {suffix} file (unknown binary data)").format(suffix=suffix)
    elif kind in {"text", "markdown", "code"} and b"\x00" in head and not head.startswith(UTF16_BOMS):
        return _("it holds binary data, not text")
    return None


def copy_into_uploads(source: Path, workspace: Workspace) -> UploadedFile:
    if legacy_office_problem(source):  # refused now rather than failing when the model reads it
        raise ValueError(
            _(
                "an old or WPS Office file needs LibreOffice to be read: install it "
                "(apt install libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui) "
                "or save the file as {modern}"
            ).format(modern=modern_suffix(source))
        )
    kind = file_type(source)
    size = source.stat().st_size
    limit = SIZE_LIMITS[size_class(kind)]
    if size > limit:
        raise ValueError(
            _("{size:.1f} MB is over the {limit} MB limit for {kind} files").format(
                size=size / MB, limit=limit // MB, kind=_size_class_name(size_class(kind))
            )
        )
    uploads = workspace.root / "uploads"
    target = _free_name(uploads, source)
    if not target.exists():
        shutil.copy2(source, target)
        tighten(target)  # the copy is the user's alone, whatever the original's mode
    described: UploadedFile = {
        "name": source.name,
        "path": workspace.display(target),
        "type": kind,
        "size": size,
    }
    pages = count_pages(target, kind)
    if pages:
        described["pages"] = pages
    return described


def _size_class_name(size_class: str) -> str:
    names = {"document": _("document"), "text": _("text"), "code": _("code"), "image": _("image")}
    return names.get(size_class, _("other"))


def count_pages(path: Path, kind: str) -> int | None:
    """Pages of a PDF, slides of a PPTX, sheets of an XLSX; None when unknown or unreadable."""
    try:
        if kind == "pdf":
            import pypdfium2

            from generalAgent.documents.pdfium_lock import PDFIUM

            with PDFIUM:  # a background OCR reading may be rendering a page
                document = pypdfium2.PdfDocument(str(path))
                try:
                    return len(document)
                finally:
                    document.close()
        if kind in {"pptx", "xlsx"}:
            pattern = re.compile(
                r"ppt/slides/slide\d+\.xml" if kind == "pptx" else r"xl/worksheets/sheet\d+\.xml"
            )
            with zipfile.ZipFile(path) as archive:
                return sum(1 for name in archive.namelist() if pattern.fullmatch(name)) or None
    except Exception:  # encrypted or damaged: the document tools will say so when it is read
        return None
    return None


def _free_name(folder: Path, source: Path) -> Path:
    """uploads/<name>, or the existing copy if it has the same bytes, or <name> (2), ..."""
    candidate = folder / source.name
    number = 2
    while candidate.exists():
        if _same_bytes(candidate, source):
            return candidate
        candidate = folder / f"{source.stem} ({number}){source.suffix}"
        number += 1
    return candidate


def _same_bytes(a: Path, b: Path) -> bool:
    if a.stat().st_size != b.stat().st_size:
        return False
    # The index's module (the search engine) loads only when two files of one size meet.
    from generalAgent.documents.index import compute_file_hash

    return compute_file_hash(a) == compute_file_hash(b)
