"""Tool calls per message are bounded: 10,000 calls in one model message cost 115 s of CPU.

The calls past TOOL_CALLS_MAX_PER_MESSAGE are refused with an error that names the setting
(their arguments are not kept); the first ones run, and the model hears about the rest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e


def test_calls_past_the_limit_are_refused_naming_the_setting(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    calls = [ToolCall("read_file", {"path": f"missing-{n}.txt"}) for n in range(60)]
    openai_server.add(Reply(tool_calls=calls, chunk_chars=400), Reply(text="Done."))
    env = {**cli_env, "TOOL_CALLS_MAX_PER_MESSAGE": "5", "MAX_MESSAGE_HISTORY": "100"}  # no history cut
    result = run_cli(["-p", "what time is it, many times"], env, workdir)
    assert result.returncode == 0, result.stderr
    answers = [m["content"] for m in openai_server.chat_requests[1].messages if m["role"] == "tool"]
    assert len(answers) == 60  # every call is answered, so the history stays valid
    ran = [a for a in answers if "TOOL_CALLS_MAX_PER_MESSAGE" not in a]
    refused = [a for a in answers if "TOOL_CALLS_MAX_PER_MESSAGE" in a]
    assert len(ran) == 5 and len(refused) == 55
    assert "the message has 60 tool calls, more than 5" in refused[0]
