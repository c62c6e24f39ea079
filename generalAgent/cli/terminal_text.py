"""Text from the model, a tool or a file, made safe to show in a terminal.

Such text may carry control sequences that the terminal would obey: move the cursor and
erase a line (so an approval question shows a harmless command while another runs), set
the window title, write the clipboard (OSC 52), or reorder what is read (bidi overrides,
the "Trojan Source" trick). Rich escapes its own markup but passes these through.

`terminal_safe` removes them: ESC sequences (CSI, OSC, DCS, SOS, PM, APC, and the short
ones), their 8-bit C1 forms, every other C0/C1 control but newline and tab, carriage
returns, and the bidi embedding, override and isolate characters. `visible_controls`
shows them instead, as ␛ and U+XXXX marks, where the user must see exactly what a string
holds (the approval question). `terminal_console` builds a rich Console that passes every
string it renders through `terminal_safe`, as a net under the explicit calls.

Such text may also hold lone surrogates (U+D800..U+DFFF: a model's `"\\ud83d"`, a file
decoded leniently) that no terminal encoding can write: one of them ended the chat with
UnicodeEncodeError. Both functions show each as U+FFFD, and the console's output is made
encodable once more just before it is written, whatever renderable produced it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

# Terminated string sequences first (OSC ends with BEL or ST; DCS/SOS/PM/APC with ST), so
# their payload goes with them; an unterminated one loses only its introducer below.
_STRING_SEQUENCE = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)"
)
# CSI (ESC [ or 8-bit 0x9B, parameters, intermediates, a final byte), then any other ESC
# sequence (ESC, intermediates, a final byte: charset selection, ESC c reset, ...).
_SHORT_SEQUENCE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|\x1b[ -/]*[0-~]?")
# What is left: C0 controls but tab and newline, DEL, C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Bidi embeddings, overrides and isolates: they reorder the characters after them.
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
# Half a UTF-16 pair: no encoding can write it (graph/encodable_text.py does the same for requests).
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def encodable(text: str) -> str:
    """`text` with every lone surrogate shown as U+FFFD; `text` itself when there is none."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def terminal_safe(text: str) -> str:
    """`text` without anything a terminal would act on; newlines and tabs stay."""
    text = encodable(text).replace("\r\n", "\n")
    text = _STRING_SEQUENCE.sub("", text)
    text = _SHORT_SEQUENCE.sub("", text)
    text = _CONTROL.sub("", text)
    return _BIDI.sub("", text)


def visible_controls(text: str) -> str:
    """`text` with every control and bidi character shown as a visible mark (␛, ␍, <U+202E>)."""
    return _BIDI.sub(_mark, _CONTROL.sub(_mark, encodable(text)))


def typed_answer(text: str) -> str:
    """An answer typed at a question, as the question compares it: NFKC-folded (the `ｙ` of a
    Chinese input method is `y`), trimmed and lower-case."""
    return unicodedata.normalize("NFKC", text).strip().lower()


def one_line(text: str) -> str:
    """`text` as `visible_controls` shows it, on one line: a newline shown as ␤, a tab as a
    space. For a file name, which a folder's author chooses: `a\n✓ Trusted` must not print
    a line of its own."""
    return visible_controls(text.replace("\n", "\u2424").replace("\t", " "))


def _mark(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ … ␟ (␛ for ESC)
    if code == 0x7F:
        return "␡"
    return f"<U+{code:04X}>"


class _SafeConsole(Console):
    """A Console that renders every string through `terminal_safe` (markup still applies),
    and writes nothing its file could fail to encode."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_safe(text), **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # The net under everything drawn (Text objects, Markdown, live status lines): rich
        # has no public hook between rendering and writing.
        return encodable(super()._render_buffer(buffer))


def terminal_console(**kwargs: Any) -> Console:
    """A rich Console for the CLI's output, with `terminal_safe` applied to every string."""
    return _SafeConsole(**kwargs)


def console_lines(console: Console) -> Callable[..., None]:
    """A session's `say` (agent/session.py) on a terminal: the program's lines in yellow,
    quoted text (a hook's stderr) made safe to show."""

    def say(line: str, *, quoted: bool = False) -> None:
        if quoted:
            console.print(Text(terminal_safe(line)))
        else:
            console.print("[yellow]" + escape(line) + "[/]")

    return say
