"""The last two defects of issue 11, each as a fault case.

Text a UTF-8 request cannot carry (a lone surrogate from the model's own tool call) must
not wedge the session, and a symlink swapped into a path between its check and its
opening must not let a read tool leave the workspace.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.faults.conftest import (
    assert_history_intact,
    assert_no_secret_kept,
    assert_requests_valid,
    stored_messages,
)
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

fault = pytest.mark.fault

# What a model's stream can hold: the JSON escape of half a surrogate pair, which decodes
# to a Python str that UTF-8 cannot encode.
LONE_SURROGATE_ARGUMENTS = '{"path": "outputs/note.txt", "content": "caf\\u00e9 \\ud800 end"}'


@fault(
    area="security",
    fault="The model's tool call carries a lone surrogate (\\ud800) in its arguments; the session goes on for two turns, then is resumed",
    outcome="The write is refused with a clear error and nothing is written; the request that follows carries U+FFFD in its place; the turn and two resumed ones answer, with the same history sent byte for byte.",
    found="every later request of the session failed to encode ('surrogates not allowed') and the session could not be resumed",
)
def test_a_lone_surrogate_in_a_tool_call_does_not_wedge_the_session(
    openai_server: ScriptedOpenAIServer, data_dir: Path, cli_env: dict[str, str], workdir: Path
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("write_file", LONE_SURROGATE_ARGUMENTS)]),
        Reply(text="The write failed."),
    )
    first = run_cli(["-p", "write a note"], cli_env, workdir)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "The write failed.\n"
    assert not list(data_dir.glob("workspaces/*/outputs/note.txt"))

    for turn in ("second", "third"):
        openai_server.add(Reply(text=f"The {turn} answer."))
        later = run_cli(["-p", f"the {turn} question", "--resume"], cli_env, workdir)
        assert later.returncode == 0, later.stderr
        assert later.stdout == f"The {turn} answer.\n"

    requests = openai_server.chat_requests
    assert len(requests) == 4
    answer = next(m for m in requests[1].messages if m["role"] == "tool")
    assert "cannot be written as UTF-8" in answer["content"] and "nothing was written" in answer["content"]
    # The turn's own next request carries the call with U+FFFD where the surrogate was.
    call = next(m for m in requests[1].messages if m.get("tool_calls"))
    assert call["tool_calls"][0]["function"]["arguments"] == (
        '{"path": "outputs/note.txt", "content": "café \ufffd end"}'
    )
    # The same history gives the same bytes each turn: the cached prefix holds.
    assert requests[3].messages[: len(requests[2].messages) - 1] == requests[2].messages[:-1]

    stored = stored_messages(data_dir)
    assert [m.type for m in stored] == ["human", "ai", "tool", "ai"] * 1 + ["human", "ai"] * 2
    assert_history_intact(stored)
    assert_requests_valid(openai_server)
    assert_no_secret_kept(data_dir, first.stdout, first.stderr)
