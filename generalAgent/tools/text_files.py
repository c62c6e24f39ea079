"""Reading text files for the tools: decoding (UTF-8, then GB18030) and binary detection."""

from __future__ import annotations

from pathlib import Path

from generalAgent.documents.encoding import DecodedText, decode_text, decode_text_replacing
from generalAgent.documents.reading import DocumentError, OpenFile

BINARY_SUFFIXES = {
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".webp",
    ".bmp",
    ".tif",
    ".tiff",
    ".ico",
    ".zip",
    ".gz",
    ".tgz",
    ".bz2",
    ".xz",
    ".7z",
    ".rar",
    ".tar",
    ".exe",
    ".dll",
    ".so",
    ".dylib",
    ".bin",
    ".class",
    ".jar",
    ".pyc",
    ".o",
    ".a",
    ".mp3",
    ".mp4",
    ".mov",
    ".avi",
    ".wav",
    ".flac",
    ".ogg",
    ".webm",
    ".sqlite",
    ".db",
    ".woff",
    ".woff2",
    ".ttf",
    ".otf",
    ".doc",
    ".xls",
    ".ppt",
    ".psd",
}


class NotText(ValueError):
    """The file is not text; the message says what it seems to be."""


def read_text(path: Path, open_file: OpenFile, max_bytes: int | None = None) -> str:
    """The file's text (at most `max_bytes` read), or `NotText` with the reason.

    `open_file` opens it: `Workspace.open_for_reading` for a workspace file, so a symlink
    swapped in after the path check cannot make the tool read a file outside."""
    if path.suffix.lower() in BINARY_SUFFIXES:
        raise NotText(f"{path.name} is a binary {path.suffix.lower()} file, not text")
    with open_file(path) as handle:
        data = handle.read(max_bytes) if max_bytes else handle.read()
    try:
        return decode_text(data, path.name, truncated=max_bytes is not None and len(data) == max_bytes)
    except DocumentError as exc:
        raise NotText(str(exc).rstrip(".")) from None


def read_text_replacing(path: Path, open_file: OpenFile, max_bytes: int | None = None) -> DecodedText:
    """As `read_text`, for reading only: bytes not valid in the file's encoding are replaced
    and counted (`DecodedText.note` says where), so one bad byte leaves the rest readable."""
    if path.suffix.lower() in BINARY_SUFFIXES:
        raise NotText(f"{path.name} is a binary {path.suffix.lower()} file, not text")
    with open_file(path) as handle:
        data = handle.read(max_bytes) if max_bytes else handle.read()
    try:
        return decode_text_replacing(
            data, path.name, truncated=max_bytes is not None and len(data) == max_bytes
        )
    except DocumentError as exc:
        raise NotText(str(exc).rstrip(".")) from None


def refuse_binary_name(path: Path) -> None:
    """`NotText` for a file whose suffix says it is binary (an image, an archive)."""
    if path.suffix.lower() in BINARY_SUFFIXES:
        raise NotText(f"{path.name} is a binary {path.suffix.lower()} file, not text")
