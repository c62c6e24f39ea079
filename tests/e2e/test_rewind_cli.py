"""/rewind through the real CLI: the conversation and the agent's files back to before a message."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e
PROMPT = "›"
APPROVAL = r"\[y\]es / \[N\]o"
DOWN = "\x1b[B"
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\r")


def plain(text: str) -> str:
    return ANSI.sub("", text)


def user_lines(request: RecordedRequest) -> list[str]:
    return [str(m["content"]) for m in request.messages if m["role"] == "user"]


def wire(request: RecordedRequest) -> str:
    return json.dumps(request.messages, ensure_ascii=False)


def bad_turn(server: ScriptedOpenAIServer) -> None:
    """The turn to be undone: edits notes.md (approved), creates outputs/extra.md, answers."""
    server.add(
        Reply(
            tool_calls=[
                ToolCall(
                    "edit_file", {"path": "notes.md", "old_string": "draft one", "new_string": "BAD EDIT"}
                )
            ]
        ),
        Reply(tool_calls=[ToolCall("write_file", {"path": "outputs/extra.md", "content": "DROPPED-FILE"})]),
        Reply(text="DROPPED-ANSWER: done."),
    )


def test_rewind_restores_an_edited_file_and_the_history(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    assert run_cli(["trust"], cli_env, workdir).returncode == 0
    notes = workdir / "notes.md"
    notes.write_text("draft one\n", encoding="utf-8")
    notes.chmod(0o600)  # a private file: the edit and the restore keep it so (they left 0644)
    openai_server.add(Reply(text="PLAN: keep it short."))
    bad_turn(openai_server)
    openai_server.add(Reply(text="A fresh answer."))

    child = spawn_chat()
    child.expect(PROMPT)
    child.sendline("first: make a plan")
    child.expect("PLAN: keep it short")
    child.expect(PROMPT)
    child.sendline("second: edit the notes")
    child.expect(APPROVAL)
    child.sendline("y")
    child.expect("DROPPED-ANSWER")
    child.expect(PROMPT)
    assert notes.read_text(encoding="utf-8") == "BAD EDIT\n"
    assert notes.stat().st_mode & 0o777 == 0o600
    extra = next((tmp_path / "data" / "workspaces").glob("*/outputs/extra.md"))

    child.sendline("/rewind 1")
    child.expect(r"Restore these files as they were then\? \[y/N\]")
    listing = plain(child.before)
    assert "restore: notes.md" in listing and "delete: outputs/extra.md" in listing
    child.sendline("y")
    child.expect(r"Delete the 1 file the agent created since then\? \[y/N\]")
    child.sendline("y")
    child.expect("Went back over 1 message of yours")
    child.expect(PROMPT)
    child.expect("second: edit the notes")  # the message is back on the input line
    assert notes.read_text(encoding="utf-8") == "draft one\n"
    assert notes.stat().st_mode & 0o777 == 0o600
    assert not extra.exists()

    child.send("\x03")  # Ctrl-C clears the line
    child.sendline("third: just answer")
    child.expect("A fresh answer")
    child.expect(PROMPT)
    request = openai_server.chat_requests[-1]
    assert user_lines(request) == ["first: make a plan", "third: just answer"]
    sent = wire(request)
    for trace in ("second: edit the notes", "BAD EDIT", "DROPPED", "edit_file", 'write_file"', "extra.md"):
        assert trace not in sent
    assert "PLAN: keep it short" in sent
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    goodbye = plain(child.before)
    # the files /rewind deleted or gave back are not "written" by the session any more
    assert "Files written" not in goodbye and "extra.md" not in goodbye, goodbye


def test_rewind_after_resume_picks_the_message_and_keeps_a_changed_file(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path, cli_env: dict[str, str]
) -> None:
    assert run_cli(["trust"], cli_env, workdir).returncode == 0
    notes = workdir / "notes.md"
    notes.write_text("draft one\n", encoding="utf-8")
    openai_server.add(Reply(text="PLAN: keep it short."))
    bad_turn(openai_server)
    openai_server.add(Reply(text="Resumed answer."))

    first = spawn_chat()
    first.expect(r"session (\d{8}-\S+)")
    session = first.match.group(1).strip()
    first.expect(PROMPT)
    first.sendline("first: make a plan")
    first.expect("PLAN: keep it short")
    first.expect(PROMPT)
    first.sendline("second: edit the notes")
    first.expect(APPROVAL)
    first.sendline("y")
    first.expect("DROPPED-ANSWER")
    first.expect(PROMPT)
    first.sendline("/quit")
    first.expect(pexpect.EOF)
    # The user works on the agent's file meanwhile: going back must not overwrite it.
    notes.write_text("BAD EDIT, then mine\n", encoding="utf-8")

    child = spawn_chat("--resume", session)
    child.expect("Resumed")
    child.expect(PROMPT)
    child.sendline("/rewind")
    child.expect("Go back to before which message")
    child.expect("first: make a plan")  # newest first: the second line
    child.send(DOWN)
    child.send("\r")
    child.expect(r"Restore these files as they were then\? \[y/N\]")
    listing = plain(child.before)
    assert "changed since; left as it is: notes.md" in listing and "delete: outputs/extra.md" in listing
    child.sendline("y")
    child.expect(r"Delete the 1 file the agent created since then\? \[y/N\]")
    child.sendline("n")  # keep what the agent created
    child.expect("Left as they are")
    child.expect("Went back over 2 messages of yours")
    child.expect(PROMPT)
    child.expect("first: make a plan")
    assert notes.read_text(encoding="utf-8") == "BAD EDIT, then mine\n"
    assert next(workdir.parent.glob("data/workspaces/*/outputs/extra.md")).read_text() == "DROPPED-FILE"
    child.send("\r")  # send the message again as it is
    child.expect("Resumed answer")
    child.expect(PROMPT)
    request = openai_server.chat_requests[-1]
    assert user_lines(request) == ["first: make a plan"]
    assert "PLAN: keep it short" not in wire(request) and "DROPPED" not in wire(request)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_rewind_brings_back_a_private_file_a_command_of_the_agent_removed(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path, cli_env: dict[str, str]
) -> None:
    """The agent edits a 0600 file, then an approved `rm` removes it: /rewind writes it back
    as it was, 0600 (before: "changed since; left as it is", the file stayed gone)."""
    assert run_cli(["trust"], cli_env, workdir).returncode == 0
    secret = workdir / "secret.md"
    secret.write_text("draft one\n", encoding="utf-8")
    secret.chmod(0o600)
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall("edit_file", {"path": "secret.md", "old_string": "draft one", "new_string": "EDIT"})
            ]
        ),
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": f"rm {secret}"})]),
        Reply(text="REMOVED: done."),
    )
    child = spawn_chat()
    child.expect(PROMPT)
    child.sendline("@run_bash_command tidy up")
    for _ in range(2):
        child.expect(APPROVAL)
        child.sendline("y")
    child.expect("REMOVED: done")
    child.expect(PROMPT)
    assert not secret.exists()
    child.sendline("/rewind 1")
    child.expect(r"Restore these files as they were then\? \[y/N\]")
    assert "restore: secret.md" in plain(child.before)
    child.sendline("y")
    child.expect("Went back over 1 message of yours")
    child.expect(PROMPT)
    assert secret.read_text(encoding="utf-8") == "draft one\n"
    assert secret.stat().st_mode & 0o777 == 0o600
    child.send("\x03")  # Ctrl-C clears the message put back on the input line
    child.sendeof()
    child.expect(pexpect.EOF)


def test_rewind_speaks_chinese_in_help_and_with_nothing_to_go_back_to(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str]
) -> None:
    child = spawn_chat(env={**cli_env, "UI_LANGUAGE": "zh"})
    child.expect(PROMPT)
    child.sendline("/rewind")
    child.expect("还没有可以回退的内容")
    child.expect(PROMPT)
    child.sendline("/help")
    child.expect("/quit")  # the table's last command
    shown = "".join(plain(child.before).split())  # however the table wraps its lines
    assert "/rewind[N]回到你之前某条消息之前（可挑选）" in shown  # the hint, then the description
