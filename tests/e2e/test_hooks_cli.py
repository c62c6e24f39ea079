"""Hooks through the real chat (issue 28): settings.json in the user-level config folder, the
commands real processes, the model the real ChatOpenAI client against the local server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.history import tool_text
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import ask, expect_prompt

pytestmark = pytest.mark.e2e

GUARD = """\
import json, re, sys
event = json.load(sys.stdin)
if re.search(r"\\brm\\s+-\\w*r\\w*f|\\brm\\s+-\\w*f\\w*r", event["tool_input"].get("command", "")):
    print("Blocked by policy: no rm -rf. Delete the files one by one.", file=sys.stderr)
    sys.exit(2)
"""


def write_hooks(env: dict[str, str], hooks: dict) -> Path:
    folder = Path(env["GENERALAGENT_CONFIG_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    return folder


def command(*parts: str) -> dict:
    return {"type": "command", "command": " ".join(parts)}


def test_a_pretooluse_hook_blocks_rm_rf_and_the_model_reads_why(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], tmp_path: Path
) -> None:
    guard = tmp_path / "guard.py"
    guard.write_text(GUARD)
    write_hooks(
        cli_env,
        {"PreToolUse": [{"matcher": "run_bash_command", "hooks": [command(sys.executable, str(guard))]}]},
    )
    victim = tmp_path / "victim"
    (victim / "keep").mkdir(parents=True)
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": f"rm -rf {victim}"})]),
        Reply(text="The hook refused rm -rf; I will not retry it."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command clean up")
    child.expect(r"\[a\]lways")  # approval stays with the user, and comes first
    child.sendline("y")
    child.expect("The hook refused rm -rf")
    expect_prompt(child)
    answer = openai_server.chat_requests[1].messages[-1]
    assert answer["role"] == "tool"
    assert tool_text(answer["content"]) == "Blocked by policy: no rm -rf. Delete the files one by one."
    assert (victim / "keep").is_dir()  # the command never ran
    child.sendeof()
    child.expect(pexpect.EOF)


def test_a_hook_that_times_out_costs_one_notice_and_the_turn_goes_on(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    write_hooks(
        cli_env,
        {
            "PreToolUse": [
                {"matcher": "now", "hooks": [{"type": "command", "command": "sleep 30", "timeout": 1}]}
            ],
            # Every call, logged to a file: the tool's name and what it answered.
            "PostToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        command(
                            sys.executable,
                            "-c",
                            '"import json,sys; e=json.load(sys.stdin); '
                            f"open({str(log)!r},'a').write(e['tool_name']+' '+str(bool(e['tool_response']))+'\\\\n')\"",
                        )
                    ],
                }
            ],
        },
    )
    openai_server.add(
        Reply(tool_calls=[ToolCall("now", {})]), Reply(text="It is now, despite the slow hook.")
    )
    child = spawn_chat()
    expect_prompt(child)
    shown = ask(child, "what time is it?", "despite the slow hook")
    assert "PreToolUse hook stopped after 1 s (its timeout): sleep 30" in " ".join(shown.split())
    expect_prompt(child)
    answer = openai_server.chat_requests[1].messages[-1]
    assert answer["role"] == "tool" and "UTC" in tool_text(answer["content"])  # the call ran
    assert log.read_text().splitlines() == ["now True"]
    listing = ask(child, "/hooks", "PostToolUse")
    assert "PreToolUse" in listing and "sleep 30" in listing and "1 s" in listing
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_a_userpromptsubmit_hook_blocks_the_message_before_it_is_sent(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str]
) -> None:
    write_hooks(
        cli_env,
        {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        command(
                            "grep -q 'password' && { echo 'This message has a password in it; not sent.' >&2; exit 2; }",
                            "|| exit 0",
                        )
                    ]
                }
            ]
        },
    )
    openai_server.add(Reply(text="Fine."))
    child = spawn_chat()
    expect_prompt(child)
    shown = ask(child, "my password is hunter2", "not sent")
    assert "UserPromptSubmit hook blocked this message" in " ".join(shown.split())
    expect_prompt(child)
    assert openai_server.chat_requests == []
    ask(child, "hello", "Fine")
    expect_prompt(child)
    assert len(openai_server.chat_requests) == 1
    child.sendeof()
    child.expect(pexpect.EOF)


def test_p_gets_the_pretooluse_hooks_too(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path
) -> None:
    """PreToolUse runs in the graph's tools step, so a client other than the chat gets it."""
    write_hooks(
        cli_env,
        {
            "PreToolUse": [
                {"matcher": "now|read_file", "hooks": [command("echo 'no clocks today' >&2; exit 2")]}
            ]
        },
    )
    openai_server.add(Reply(tool_calls=[ToolCall("now", {})]), Reply(text="The hook said no."))
    result = run_cli(["-p", "what time is it?"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The hook said no."
    answer = openai_server.chat_requests[1].messages[-1]
    assert answer["role"] == "tool" and tool_text(answer["content"]) == "no clocks today"


def recorder(log: Path) -> dict:
    """A hook that appends its event's name and the fields that tell the events apart."""
    script = (
        "import json,sys; e=json.load(sys.stdin); "
        f"open({str(log)!r},'a').write(' '.join([e['hook_event_name'], e['session_id'], "
        "str(e.get('source', e.get('prompt', e.get('stop_hook_active', ''))))])+chr(10))"
    )
    return {"type": "command", "command": f'{sys.executable} -c "{script}"'}


def test_p_runs_the_session_prompt_and_stop_hooks_as_the_chat_does(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "events.log"
    write_hooks(
        cli_env,
        {event: [{"hooks": [recorder(log)]}] for event in ("SessionStart", "UserPromptSubmit", "Stop")},
    )
    openai_server.add(Reply(text="First."), Reply(text="Second."))
    first = run_cli(["-p", "hello there", "--output-format", "json"], cli_env, workdir)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    assert log.read_text().splitlines() == [
        f"SessionStart {session_id} startup",
        f"UserPromptSubmit {session_id} hello there",
        f"Stop {session_id} False",
    ]
    log.unlink()
    second = run_cli(["-p", "and again", "--resume", session_id], cli_env, workdir)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "Second.\n"
    assert log.read_text().splitlines() == [
        f"SessionStart {session_id} resume",
        f"UserPromptSubmit {session_id} and again",
        f"Stop {session_id} False",
    ]


def test_p_stops_when_a_userpromptsubmit_hook_blocks_and_says_why(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path
) -> None:
    write_hooks(
        cli_env,
        {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        command("grep -q password && { echo 'No passwords, please.' >&2; exit 2; } || exit 0")
                    ]
                }
            ],
            "Stop": [{"hooks": [command("echo 'never reached' >&2; exit 2")]}],
        },
    )
    openai_server.add(Reply(text="Never sent."))
    result = run_cli(["-p", "my password is hunter2", "--output-format", "json"], cli_env, workdir)
    assert result.returncode == 3, result.stderr
    assert openai_server.chat_requests == []  # nothing left the machine
    shown = " ".join(result.stderr.split())
    assert "UserPromptSubmit hook blocked this message" in shown and "No passwords, please." in shown
    assert "never reached" not in result.stderr  # no turn ran, so no Stop
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "refused" and outcome["exit_code"] == 3
    assert "No passwords, please." in outcome["error"]


def test_a_silent_block_is_said_in_the_ui_language_and_in_english_to_the_model(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path
) -> None:
    """A PreToolUse hook that exits 2 without a word: the model reads our English sentence,
    a Chinese session's person read it in English too."""
    write_hooks(cli_env, {"PreToolUse": [{"matcher": "now", "hooks": [command("exit 2")]}]})
    openai_server.add(Reply(tool_calls=[ToolCall("now", {})]), Reply(text="被拦下了。"))
    result = run_cli(["-p", "现在几点？"], {**cli_env, "UI_LANGUAGE": "zh"}, workdir)
    assert result.returncode == 0, result.stderr
    answer = openai_server.chat_requests[1].messages[-1]
    assert tool_text(answer["content"]) == "Error: now was not run: a PreToolUse hook of the user blocked it."
    shown = " ".join(result.stderr.split())
    assert "now 没有运行：用户的 PreToolUse 钩子阻止了它。" in shown, shown
