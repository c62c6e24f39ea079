"""Faults of the model endpoint, through the real CLI and client against the local server.

Each case checks what the user sees, that a retried message is sent once, and that the
conversation stored in the checkpoint is valid afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from tests.e2e.conftest import run_cli
from tests.faults.conftest import assert_history_intact, assert_requests_valid, stored_messages
from tests.support.history import tool_text
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt, plain

fault = pytest.mark.fault


def kinds(messages) -> list[str]:
    return [type(m).__name__.removesuffix("Message").lower() for m in messages]


def retry_in_chat(child: pexpect.spawn, line: str, error: str, answer: str) -> str:
    """Send `line`, see `error` and the /retry hint, then /retry and see `answer`."""
    expect_prompt(child)
    child.sendline(line)
    child.expect(error)
    shown = plain(child.before + child.after)
    child.expect("/retry sends it again")
    shown += plain(child.before)
    expect_prompt(child)
    child.sendline("/retry")
    child.expect(answer)
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    return shown


@fault(
    area="model",
    fault="429 with Retry-After: 1 (retries allowed)",
    outcome="The client waits the second the server asked for, retries once and the answer is printed; the question is stored once.",
)
def test_rate_limit_with_retry_after_is_waited_out(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(Reply(status=429, retry_after=1), Reply(text="After the wait."))
    result = run_cli(["-p", "hello"], {**cli_env, "MODEL_MAX_RETRIES": "2"}, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "After the wait.\n"
    first, second = openai_server.chat_requests
    assert second.received_at - first.received_at >= 0.9
    assert second.body["messages"] == first.body["messages"]
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai"]
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="429 that outlasts the retries",
    outcome="One line: rate limited, wait, then /retry; /retry answers and the question is in the history once.",
)
def test_rate_limit_beyond_retries_then_retry(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    openai_server.add(Reply(status=429, retry_after=0), Reply(text="Now it works."))
    shown = retry_in_chat(spawn_chat(), "Busy endpoint?", "Rate limited", "Now it works")
    assert "Traceback" not in shown
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai"]
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="HTTP 500 from the endpoint",
    outcome="One line naming the failure (500) and /retry; /retry answers; the question is stored once.",
)
def test_server_error_then_retry(openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path) -> None:
    openai_server.add(Reply(status=500, error_message="upstream exploded"), Reply(text="Second time lucky."))
    shown = retry_in_chat(spawn_chat(), "Hello there", r"endpoint failed \(500\)", "Second time lucky")
    assert "upstream exploded" in shown
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai"] and messages[1].content == "Second time lucky."
    assert [m["content"] for m in openai_server.chat_requests[-1].messages[1:]] == ["Hello there"]
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="Connection reset in the middle of a streamed answer",
    found="the user was told the endpoint could not be reached and to check OPENAI_BASE_URL, though it had answered",
    outcome="The streamed part stays on screen, then: the connection broke off, /retry; /retry answers; the broken answer is not stored.",
)
def test_reset_mid_stream_then_retry(openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path) -> None:
    openai_server.add(
        Reply(text="Partial words before the cut. " * 20, cut_after_chunks=8, chunk_delay=0.01),
        Reply(text="The complete answer."),
    )
    shown = retry_in_chat(spawn_chat(), "Tell me a story", "broke off", "The complete answer")
    assert "Partial words" in shown
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai"] and messages[1].content == "The complete answer."
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="Connection reset while tool-call arguments stream",
    outcome="The half-received call is not run (no file written); /retry gets a fresh call that runs; the history has only complete, answered calls.",
)
def test_reset_during_tool_call_arguments(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    content = "draft text " * 30
    openai_server.add(
        Reply(
            tool_calls=[ToolCall("write_file", {"path": "outputs/draft.md", "content": content})],
            cut_after_chunks=6,
        ),
        Reply(tool_calls=[ToolCall("write_file", {"path": "outputs/draft.md", "content": "final"})]),
        Reply(text="Saved outputs/draft.md."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("Write the draft")
    child.expect("broke off")
    expect_prompt(child)
    assert not list(data_dir.glob("workspaces/*/outputs/draft.md"))
    child.sendline("/retry")
    child.expect("Saved outputs/draft.md")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    (written,) = data_dir.glob("workspaces/*/outputs/draft.md")
    assert written.read_text(encoding="utf-8") == "final"
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai", "tool", "ai"]
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="A response that never starts (endpoint accepts and hangs)",
    outcome="After MODEL_TIMEOUT (3 s): the model did not answer within 3 s, /retry or raise MODEL_TIMEOUT; /retry answers.",
)
def test_hanging_response_times_out_then_retry(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(Reply(hang=True), Reply(text="Awake now."))
    # 3 s, not 1: /retry's answer must come within it too, on a busy machine as well.
    child = spawn_chat(env={**cli_env, "MODEL_TIMEOUT": "3"})
    retry_in_chat(child, "Are you there?", "did not answer within 3 s", "Awake now")
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai"]
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="A stream that stalls after its first tokens and never finishes",
    outcome="The first tokens show, then the timeout line after MODEL_TIMEOUT; nothing half-finished is stored; /retry answers.",
)
def test_stalled_stream_times_out_then_retry(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(
        Reply(text="Thinking about it, the", chunk_chars=9, stall_after_chunks=3),
        Reply(text="Done thinking."),
    )
    child = spawn_chat(env={**cli_env, "MODEL_TIMEOUT": "3"})  # /retry's answer must fit in it too
    shown = retry_in_chat(child, "Think hard", "did not answer within 3 s", "Done thinking")
    assert "Thinking about it" in shown
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai"] and messages[1].content == "Done thinking."
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="Invalid JSON in tool-call arguments",
    found="with streaming, the client closed the unterminated string and the call ran with the truncated value (write_file saved half a file)",
    outcome="The call is answered with an error saying the arguments are not valid JSON; the model corrects itself and the file is written once.",
)
def test_invalid_json_arguments_get_an_error_answer(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("write_file", '{"path": "outputs/a.md", "content": "unterminated')]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "outputs/a.md", "content": "fixed"})]),
        Reply(text="Written."),
    )
    result = run_cli(["-p", "write a.md"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Written.\n"
    answer = openai_server.chat_requests[1].messages[-1]
    assert answer["role"] == "tool" and "not valid JSON" in answer["content"]
    (written,) = data_dir.glob("workspaces/*/outputs/a.md")
    assert written.read_text(encoding="utf-8") == "fixed"
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="A call to a tool that does not exist",
    outcome="The call is answered with an error naming the tools that exist; nothing runs; the model answers.",
)
def test_unknown_tool_gets_an_error_answer(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("delete_all_files", {"really": True}), ToolCall("now", {})]),
        Reply(text="I cannot delete files."),
    )
    result = run_cli(["-p", "clean up"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "I cannot delete files.\n"
    answers = [m for m in openai_server.chat_requests[1].messages if m["role"] == "tool"]
    assert "delete_all_files is not a valid tool" in answers[0]["content"]
    assert "UTC" in answers[1]["content"]
    messages = stored_messages(data_dir)
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="A tool result of 5 MB (read_file of an attached 5 MB log with a huge limit)",
    outcome="The result is cut to 60,000 characters with a note saying how to read less; the next request stays small; the cut result is what is stored.",
)
def test_five_megabyte_tool_result_is_cut(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    line = "2026-11-21 12:00:00 INFO " + "x" * 1_000 + "\n"
    (workdir / "big.log").write_text(line * (5_000_000 // len(line) + 1), encoding="utf-8")
    openai_server.add(
        Reply(tool_calls=[ToolCall("read_file", {"path": "uploads/big.log", "limit": 1_000_000})]),
        Reply(text="The log repeats one INFO line."),
    )
    result = run_cli(["-p", "what is in #big.log?"], cli_env, workdir, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The log repeats one INFO line.\n"
    answer = tool_text(openai_server.chat_requests[1].messages[-1]["content"])
    assert 60_000 <= len(answer) < 61_000
    assert "[Output cut: 5,0" in answer and "the first 60,000 shown" in answer
    stored_answer = next(m for m in stored_messages(data_dir) if isinstance(m, ToolMessage))
    assert stored_answer.content == answer
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="A model that never stops calling tools (MAX_LOOPS=3)",
    outcome="After 3 model calls the pending calls are answered 'not run: budget spent' and a last call without tools gives the answer; exit 0.",
)
def test_endless_tool_calls_end_in_finalize(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    zones = ["UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York"]

    def keep_calling(request: RecordedRequest) -> Reply:
        if not request.tool_names:
            return Reply(text="Budget spent: here is what I found.")
        # A different call every time: a budget, not a repetition, ends this turn.
        return Reply(tool_calls=[ToolCall("now", {"timezone": zones[len(request.messages) % len(zones)]})])

    openai_server.responder = keep_calling
    result = run_cli(["-p", "loop forever"], {**cli_env, "MAX_LOOPS": "3"}, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Budget spent: here is what I found.\n"
    requests = openai_server.chat_requests
    assert len(requests) == 4 and requests[-1].tool_names == []
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai", "tool", "ai", "tool", "ai", "tool", "ai"]
    assert "step budget" in messages[-2].content
    assert isinstance(messages[0], HumanMessage) and isinstance(messages[-1], AIMessage)
    assert_history_intact(messages)
    assert_requests_valid(openai_server)


@fault(
    area="model",
    fault="A model that repeats the same tool call with the same arguments",
    outcome="The third identical call is not run; the model is told why and answers without tools; the tool ran twice; exit 0.",
)
def test_a_repeated_identical_call_ends_the_turn_gracefully(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    def repeat(request: RecordedRequest) -> Reply:
        if not request.tool_names:
            return Reply(text="I kept asking the same thing; here is what I have.")
        # Key order and spacing differ: still the same call.
        arguments = '{"timezone": "UTC"}' if len(request.messages) % 2 else '{ "timezone":"UTC" }'
        return Reply(tool_calls=[ToolCall("now", arguments)])

    openai_server.responder = repeat
    result = run_cli(["-p", "what time is it?"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "I kept asking the same thing; here is what I have.\n"
    requests = openai_server.chat_requests
    assert len(requests) == 4 and requests[-1].tool_names == []
    assert "same arguments 3 times" in requests[-1].messages[-1]["content"]
    messages = stored_messages(data_dir)
    assert kinds(messages) == ["human", "ai", "tool", "ai", "tool", "ai", "tool", "ai"]
    ran = [m for m in messages if isinstance(m, ToolMessage) and m.status != "error"]
    assert len(ran) == 2  # the third call was never run
    assert "called with these same arguments 3 times" in messages[-2].content
    assert "now(" in result.stderr and "Not run" in result.stderr  # the user sees why
    assert_history_intact(messages)
    assert_requests_valid(openai_server)
