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


def test_a_single_newline_stays_a_line_break_outside_code() -> None:
    from generalAgent.cli.render import keep_line_breaks

    text = "地址：\n北京市\n海淀区\n\n```\na\nb\n```\nend"
    assert keep_line_breaks(text) == "地址：  \n北京市  \n海淀区\n\n```\na\nb\n```\nend"
    assert keep_line_breaks("one  \ntwo\\\nthree") == "one  \ntwo\\\nthree"


def test_a_link_shows_where_it_goes_and_is_never_a_hidden_terminal_link() -> None:
    # Rendered as an OSC 8 hyperlink, "[https://bank.example.com/login](http://evil.example/phish)"
    # showed the bank's address and opened the other one on a click.
    out = io.StringIO()
    stream = MarkdownStream(Console(file=out, width=200, force_terminal=True, color_system="truecolor"))
    stream.add(
        "See [https://bank.example.com/login](http://evil.example/phish), ![chart](http://evil.example/x.png) "
        "and <http://auto.example/>.\n"
    )
    stream.finish()
    shown = out.getvalue()
    assert "\x1b]8" not in shown, repr(shown)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)
    assert "https://bank.example.com/login (http://evil.example/phish)" in plain, plain
    assert "chart" in plain
    assert "http://auto.example/" in plain
