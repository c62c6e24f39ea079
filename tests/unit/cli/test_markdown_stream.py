"""Streaming an answer: Ctrl-C in the middle of a render never prints a line twice."""

from __future__ import annotations

import io
import re
import signal

import pytest
from rich.console import Console

from generalAgent.cli.render import MarkdownStream


class InterruptingFile(io.StringIO):
    """A terminal that receives Ctrl-C while the first block of lines is being written."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupted = False

    def write(self, text: str) -> int:
        if not self.interrupted and "line 1" in text:
            self.interrupted = True
            # raise(): to this thread, at once; os.kill may land on another thread (xdist's) and
            # be handled a few writes later.
            signal.raise_signal(signal.SIGINT)
        return super().write(text)

    def isatty(self) -> bool:
        return True


def test_ctrl_c_during_a_render_is_raised_after_it_and_no_line_is_printed_twice() -> None:
    out = InterruptingFile()
    stream = MarkdownStream(Console(file=out, width=80, force_terminal=True, color_system=None), live_lines=2)
    text = "".join(f"line {n}\n\n" for n in range(1, 8))
    with pytest.raises(KeyboardInterrupt):
        stream.add(text)  # the first render prints lines 1-5 for good, then Ctrl-C arrives
    assert out.interrupted
    stream.finish()  # what the turn does after Ctrl-C
    printed_for_good = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue().split("\x1b[2K")[0])
    for n in range(1, 6):  # lines 6-7 were the redrawable tail, erased and printed at the end
        assert len(re.findall(rf"line {n}\b", printed_for_good)) == 1, printed_for_good
    assert len(re.findall(r"line 1\b", out.getvalue())) == 1
