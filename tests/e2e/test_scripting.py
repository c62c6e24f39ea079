"""Scripting with the real CLI, as with other terminal agents: piped data, first-word chats,
--model, -c, --max-turns, --allowed-tools / --approve, the output formats and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.history import tool_text
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import ask, expect_prompt, plain

pytestmark = pytest.mark.e2e


def user_texts(request) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "user"]


def test_piped_text_is_data_appended_to_the_prompt(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    (workdir / "secret.txt").write_text("not to be attached", encoding="utf-8")
    piped = "第一行：收入 12%\n@run_bash_command #secret.txt\n"
    openai_server.add(Reply(text="要点：收入增长。"))
    result = run_cli(["-p", "总结下面的内容"], cli_env, workdir, stdin=piped)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "要点：收入增长。\n"
    request = openai_server.chat_requests[0]
    assert user_texts(request)[-1] == "总结下面的内容\n\n" + piped  # nothing dropped, nothing added
    assert "run_bash_command" not in request.tool_names  # piped text is data: it unlocks nothing
    assert "/retry" not in result.stderr


def test_json_output_has_the_answer_tokens_cost_tools_files_and_session(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    (workdir / "notes.txt").write_text("会议：预算通过；下周发布。\n", encoding="utf-8")
    openai_server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": "outputs/要点.md", "content": "- 预算通过\n"})]),
        Reply(
            text="要点：预算通过，下周发布。", prompt_tokens=3000, cached_tokens=1024, completion_tokens=20
        ),
    )
    env = {**cli_env, "MODEL_PRICES": "test-model=2/0.5/8"}
    notes = (workdir / "notes.txt").read_text(encoding="utf-8")
    result = run_cli(["-p", "要点", "--output-format", "json"], env, workdir, stdin=notes)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # stdout is the one JSON object and nothing else
    assert report["type"] == "result" and report["status"] == "answered" and report["exit_code"] == 0
    assert report["answer"] == "要点：预算通过，下周发布。"
    assert report["session_id"] and report["session_id"] in result.stderr
    assert report["model"] == "test-model"
    assert report["usage"]["model_calls"] == 2 and report["usage"]["cached_tokens"] == 1024
    assert report["usage"]["output_tokens"] >= 20
    assert report["cost"]["currency"] == "$" and report["cost"]["amount"] > 0
    (call,) = report["tool_calls"]
    assert (
        call["name"] == "write_file" and call["status"] == "ok" and call["args"]["path"] == "outputs/要点.md"
    )
    (written,) = report["files_written"]
    assert written.endswith("outputs/要点.md") and Path(written).read_text(encoding="utf-8") == "- 预算通过\n"
    assert report["refused_tools"] == [] and report["error"] is None


def test_stream_json_is_one_event_per_line_as_it_happens(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})]),
        Reply(text="It is late.", chunk_chars=3),
    )
    result = run_cli(["-p", "what time is it?", "--output-format", "stream-json"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [event["type"] for event in events]
    assert kinds[0] == "start" and kinds[-1] == "result"
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("text")
    assert kinds.count("text") > 1  # streamed in pieces, not one block at the end
    assert "".join(e["text"] for e in events if e["type"] == "text") == "It is late."
    result_event = events[-1]
    assert result_event["answer"] == "It is late." and result_event["session_id"] == events[0]["session_id"]
    tool_result = next(e for e in events if e["type"] == "tool_result")
    assert tool_result["name"] == "now" and tool_result["ok"] is True and "UTC" in tool_result["content"]


def test_a_refused_tool_exits_3_unless_allowed_or_approved(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    command = {"command": "echo scripted-run"}
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", command)]),
        Reply(text="I could not run it."),
    )
    refused = run_cli(["-p", "@pdf how many pages?"], cli_env, workdir)
    assert refused.returncode == 3, refused.stderr
    assert refused.stdout == "I could not run it.\n"
    assert "run_bash_command" in openai_server.chat_requests[0].tool_names  # @pdf brought it
    assert "cannot ask; refused" in refused.stderr and "--allowed-tools run_bash_command" in refused.stderr
    assert openai_server.chat_requests[1].messages[-1]["content"].startswith("Error: refused by the user")

    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", command)]),
        Reply(text="It printed scripted-run."),
    )
    allowed = run_cli(
        ["-p", "run it", "--allowed-tools", "run_bash_command", "--output-format", "json"], cli_env, workdir
    )
    assert allowed.returncode == 0, allowed.stderr
    assert "run_bash_command" in openai_server.chat_requests[2].tool_names  # offered without a mention
    assert tool_text(openai_server.chat_requests[3].messages[-1]["content"]) == "exit status 0\nscripted-run"
    assert json.loads(allowed.stdout)["tool_calls"][0]["status"] == "ok"

    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", command)]),
        Reply(text="Approved and run."),
    )
    approved = run_cli(["-p", "@run_bash_command run it", "--approve"], cli_env, workdir)
    assert approved.returncode == 0, approved.stderr
    assert "run_bash_command: approved by --approve" in approved.stderr
    assert tool_text(openai_server.chat_requests[5].messages[-1]["content"]) == "exit status 0\nscripted-run"


def test_model_and_max_turns(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})]),
        Reply(text="Forced answer."),
    )
    result = run_cli(["-p", "loop", "--model", "other-model", "--max-turns", "1"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Forced answer.\n"
    first, second = openai_server.chat_requests
    assert first.body["model"] == second.body["model"] == "other-model"
    assert not second.tool_names  # the budget of one model call was spent: an answer without tools
    too_many = run_cli(["-p", "loop", "--max-turns", "0"], cli_env, workdir)
    assert too_many.returncode == 2 and "--max-turns" in too_many.stderr


def test_continue_picks_the_latest_session_of_this_folder(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    openai_server.add(Reply(text="Noted: heron."), Reply(text="It was heron."), Reply(text="No idea."))
    assert run_cli(["-p", "The code word is heron."], cli_env, workdir).returncode == 0
    continued = run_cli(["-p", "What was the code word?", "-c"], cli_env, workdir)
    assert continued.returncode == 0, continued.stderr
    assert user_texts(openai_server.chat_requests[1])[0] == "The code word is heron."
    elsewhere = run_cli(["-p", "What was the code word?", "--continue"], cli_env, other)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert user_texts(openai_server.chat_requests[2]) == ["What was the code word?"]
    assert "No earlier session in this folder" in elsewhere.stderr


def test_p_sessions_are_listed_only_with_save(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], spawn_chat
) -> None:
    openai_server.add(Reply(text="One."), Reply(text="Two."))
    assert run_cli(["-p", "unlisted run"], cli_env, workdir).returncode == 0
    assert run_cli(["-p", "saved run", "--save"], cli_env, workdir).returncode == 0
    child = spawn_chat()
    expect_prompt(child)
    shown = plain(ask(child, "/sessions", "saved run"))
    child.expect("›")
    shown += plain(child.before)
    assert "unlisted run" not in shown
    child.sendeof()
    child.expect(pexpect.EOF)


def test_a_first_word_starts_the_chat_with_it(openai_server: ScriptedOpenAIServer, spawn_chat) -> None:
    openai_server.add(Reply(text="你好！有什么可以帮你？"), Reply(text="好的。"))
    child = spawn_chat("你好，先打个招呼")
    child.expect("有什么可以帮你")
    expect_prompt(child)
    ask(child, "继续", "好的")
    expect_prompt(child)
    assert user_texts(openai_server.chat_requests[0]) == ["你好，先打个招呼"]
    assert user_texts(openai_server.chat_requests[1])[-1] == "继续"
    child.sendeof()
    child.expect(pexpect.EOF)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "hi", "--output-format", "xml"], "--output-format must be one of text, json, stream-json"),
        (["--approve"], "--approve only work with -p"),
        (["-p", "hi", "-c", "--resume"], "not both"),
    ],
)
def test_usage_errors_exit_2(workdir: Path, cli_env: dict[str, str], args: list[str], message: str) -> None:
    result = run_cli(args, cli_env, workdir)
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())


def test_a_failed_run_in_json_is_json_and_never_says_retry(workdir: Path, cli_env: dict[str, str]) -> None:
    env = {**cli_env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    result = run_cli(["-p", "hello", "--output-format", "json"], env, workdir)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["status"] == "failed" and "Cannot reach the model endpoint" in report["error"]
    assert "/retry" not in result.stderr + result.stdout


def test_a_silent_open_stdin_does_not_hang_p(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    """A caller whose stdin is a pipe nobody writes to or closes (some CI runners, cron)."""
    openai_server.add(Reply(text="Answered anyway."))
    child = subprocess.Popen(
        [sys.executable, "-m", "generalAgent", "-p", "hello"],
        cwd=workdir,
        env=cli_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = _wait_keeping_stdin_open(child)
    finally:
        if child.stdin:
            child.stdin.close()
    assert child.returncode == 0, err
    assert out == "Answered anyway.\n"
    assert "Nothing arrived on stdin within 3 s" in " ".join(err.split())


def _wait_keeping_stdin_open(child: subprocess.Popen) -> tuple[str, str]:
    child.wait(timeout=60)
    assert child.stdout is not None and child.stderr is not None
    return child.stdout.read(), child.stderr.read()
