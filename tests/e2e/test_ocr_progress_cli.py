"""A long scan read on by OCR in the background, as the chat shows it: a line when the
reading begins, its pages in the bottom toolbar while the prompt waits, a line above the
prompt when it ends (the line being typed redrawn after it), and a search then answering
from every page. Real pdfium, the real RapidOCR engine, the real chat in a terminal."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from generalAgent.config.trust import TrustStore
from generalAgent.documents.ocr import ocr_installed
from tests.support.documents import make_long_scan
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import CursorReports, expect_prompt

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not ocr_installed(), reason="the ocr extra is not installed"),
]

PAGES = 8  # one read by the call, then steps of five in the background: 1 → 6 → 8
# Seconds for loading the OCR engine and reading pages: a few on a quiet machine, far more
# under CI's load; every wait is for the line itself, never a sleep.
OCR_DEADLINE = 600


def test_the_chat_shows_a_background_reading_and_when_it_is_done(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path, cli_env: dict[str, str]
) -> None:
    make_long_scan(workdir / "scan.pdf", PAGES, ["Invoice number 4711", "Paid in March."])
    search = ToolCall("search_file", {"file_path": "scan.pdf", "query": "invoice 4711"})
    openai_server.add(
        Reply(tool_calls=[search]),
        Reply(text="Page 1 has invoice 4711."),
        Reply(tool_calls=[search]),
        Reply(text="Every page has it."),
    )
    TrustStore().remember(workdir, True)  # the agent reads the folder's files in place
    env = {name: value for name, value in cli_env.items() if name != "PROMPT_TOOLKIT_NO_CPR"}
    child = spawn_chat(env={**env, "OCR_MAX_PAGES_PER_CALL": "1"})
    child.logfile_read = CursorReports(child)  # the toolbar is drawn where the terminal says
    expect_prompt(child)
    child.sendline("where is invoice 4711 in scan.pdf?")
    child.expect("Page 1 has invoice 4711", timeout=OCR_DEADLINE)  # the engine loads, a page is read
    # After the answer, never inside it: the reading began, with its pages so far.
    child.expect(r"OCR scan\.pdf: 1/8 pages; reading on in the background, searchable as it goes\.")
    expect_prompt(child)
    child.expect("OCR scan.pdf: [1-7]/8 pages")  # the toolbar, while the prompt waits
    child.send("search again")  # typed while the reading goes on, not sent yet
    child.expect(r"OCR of scan\.pdf done: 8 pages read, now searchable\.", timeout=OCR_DEADLINE)
    child.expect("search again")  # the line being typed, redrawn under the news
    child.sendline("")
    child.expect("Every page has it")
    expect_prompt(child)
    first, second = (openai_server.chat_requests[n].messages[-1]["content"] for n in (1, 3))
    assert "1 of its 8 scanned pages read so far" in first
    assert "background" not in second
    assert "English text, 1 chunks)" in first  # the one page the call read
    assert "English text, 8 chunks)" in second  # every page read and indexed: one chunk each
    child.sendeof()
    child.expect(pexpect.EOF)
