"""What a chat line asks for besides its text: `@name` mentions and `#path` attachments.

Mentions are parsed here and classified (tool, skill, agent) where tools are made visible
(tools/visibility.py). A `#path` reference may be a file, a folder (its files, recursively)
or a glob (`#docs/*.pdf`); `#"a name with spaces.pdf"` quotes a path. Markdown headings
(`# Title`, `## Title`) are not references. Attached files are copied into the session's
`uploads/`, within per-type size limits, and described (type, size, pages) for the
reminder that announces them once. `/upload PATH` attaches the same way. A folder or a
glob never leads out of itself through a symbolic link (documents/folder_walk.py): such a
link is skipped and named in a notice.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from generalAgent.cli.i18n import _
from generalAgent.documents.convert import legacy_office_problem, modern_suffix
from generalAgent.documents.extract import OFFICE_TYPES, OLD_OFFICE, PDF_TYPES
from generalAgent.documents.folder_walk import FolderFiles, glob_anchor, glob_files, leads_out_of, walk_folder
from generalAgent.documents.index import compute_file_hash
from generalAgent.graph.state import UploadedFile
from generalAgent.private_storage import tighten
from generalAgent.tools.workspace import Workspace

# `@name` not preceded by an ASCII word character, so `user@example.com` is not one but
# `然后@agent` is; names are ASCII letters, digits, `_` and `-` (a trailing `-` is
# punctuation), and Chinese text may follow them directly (`@agent总结`).
_MENTION = re.compile(r"(?<![A-Za-z0-9_@./+-])@([A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)(?![A-Za-z0-9_@])")


def parse_mentions(text: str) -> list[str]:
    """The @names in `text`, in order, without duplicates."""
    seen: dict[str, None] = {}
    for match in _MENTION.finditer(text):
        seen.setdefault(match.group(1), None)
    return list(seen)


# `#` directly followed by a path: a `#` followed by a space or another `#` starts a Markdown
# heading instead. A quoted path (`#"my report.pdf"`) is taken as it is.
_REFERENCE = re.compile(r"""#(?:"([^"\n]+)"|'([^'\n]+)'|([^\s#"'][^\s]*))""")
# Where an unquoted reference that names nothing is cut for the error message: Chinese and
# English punctuation that ends a clause (a file name may still hold them: 报告（2024）.txt).
_CLAUSE_PUNCTUATION = re.compile(r"[，。；：！？、（）「」『』【】《》〈〉…—,;:!?)\]}]")
_TRAILING_PUNCTUATION = ".,;:!?)]}，。；：！？）、"
# No file name is longer: a reference is never checked beyond this many characters.
MAX_REFERENCE_CHARS = 260

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
            reference = Reference(quoted, quoted if _exists(quoted, cwd) else None)
        else:
            reference = _unquoted_reference(match.group(3)[:MAX_REFERENCE_CHARS], cwd)
            meant_as_path = reference is not None and apart and looks_like_path(reference.typed)
            if reference is None or (reference.path is None and not meant_as_path):
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


def _unquoted_reference(token: str, cwd: Path) -> Reference | None:
    clause = _CLAUSE_PUNCTUATION.split(token, maxsplit=1)[0].rstrip(_TRAILING_PUNCTUATION)
    if not clause or clause.isdigit():
        return None
    if any(c in clause for c in "*?["):
        return Reference(clause, clause)
    for end in range(len(token), 0, -1):
        candidate = token[:end]
        if _exists(candidate, cwd):
            return Reference(candidate, candidate)
    return Reference(clause, None)


def _exists(reference: str, cwd: Path) -> bool:
    try:
        raw = Path(reference).expanduser()
        return (raw if raw.is_absolute() else cwd / raw).exists()
    except (OSError, ValueError, RuntimeError):  # a name too long, a NUL byte, an unknown ~user
        return False


def looks_like_path(reference: str) -> bool:
    """Whether text after `#` that names nothing was meant as a path (and is worth an error)."""
    return any(c in reference for c in "/.*?[~\\")


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
                report.problems.append(_("#{reference}: no such file or folder").format(reference=reference))
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
            except (OSError, ValueError) as exc:
                report.problems.append(f"{path.name}: {exc}")
    return report


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
    return compute_file_hash(a) == compute_file_hash(b)
