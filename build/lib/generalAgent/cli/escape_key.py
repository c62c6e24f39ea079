"""Esc interrupts a running turn, as Ctrl-C does, in a POSIX terminal.

While a turn runs nothing reads the keyboard, so a watcher thread does: the terminal is
put in cbreak mode (keys arrive one by one, not echoed; Ctrl-C still raises SIGINT), and a
lone Esc sends this process SIGINT, so the turn stops through the one path Ctrl-C takes.
An Esc followed at once by more bytes is a key's escape sequence (an arrow, a function
key) and is ignored. Every other key the watcher reads is kept, in order, and handed to
the next prompt (`take_typed`, `give_to_prompt`) as if it had been typed there: a person
(or a paste) typing the next message the moment an answer appears loses nothing.

The watcher steps aside (the terminal restored, the thread stopped) while the user is
asked something (an approval), and restores the terminal when the turn ends, however it
ends. Where it cannot work (Windows, stdin not a terminal, `-p`) it does nothing and
`available` is False, so the status line offers Ctrl-C alone.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from prompt_toolkit.input import Input

try:
    import termios
    import tty
except ImportError:  # Windows
    termios = None  # type: ignore[assignment]
    tty = None  # type: ignore[assignment]

ESC = 0x1B
CTRL_D = b"\x04"
POLL_SECONDS = 0.1
# An escape sequence's bytes arrive together; a person cannot press a second key this fast.
SEQUENCE_GAP_SECONDS = 0.03
# The longest UTF-8 character: a read may stop inside one; its last bytes follow at once.
MAX_CHARACTER_BYTES = 4


class EscapeKey:
    """Context manager: while inside it, a lone Esc interrupts the turn (see the module)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdin
        self._fd = -1
        self._saved: list[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._typed = bytearray()  # what the watcher read, for the next prompt
        self.available = termios is not None and _is_terminal(self._stream)

    def __enter__(self) -> EscapeKey:
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._halt()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The keyboard as usual (echo, line editing) for a question; watching again after."""
        self._halt()
        try:
            yield
        finally:
            self._start()

    def _start(self) -> None:
        if not self.available or self._thread is not None:
            return
        try:
            self._fd = self._stream.fileno()
            self._saved = termios.tcgetattr(self._fd)
            self._typed += _line_buffer(self._fd)  # typed before the turn began: kept, Ctrl-D too
            tty.setcbreak(self._fd, termios.TCSANOW)
        except (OSError, termios.error):
            self.available = False
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name="escape-key", daemon=True)
        self._thread.start()

    def _halt(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._finish_character()
        if self._saved is not None:
            with contextlib.suppress(OSError, termios.error):  # the terminal went away
                termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)
            self._saved = None

    def _watch(self) -> None:
        while not self._stop.is_set():
            if not _readable(self._fd, POLL_SECONDS):
                continue
            try:
                data = os.read(self._fd, 64)
            except OSError:
                return
            if not data:
                return
            if data.endswith(bytes([ESC])) and not _readable(self._fd, SEQUENCE_GAP_SECONDS):
                self._typed += data[:-1]  # what came before the Esc is still wanted
                os.kill(os.getpid(), signal.SIGINT)
            else:
                self._typed += data

    def _finish_character(self) -> None:
        """Read the rest of a character the last read cut in two (the terminal still in cbreak
        mode, so the bytes are there to read), so the next prompt gets it whole."""
        for _attempt in range(MAX_CHARACTER_BYTES):
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            decoder.decode(bytes(self._typed[-MAX_CHARACTER_BYTES:]))
            if not decoder.getstate()[0] or not _readable(self._fd, SEQUENCE_GAP_SECONDS):
                return
            try:
                self._typed += os.read(self._fd, 1)
            except OSError:
                return

    def take_typed(self) -> str:
        """The keys read while watching (not a lone Esc), in order; forgotten here once taken."""
        text = bytes(self._typed).decode("utf-8", errors="replace")
        self._typed.clear()
        return text


def give_to_prompt(prompt_input: Input, text: str) -> None:
    """Have the next prompt on `prompt_input` read `text` first, key by key, after the keys it
    has already queued (those typed after the last Enter came earlier): prompt_toolkit's
    typeahead, which a prompt consumes before it reads the terminal."""
    if not text:
        return
    from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
    from prompt_toolkit.input.vt100_parser import Vt100Parser

    keys = get_typeahead(prompt_input)
    parser = Vt100Parser(keys.append)
    parser.feed(text)
    parser.flush()
    store_typeahead(prompt_input, keys)


def take_line_buffer(stream: TextIO | None = None) -> str:
    """The keys typed while nothing read the keyboard (between two prompts, as a command ran),
    which the terminal holds in its usual line mode, for the next prompt (see `_line_buffer`)."""
    stream = stream or sys.stdin
    if termios is None or not _is_terminal(stream):
        return ""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return ""
    return _line_buffer(fd).decode("utf-8", errors="replace")


def _line_buffer(fd: int) -> bytes:
    """What the terminal at `fd` holds in line mode, read before leaving that mode.

    In line mode the terminal turns Ctrl-D into the end of an empty line, which a reader that
    switches to raw or cbreak mode afterwards gets as a NUL (Ctrl-Space): a Ctrl-D pressed as a
    command ran was lost and the chat did not end. Read here, each end of input is a Ctrl-D
    again (the first one ends the reading: the keys after it stay in the terminal, after it)."""
    try:
        if not termios.tcgetattr(fd)[3] & termios.ICANON:
            return b""
    except (OSError, termios.error):
        return b""
    typed = bytearray()
    while _readable(fd, 0):
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            typed += CTRL_D
            break
        typed += data
    return bytes(typed)


def _readable(fd: int, timeout: float) -> bool:
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    except (OSError, ValueError):
        return False
    return bool(ready)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
