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
