"""A model call's answer is bounded while it streams: by size and by duration.

A relay that streamed for 90 s (73 MB) or sent a 150 MB answer had it accepted, held in
memory (1.7 GB) and stored in sessions.db. MODEL_ANSWER_MAX_CHARS and MODEL_CALL_MAX_SECONDS
now stop the call, with a line naming the setting, and nothing of it is stored.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.e2e


def test_an_answer_past_the_size_limit_is_stopped_and_not_kept(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(Reply(text="FLOOD " * 50_000, chunk_chars=2_000))  # 300k characters
    env = {**cli_env, "MODEL_ANSWER_MAX_CHARS": "20000"}
    result = run_cli(["-p", "say a lot"], env, workdir)
    assert result.returncode != 0
    said = " ".join(result.stderr.split())
    assert "passed MODEL_ANSWER_MAX_CHARS=20000" in said, said
    for stored in Path(env["DATA_DIR"]).glob("sessions.db*"):  # the database and its WAL
        assert b"FLOOD FLOOD" not in stored.read_bytes()


def test_an_answer_streaming_past_the_time_limit_is_stopped(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(Reply(text="slow " * 2400, chunk_chars=5, chunk_delay=0.05))  # 120 s in all
    env = {**cli_env, "MODEL_CALL_MAX_SECONDS": "2"}
    started = time.monotonic()
    result = run_cli(["-p", "take your time"], env, workdir)
    assert result.returncode != 0
    assert "passed MODEL_CALL_MAX_SECONDS=2" in " ".join(result.stderr.split())
    # Not the 120 s the stream takes; the margin is for a loaded machine's start-up (15 s
    # against a 20 s stream failed once at load 9).
    assert time.monotonic() - started < 60
