"""Which text encoding a file's bytes are in, and their text (documents, read_file, knowledge).

UTF-8 and the byte-order-marked Unicode encodings are recognised directly; the legacy
encodings our users' files come in (GB18030, Big5, Shift-JIS, EUC, Windows-1252) are told
apart by charset-normalizer, imported only when a file is not UTF-8.
"""

from __future__ import annotations

from generalAgent.display import N_
from generalAgent.documents.reading import DocumentError

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


def decode_text(data: bytes, name: str, truncated: bool = False) -> str:
    """The text of a file's bytes, in the encoding they are in (`text_encoding`), or
    DocumentError for a binary file or one that is no text encoding we know.

    `truncated`: the bytes are the start of a longer file, so a character cut at the end
    is not a wrong encoding."""
    encoding = encoding_or_error(data, name, truncated)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(data) - 4:
            return data[: exc.start].decode(encoding)
        raise not_valid_text(name, encoding) from None


def not_valid_text(name: str, encoding: str) -> DocumentError:
    return DocumentError(
        N_("{name} is not valid {encoding} text (damaged?); save it as UTF-8 and try again."),
        name=name,
        encoding=encoding,
    )


def encoding_or_error(data: bytes, name: str, truncated: bool) -> str:
    encoding = text_encoding(data, truncated)
    if encoding is None and b"\x00" in data[:TEXT_SAMPLE_BYTES]:
        raise DocumentError(
            N_(
                "{name} is a binary file, not text; supported are PDF, DOCX, XLSX, PPTX, Markdown, text and source code."
            ),
            name=name,
        )
    if encoding is None:
        raise DocumentError(
            N_(
                "{name} is not text in an encoding generalAgent knows (UTF-8, UTF-16, GB18030, Big5, "
                "Shift-JIS, EUC, Windows-1252); save it as UTF-8 and try again."
            ),
            name=name,
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
