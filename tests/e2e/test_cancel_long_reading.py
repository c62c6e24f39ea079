"""Ctrl-C stops the indexing of a large file within a second, in the chat, with progress shown.

A 40 MB text file searched with search_file used to be indexed to its end whatever the user
pressed: the spinner said "Ctrl-C or Esc to interrupt" for more than a minute. The indexer
now checks the call's cancel event between pieces and every few chunks of segmentation,
and the status line says how far it has got.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from generalAgent.config.trust import TrustStore
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt

pytestmark = pytest.mark.e2e

LINE = "the quarter revenue grew while request latency fell after the cache index was rebuilt，营收增长，服务器延迟下降。\n"


def write_large_text(path: Path, megabytes: int) -> None:
    block = LINE * (1024 * 1024 // len(LINE.encode("utf-8")))
    with path.open("w", encoding="utf-8") as out:
        for number in range(megabytes):
            out.write(f"# Section {number}\n\n{block}\n")


def test_ctrl_c_stops_indexing_a_40_mb_file_within_a_second(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    write_large_text(workdir / "big.txt", 40)
    openai_server.add(
        Reply(tool_calls=[ToolCall("search_file", {"file_path": "big.txt", "query": "latency"})]),
        Reply(text="Stopped, as you asked."),
    )
    TrustStore().remember(workdir, True)  # its files are read in place, as the user's own
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("find latency in big.txt")
    child.expect(r"indexing big\.txt: \d+%", timeout=120)  # the indexer is at work, and says so
    pressed = time.monotonic()
    child.sendcontrol("c")
    child.expect("Cancelled", timeout=120)
    stopped = time.monotonic() - pressed
    expect_prompt(child)
    # Well under the minute the whole file takes; a second on a quiet machine, slack for a loaded one.
    assert stopped < 3.0, f"the turn ended {stopped:.1f} s after Ctrl-C"
    child.sendeof()
