"""A model call's answer is bounded while it streams: by size and by duration.

A relay that streamed for 90 s (73 MB) or sent a 150 MB answer had it accepted, held in
memory (1.7 GB) and stored in sessions.db. MODEL_ANSWER_MAX_CHARS and MODEL_CALL_MAX_SECONDS
now stop the call, with a line naming the setting, and nothing of it is stored.
"""

from __future__ import annotations

import subprocess
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
    # A stream without end (a relay that never finishes): nothing but the time limit can end
    # the call, so the test holds however slow the machine is. The subprocess timeout only
    # turns a missing limit into a failure instead of a hang.
    openai_server.add(Reply(text="slow ", chunk_chars=5, chunk_delay=0.05, endless=True))
    env = {**cli_env, "MODEL_CALL_MAX_SECONDS": "2"}
    try:
        result = run_cli(["-p", "take your time"], env, workdir, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail("an endless answer was not stopped by MODEL_CALL_MAX_SECONDS")
    assert result.returncode != 0
    assert "passed MODEL_CALL_MAX_SECONDS=2" in " ".join(result.stderr.split())
    for stored in Path(env["DATA_DIR"]).glob("sessions.db*"):  # nothing of the cut answer kept
        assert b"slow slow" not in stored.read_bytes()
