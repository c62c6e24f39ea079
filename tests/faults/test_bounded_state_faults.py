"""Bounded state: what a hostile model sends cannot grow the session, end the turn, leak a
URL's credentials or land in files other accounts can read.

Each case runs the real CLI against the test server, which sends what a hostile or
broken model would: an argument of 30 MB, arguments nested 600 deep, URLs with secrets
in their query and user info.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.faults.conftest import assert_history_intact, assert_requests_valid, sessions_db, stored_messages
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import ask, expect_prompt

fault = pytest.mark.fault


def tool_answers(server: ScriptedOpenAIServer) -> list[str]:
    return [m["content"] for m in server.chat_requests[-1].messages if m["role"] == "tool"]


@fault(
    area="security",
    fault="The model sends write_file with a 1.5 MB argument (over TOOL_ARGUMENT_MAX_CHARS, under MODEL_ANSWER_MAX_CHARS), then the session goes on for another turn",
    outcome="The call is refused with an error naming TOOL_ARGUMENT_MAX_CHARS and the argument is not kept: the next turn's request and sessions.db stay under 1 MB; the history is intact.",
    found="the argument stayed in the session and was re-sent every turn (7.9M tokens a request, a 63 MB sessions.db)",
)
def test_a_huge_tool_argument_is_refused_and_never_stored(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    # Past MODEL_ANSWER_MAX_CHARS (2M) the whole answer is stopped instead (test_answer_limits.py).
    huge = "A" * 1_500_000
    call = ToolCall("write_file", {"path": "outputs/big.txt", "content": huge})
    openai_server.add(
        Reply(tool_calls=[call], chunk_chars=len(huge) + 100),  # one piece: the client parses it once
        Reply(text="It was refused."),
        Reply(text="Next turn."),
    )
    first = run_cli(["-p", "write a big file"], cli_env, workdir, timeout=180)
    assert first.returncode == 0, first.stderr
    answer = tool_answers(openai_server)[-1]
    assert answer.startswith("Error: write_file refused") and "TOOL_ARGUMENT_MAX_CHARS" in answer
    second = run_cli(["-p", "go on", "--resume"], cli_env, workdir, timeout=120)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "Next turn.\n"
    assert len(json.dumps(openai_server.chat_requests[-1].body)) < 1_000_000
    assert sessions_db(data_dir).stat().st_size < 1_000_000
    assert not list(data_dir.glob("workspaces/*/outputs/big.txt"))
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="security",
    fault="The model sends write_file with an extra argument nested 600 levels deep",
    outcome="The call is refused with an error naming TOOL_ARGUMENT_MAX_DEPTH; the turn goes on to the model's answer (exit 0); nothing is written.",
    found="the turn ended with RecursionError (the request copy was built by walking the arguments recursively)",
)
def test_deeply_nested_arguments_are_refused_with_a_clear_error(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    nested: object = "leaf"
    for _ in range(600):
        nested = {"a": nested}
    raw = json.dumps({"path": "outputs/deep.txt", "content": "x", "extra": nested})
    openai_server.add(Reply(tool_calls=[ToolCall("write_file", raw)]), Reply(text="Understood."))
    result = run_cli(["-p", "write it"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Understood.\n" and "RecursionError" not in result.stderr
    answer = tool_answers(openai_server)[-1]
    assert answer.startswith("Error: write_file refused") and "TOOL_ARGUMENT_MAX_DEPTH" in answer
    assert not list(data_dir.glob("workspaces/*/outputs/deep.txt"))
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


SECRETS = ("AUTHSECRET99", "SIGSECRET99", "TOKSECRET99", "PASSWORD99")


@fault(
    area="security",
    fault="fetch_web URLs with secrets in ?auth=, ?sig=, ?access_token= and user:password@, with LOG_LEVEL=DEBUG",
    outcome="The tool lines on screen and the log show *** in their place; no secret value is on screen or in the log.",
    found="masking knew only key/token/secret/password-style names: ?auth= and similar values were shown and logged",
)
def test_credentials_in_urls_are_masked_on_screen_and_in_the_log(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall(
                    "fetch_web", {"url": "https://api.example.com/v1?auth=AUTHSECRET99&sig=SIGSECRET99"}
                ),
                ToolCall(
                    "fetch_web", {"url": "https://me:PASSWORD99@files.example.com/x#access_token=TOKSECRET99"}
                ),
            ]
        ),
        Reply(text="Refused."),
    )
    result = run_cli(["-p", "fetch them"], {**cli_env, "LOG_LEVEL": "DEBUG"}, workdir)
    assert result.returncode == 3, result.stderr  # answered, but a tool it needed was refused
    assert "fetch_web" in result.stderr and "***" in result.stderr
    logs = "".join(p.read_text(errors="replace") for p in data_dir.rglob("*.log"))
    for secret in SECRETS:
        assert secret not in result.stderr and secret not in result.stdout
        assert secret not in logs


@fault(
    area="security",
    fault="A chat with an attached file, typed input and a log, under the usual umask 022",
    outcome="sessions.db, indexes.db, the input history, the log and the attached copy are 0600; the folders created inside the data folder (logs, workspaces, uploads) 0700.",
    found="sessions.db, input history, logs and uploads were created world-readable",
)
def test_data_files_and_folders_are_private(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path, data_dir: Path, cli_env: dict[str, str]
) -> None:
    (workdir / "notes.md").write_text("# Notes\n\nprivate\n", encoding="utf-8")
    # A knowledge search makes indexes.db (the knowledge base is opened on first use).
    openai_server.add(
        Reply(tool_calls=[ToolCall("search_knowledge", {"query": "notes"})]), Reply(text="Read.")
    )
    child = spawn_chat(env={**cli_env, "LOG_LEVEL": "DEBUG"})  # so that the log is written
    expect_prompt(child)
    ask(child, "Summarise #notes.md", "Read")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    files = [
        sessions_db(data_dir),
        data_dir / "indexes.db",
        data_dir / "input_history",
        data_dir / "logs" / "generalagent.log",
        *data_dir.glob("workspaces/*/uploads/notes.md"),
    ]
    assert len(files) == 5
    # The data folder exists already (the test made it): the folders created inside are ours.
    folders = [
        data_dir / "logs",
        data_dir / "workspaces",
        *data_dir.glob("workspaces/*"),
        *data_dir.glob("workspaces/*/uploads"),
    ]
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path} is {oct(path.stat().st_mode)}"
    for path in folders:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, f"{path} is {oct(path.stat().st_mode)}"
    for path in data_dir.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert not path.stat().st_mode & 0o077, f"{path} is readable by others"
