"""Esc interrupts a running turn, as Ctrl-C does, in a POSIX terminal.

While a turn runs nothing reads the keyboard, so a watcher thread does: the terminal is
put in cbreak mode (keys arrive one by one, not echoed; Ctrl-C still raises SIGINT), and a
lone Esc sends this process SIGINT, so the turn stops through the one path Ctrl-C takes.
An Esc followed at once by more bytes is a key's escape sequence (an arrow, a function
key) and is ignored. Keys typed during a turn are not kept for the next prompt.

The watcher steps aside (the terminal restored, the thread stopped) while the user is
asked something (an approval), and restores the terminal when the turn ends, however it
ends. Where it cannot work (Windows, stdin not a terminal, `-p`) it does nothing and
`available` is False, so the status line offers Ctrl-C alone.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

try:
    import termios
    import tty
except ImportError:  # Windows
    termios = None  # type: ignore[assignment]
    tty = None  # type: ignore[assignment]

ESC = 0x1B
POLL_SECONDS = 0.1
# An escape sequence's bytes arrive together; a person cannot press a second key this fast.
SEQUENCE_GAP_SECONDS = 0.03


class EscapeKey:
    """Context manager: while inside it, a lone Esc interrupts the turn (see the module)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdin
        self._fd = -1
        self._saved: list[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
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
                os.kill(os.getpid(), signal.SIGINT)


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
