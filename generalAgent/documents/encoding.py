"""Which text encoding a file's bytes are in, and their text (documents, read_file, knowledge).

UTF-8 and the byte-order-marked Unicode encodings are recognised directly; the legacy
encodings our users' files come in (GB18030, Big5, Shift-JIS, EUC, Windows-1252) are told
apart by charset-normalizer, imported only when a file is not UTF-8.

The encoding is guessed from the first TEXT_SAMPLE_BYTES only, and the text decoded once: a
40 MB file used to be decoded whole to test for UTF-8, then again to read it. A few bytes
that are not valid in the encoding (a character cut by a copy, one line pasted from a GBK
file) no longer make the whole file unreadable: they are replaced by U+FFFD and the reader
gets one line saying how many and where the first is (`DecodedText.note`).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from generalAgent.display import N_, Message, N_plural
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


# UTF-8 is taken for a sample with invalid sequences when its valid non-ASCII characters
# outnumber them this many times: real UTF-8 text with a damaged character or a pasted GBK
# line does; GBK, Big5 or Shift-JIS read as UTF-8 gives more errors than characters.
UTF8_VALID_PER_ERROR = 4


@dataclass(frozen=True)
class DecodedText:
    """A file's text, with the bytes that were not valid in its encoding replaced by U+FFFD."""

    text: str
    encoding: str
    replaced: int = 0  # invalid sequences replaced
    first_line: int = 0  # the line of the first (1-based); 0 when none was

    def note(self, name: str) -> str:
        """One line saying what was replaced and where (for the model); "" when nothing was."""
        said = self.said(name)
        return said.english() if said is not None else ""

    def said(self, name: str) -> Message | None:
        """`note` as a Message, for a person in the UI language; None when nothing was replaced."""
        if not self.replaced:
            return None
        return Message(
            N_plural(
                "{name} is {encoding} text with damage: {count:,} invalid byte sequence was replaced by "
                "U+FFFD (the first on line {line:,}); the rest reads normally.",
                "{name} is {encoding} text with damage: {count:,} invalid byte sequences were "
                "replaced by U+FFFD (the first on line {line:,}); the rest reads normally.",
            ),
            {"name": name, "encoding": self.encoding, "count": self.replaced, "line": self.first_line},
        )


class ReplacingDecoder:
    """Decodes a file piece by piece (codecs' incremental decoder), strictly until the first
    invalid sequence, then with replacement; counts what was replaced and the first line."""

    def __init__(self, encoding: str, lines: int = 0) -> None:
        self.encoding = encoding
        self._decoder = codecs.getincrementaldecoder(encoding)()
        self.replaced = 0
        self.first_line = 0
        self.lines = lines  # line breaks decoded so far

    def decode(self, data: bytes, final: bool = False) -> str:
        if self._decoder.errors == "strict":
            state = self._decoder.getstate()
            try:
                text = self._decoder.decode(data, final)
                self.lines += text.count("\n")
                return text
            except UnicodeDecodeError:
                # The CJK decoders lose their pending bytes on an error: back to before it.
                self._decoder.setstate(state)
                self._decoder.errors = "replace"
        text = self._decoder.decode(data, final)
        found = text.count("\ufffd")
        if found and not self.first_line:
            self.first_line = self.lines + text.count("\n", 0, text.index("\ufffd")) + 1
        self.replaced += found
        self.lines += text.count("\n")
        return text

    def result(self, text: str) -> DecodedText:
        return DecodedText(text, self.encoding, self.replaced, self.first_line)


def decode_text(data: bytes, name: str, truncated: bool = False) -> str:
    """The text of a file's bytes, in the encoding they are in (`text_encoding`), or
    DocumentError for a binary file or one that is no text encoding we know. Invalid
    sequences are an error here: for text that is written back (edits, knowledge pages,
    tables); readers take `decode_text_replacing` and its note.

    `truncated`: the bytes are the start of a longer file, so a character cut at the end
    is not a wrong encoding."""
    decoded = decode_text_replacing(data, name, truncated)
    if decoded.replaced:
        raise not_valid_text(name, decoded.encoding)
    return decoded.text


def decode_text_replacing(data: bytes, name: str, truncated: bool = False) -> DecodedText:
    """The text of a file's bytes, decoded once, invalid sequences replaced by U+FFFD and
    counted (`DecodedText.note`); DocumentError for a binary file or one that is no text
    encoding we know. `truncated`: a character cut at the very end is dropped, not counted."""
    encoding = encoding_or_error(data, name, truncated)
    decoder = ReplacingDecoder(encoding)
    text = decoder.decode(data, final=not truncated)  # a cut character stays pending, unread
    return decoder.result(text)


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
    cut = truncated or len(data) > len(sample)  # a character cut at the sample's end is no error
    if _mostly_utf8(sample, cut):
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


def _mostly_utf8(sample: bytes, cut: bool) -> bool:
    """Whether `sample` is UTF-8 text, allowing a few invalid sequences among many valid
    non-ASCII characters (UTF8_VALID_PER_ERROR); ASCII with stray high bytes is not (those
    are Windows-1252 or the like, for charset-normalizer)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(sample, final=not cut)
    errors = text.count("\ufffd")
    if not errors:
        return True
    valid = sum(1 for ch in text if ord(ch) > 127) - errors
    return valid >= UTF8_VALID_PER_ERROR * errors


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
