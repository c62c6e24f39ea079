"""Keys read by the Esc watcher during a turn are kept and reach the next prompt first."""

from __future__ import annotations

import os
import pty
import signal
import time

from prompt_toolkit import PromptSession
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from generalAgent.cli.escape_key import EscapeKey, give_to_prompt


def test_the_watcher_keeps_what_it_reads_in_order_but_a_lone_esc() -> None:
    master, slave = pty.openpty()
    with os.fdopen(slave, "r", closefd=True) as terminal:
        keyboard = EscapeKey(terminal)
        assert keyboard.available
        interrupted: list[int] = []
        previous = signal.signal(signal.SIGINT, lambda *args: interrupted.append(1))
        try:
            with keyboard:
                os.write(master, "第二条 message\r".encode())
                time.sleep(0.4)
                os.write(master, b"\x1b")  # a lone Esc: the turn's, not the prompt's
                time.sleep(0.4)
                os.write(master, b"more " + "字".encode()[:2])  # a character in two reads
                time.sleep(0.3)
                os.write(master, "字".encode()[2:])
                time.sleep(0.3)
        finally:
            signal.signal(signal.SIGINT, previous)
        assert keyboard.take_typed() == "第二条 message\nmore 字"
        assert keyboard.take_typed() == ""
        assert interrupted == [1]
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
