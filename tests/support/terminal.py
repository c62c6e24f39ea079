"""Reading the chat in a real terminal (pexpect): the prompt, ANSI-free text, one question."""

from __future__ import annotations

import re

import pexpect

PROMPT = "›"
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\r")


def plain(text: str) -> str:
    return ANSI.sub("", text)


def expect_prompt(child: pexpect.spawn) -> str:
    child.expect(PROMPT)
    return plain(child.before)


def ask(child: pexpect.spawn, line: str, until: str) -> str:
    """Send a line and read up to `until` (the prompt is redrawn with the typed line first)."""
    child.sendline(line)
    child.expect(until)
    return plain(child.before + child.after)


class CursorReports:
    """Answers the chat's cursor-position requests (CPR, ESC [6n) as a real terminal does,
    while the test reads the child. Tests normally run with PROMPT_TOOLKIT_NO_CPR=1;
    prompt_toolkit draws its bottom toolbar only when the terminal reports the cursor.
    Install with `child.logfile_read = CursorReports(child)`; it answers "row 1, column 1"
    (the whole screen below the cursor)."""

    REQUEST = "\x1b[6n"

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.tail = ""  # a request split between two reads

    def write(self, data: str) -> None:
        seen = self.tail + data
        for _request in range(seen.count(self.REQUEST)):
            self.child.send("\x1b[1;1R")
        self.tail = seen[-(len(self.REQUEST) - 1) :]
        if self.REQUEST in self.tail:  # already answered
            self.tail = ""

    def flush(self) -> None:
        pass
