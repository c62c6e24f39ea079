"""Keys read by the Esc watcher during a turn are kept and reach the next prompt first."""

from __future__ import annotations

import os
import pty
import select
import signal
import termios
import time
from collections.abc import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from generalAgent.cli.escape_key import CTRL_D, EscapeKey, give_to_prompt, take_line_buffer


def wait_until(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_the_watcher_keeps_what_it_reads_in_order_but_a_lone_esc() -> None:
    master, slave = pty.openpty()
    with os.fdopen(slave, "r", closefd=True) as terminal:
        keyboard = EscapeKey(terminal)
        assert keyboard.available
        interrupted: list[int] = []
        previous = signal.signal(signal.SIGINT, lambda *args: interrupted.append(1))
        try:
            with keyboard:
                # Each write is read before the next is sent, as a person's keys are.
                os.write(master, "第二条 message\r".encode())
                wait_until(lambda: keyboard._typed.endswith(b"message\n"), "the message never came")
                os.write(master, b"\x1b")  # a lone Esc: the turn's, not the prompt's
                wait_until(lambda: interrupted, "the lone Esc did not interrupt")
                os.write(master, b"more " + "字".encode()[:2])  # a character in two reads
                first = "more 字".encode()[:-1]
                wait_until(lambda: keyboard._typed.endswith(first), "the first bytes never came")
                os.write(master, "字".encode()[2:])
                wait_until(lambda: keyboard._typed.endswith("字".encode()), "the last byte never came")
        finally:
            signal.signal(signal.SIGINT, previous)
        assert keyboard.take_typed() == "第二条 message\nmore 字"
        assert keyboard.take_typed() == ""
        assert interrupted == [1]
    os.close(master)


def test_a_ctrl_d_typed_in_line_mode_reaches_the_prompt_as_ctrl_d() -> None:
    """Between prompts the terminal is in line mode, which turns Ctrl-D into an empty end of
    line (a NUL once the prompt switches to raw mode); it is read back as Ctrl-D, in order."""
    master, slave = pty.openpty()
    with os.fdopen(slave, "r", closefd=True) as terminal:
        assert termios.tcgetattr(slave)[3] & termios.ICANON
        os.write(master, "/help 帮助\n\x04after".encode())
        assert select.select([terminal], [], [], 30)[0], "the terminal never had a line to read"
        assert take_line_buffer(terminal) == "/help 帮助\n\x04"
        assert take_line_buffer(terminal) == ""  # "after" has no end of line yet: still typed there
        with EscapeKey(terminal) as keyboard:  # a turn takes what its start finds, Ctrl-D too
            os.write(master, b"\x04")  # in cbreak mode Ctrl-D is a key like the others
            # The pty hands bytes to the terminal's reader a moment after the write: an empty
            # input queue right after it proves nothing, so the wait is for the key itself.
            wait_until(lambda: keyboard._typed.endswith(CTRL_D), "the watcher never read the Ctrl-D")
        assert keyboard.take_typed() == "after\x04"
    os.close(master)


def test_keys_given_to_the_prompt_come_first_and_enter_sends() -> None:
    with create_pipe_input() as keys:
        session: PromptSession[str] = PromptSession(input=keys, output=DummyOutput())
        give_to_prompt(session.input, "typed ahead\n")
        give_to_prompt(session.input, "then this\r")
        keys.send_text("after\r")
        assert session.prompt("› ") == "typed ahead"
        assert session.prompt("› ") == "then this"
        assert session.prompt("› ") == "after"
