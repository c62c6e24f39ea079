"""Bounded OCR (issue 22, item 6): a PDF of thousands of image-only pages, handed to the
agent and searched with search_file (no approval needed), through the real CLI.

Before: OCR had no page limit and could not be cancelled; a 3 MB PDF of 20,000 image
pages meant hours of OCR, and after Ctrl-C the CPU kept burning.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.documents import make_long_scan
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

fault = pytest.mark.fault
PAGES = 3_000
LINES = ["Invoice number 4711", "Quarterly revenue grew by twenty percent."]


def tool_answers(server: ScriptedOpenAIServer) -> list[str]:
    return [m["content"] for r in server.chat_requests for m in r.messages if m["role"] == "tool"]


@fault(
    area="security",
    fault=f"A PDF of {PAGES:,} image-only pages searched with search_file in -p (OCR_MAX_PAGES_PER_CALL=1)",
    outcome="OCR reads one page, the search answers from it, and the tool answer names "
    "OCR_MAX_PAGES_PER_CALL and what was left unread; the process ends within a minute.",
    found="OCR had no page limit: a few MB of image pages meant hours of OCR started without a question.",
)
def test_a_long_scan_searched_by_the_agent_stops_at_the_call_limit(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    make_long_scan(workdir / "scan.pdf", PAGES, LINES)
    openai_server.add(
        Reply(tool_calls=[ToolCall("search_file", {"file_path": "uploads/scan.pdf", "query": "revenue"})]),
        Reply(text="Revenue grew by twenty percent (page 1)."),
    )
    started = time.monotonic()
    result = run_cli(
        ["-p", "find the invoice number in #scan.pdf"],
        {**cli_env, "OCR_MAX_PAGES_PER_CALL": "1"},
        workdir,
        timeout=300,
    )
    assert time.monotonic() - started < 240  # about 30 s idle; hours without the limit
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Revenue grew by twenty percent (page 1)."
    [answer] = tool_answers(openai_server)
    assert "revenue grew by twenty percent" in answer and "page 1" in answer
    assert "OCR_MAX_PAGES_PER_CALL=1" in answer
    assert f"{PAGES - 1:,} pages (2–{PAGES:,}) were not read" in answer


def ocr_engine_of(pid: int) -> bool:
    """The OCR engine's process (documents/ocr_worker.py) runs as a child of `pid`."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                command = (entry / "cmdline").read_bytes()
            except (OSError, ValueError, IndexError):
                continue
            if parent == pid and b"ocr_worker.py" in command:
                return True
    return False


@fault(
    area="security",
    fault=f"Ctrl-C while search_file reads a PDF of {PAGES:,} image-only pages by OCR (-p, default limits)",
    outcome="The OCR stops in the middle of its page and the process exits within a few seconds; "
    "the stored history answers the call as cancelled.",
    found="After Ctrl-C the OCR kept running (hours of CPU) and the process did not end.",
)
def test_ctrl_c_stops_the_ocr_and_the_process_exits(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    make_long_scan(workdir / "scan.pdf", PAGES, LINES, dpi=300)
    openai_server.add(
        Reply(tool_calls=[ToolCall("search_file", {"file_path": "uploads/scan.pdf", "query": "4711"})]),
        Reply(text="never asked"),
    )
    child = subprocess.Popen(
        [sys.executable, "-m", "generalAgent", "-p", "find the invoice number in #scan.pdf"],
        env=cli_env,
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(openai_server.chat_requests) < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert openai_server.chat_requests, "the model was never asked"
        # The call has started once the OCR engine's process runs: the pages are being read.
        deadline = time.monotonic() + 120
        while not ocr_engine_of(child.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ocr_engine_of(child.pid), "the OCR never started"
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        child.wait(timeout=120)
        exited_after = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
    _, stderr = child.communicate()
    # Before, OCR went on for hours; the page in progress is abandoned (the engine's process
    # is killed; test_ocr_limits.py times that), so only the repair and the exit remain.
    assert exited_after < 30, f"exited {exited_after:.1f} s after Ctrl-C"  # 8 s idle; hours unstopped
    assert "Traceback" not in stderr
    assert len(openai_server.chat_requests) == 1  # nothing went on after the cancel
    assert json.dumps(tool_answers(openai_server)) == "[]"
