"""Approval attacks: several calls in one model message, answered in every way, and the
sessions an older version broke doing that.

The model server sends the calls exactly as a provider would (several in one message);
the chat runs in a pseudo-terminal and the user answers the approval questions. The
assertions are on what ran (files the commands append to, notes in the knowledge base),
on what the model was told, and on the stored history.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.faults.conftest import (
    assert_history_intact,
    assert_no_secret_kept,
    assert_requests_valid,
    sessions_db,
    stored_messages,
)
from tests.support.history import tool_text
from tests.support.old_threads import store_thread_of_the_double_approval_bug
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt, plain

fault = pytest.mark.fault
QUESTION = r"\[a\]lways"


def answer_questions(child: pexpect.spawn, answers: list[str], until: str) -> tuple[int, str]:
    """Answer each approval question in turn until `until` shows; returns how many were
    asked, and what was shown meanwhile."""
    asked, shown = 0, ""
    while child.expect([QUESTION, until]) == 0:
        shown += plain(child.before)
        child.sendline(answers[min(asked, len(answers) - 1)])
        asked += 1
    return asked, shown + plain(child.before)


def tool_answers(request: RecordedRequest) -> dict[str, str]:
    return {m["tool_call_id"]: tool_text(m["content"]) for m in request.messages if m["role"] == "tool"}


def batch_of_two_commands() -> Reply:
    return Reply(
        tool_calls=[
            ToolCall("run_bash_command", {"command": "echo one >> outputs/log.txt"}, id="call_one"),
            ToolCall("run_bash_command", {"command": "echo two >> outputs/log.txt"}, id="call_two"),
            ToolCall("add_knowledge", {"title": "Batch note", "content": "Written once."}, id="call_note"),
        ]
    )


def logged_lines(data_dir: Path) -> list[str]:
    logs = list(data_dir.glob("workspaces/*/outputs/log.txt"))
    return sorted(logs[0].read_text().split()) if logs else []


def notes_titled(title: str, cli_env: dict[str, str], workdir: Path) -> int:
    listing = run_cli(["kb", "list", "--json"], cli_env, workdir)
    assert listing.returncode == 0, listing.stderr
    return sum(1 for item in json.loads(listing.stdout)["items"] if item["title"] == title)


@fault(
    area="security",
    fault="Two shell commands and a knowledge note in one model message; the user approves both commands (y, y)",
    outcome="Each command runs once (the log reads one, two) and the note is saved once; every call is answered once; the history is intact.",
    found="the first command ran twice ('one one two') and so did every sibling tool (two identical notes): the approval paused a batch of parallel calls and the resume re-ran the batch",
)
def test_two_approved_commands_run_once_each(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path, cli_env: dict[str, str], workdir: Path
) -> None:
    openai_server.add(batch_of_two_commands(), Reply(text="Both ran."))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command log one and two")
    asked, shown = answer_questions(child, ["y"], "Both ran")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert logged_lines(data_dir) == ["one", "two"]
    assert notes_titled("Batch note", cli_env, workdir) == 1
    assert asked == 2 and "(1 of 2)" in shown and "(2 of 2)" in shown
    answers = tool_answers(openai_server.chat_requests[-1])
    assert set(answers) == {"call_one", "call_two", "call_note"}
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)
    assert_no_secret_kept(data_dir)


@fault(
    area="security",
    fault="The same batch answered 'always' for the first command, then the session resumed with -p, where the model runs a command again",
    outcome="The second command is not asked again and each runs once; the turn ends normally; the resumed -p run refuses the new command ('always' lasts only while the chat runs) and nothing more is written.",
    found="the turn failed with InvalidUpdateError at key 'approved_tools' and every --resume of the session crashed; 'always' was stored with the session, so a later -p --resume ran commands unattended",
)
def test_always_lasts_for_the_process_and_the_session_resumes(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path, cli_env: dict[str, str], workdir: Path
) -> None:
    openai_server.add(batch_of_two_commands(), Reply(text="Both ran."))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command log one and two")
    asked, shown = answer_questions(child, ["a"], "Both ran")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert asked == 1  # the second call of an "always" tool is not asked
    assert logged_lines(data_dir) == ["one", "two"]
    assert notes_titled("Batch note", cli_env, workdir) == 1

    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "echo three >> outputs/log.txt"})]),
        Reply(text="It was refused."),
    )
    resumed = run_cli(["-p", "one more", "--resume"], cli_env, workdir)
    assert resumed.returncode == 3, resumed.stderr  # a refused tool was needed
    assert resumed.stdout == "It was refused.\n"
    assert "cannot ask; refused" in resumed.stderr
    assert logged_lines(data_dir) == ["one", "two"]
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)
    assert_no_secret_kept(data_dir, resumed.stdout, resumed.stderr, shown)


@fault(
    area="security",
    fault="A session an older version left broken (two 'always' answers in one step, InvalidUpdateError stored), resumed with -p and in the chat",
    outcome="Both resume: the commands' stored answers reach the model, the history is valid, the model answers; nothing runs again.",
    found="every --resume of such a session crashed with InvalidUpdateError",
)
def test_a_session_broken_by_the_old_approval_resumes(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path, cli_env: dict[str, str], workdir: Path
) -> None:
    from generalAgent.graph.checkpoints import open_sqlite_checkpointer
    from generalAgent.sessions import SessionCatalog

    session = SessionCatalog.new_id()
    catalog = SessionCatalog(sessions_db(data_dir))
    catalog.open_session(session, "run both")
    catalog.close()
    saver = open_sqlite_checkpointer(sessions_db(data_dir))
    try:
        answers = store_thread_of_the_double_approval_bug(saver, session)
    finally:
        saver.conn.close()

    openai_server.add(Reply(text="Resumed with -p."))
    result = run_cli(["-p", "go on", "--resume"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Resumed with -p.\n"
    sent = [tool_text(m["content"]) for m in openai_server.chat_requests[-1].messages if m["role"] == "tool"]
    assert sent == answers

    openai_server.add(Reply(text="Resumed in the chat."))
    child = spawn_chat("-c")  # the latest session of this folder, without the picker
    expect_prompt(child)
    child.sendline("and now?")
    child.expect("Resumed in the chat")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert not list(data_dir.glob("workspaces/*/outputs/log.txt"))
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="security",
    fault="Ctrl-C between two approval answers (the first command approved, Ctrl-C at the second question)",
    outcome="Nothing runs, not even the approved command or the sibling note; every call is answered 'Cancelled'; the next message is answered.",
)
def test_ctrl_c_between_approval_answers_runs_nothing(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path, cli_env: dict[str, str], workdir: Path
) -> None:
    openai_server.add(batch_of_two_commands(), Reply(text="Nothing ran."))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command log one and two")
    child.expect(QUESTION)
    child.sendline("y")
    child.expect(QUESTION)
    child.kill(signal.SIGINT)
    child.expect("Cancelled")
    expect_prompt(child)
    child.sendline("what happened?")
    child.expect("Nothing ran")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert logged_lines(data_dir) == []
    assert notes_titled("Batch note", cli_env, workdir) == 0
    answers = tool_answers(openai_server.chat_requests[-1])
    assert set(answers) == {"call_one", "call_two", "call_note"}
    assert all(a.startswith("Cancelled") for a in answers.values())
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="security",
    fault="A hostile model server sends two shell commands under one tool-call id (and, in a second message, two with empty ids, as some local servers do); the user refuses the first and approves the second",
    outcome="Only the approved command runs, once, in both messages; each call is asked about and answered on its own (the ids are renumbered before the approval step); the history is intact.",
    found="answers were keyed by call id and the last one won: the 'y' for the second call approved the refused first one too, and both ran",
)
@pytest.mark.parametrize("call_id", ["dup", ""])
def test_a_repeated_or_empty_call_id_cannot_carry_one_yes_to_a_refused_call(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path, call_id: str
) -> None:
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall("run_bash_command", {"command": "echo refused >> outputs/log.txt"}, id=call_id),
                ToolCall("run_bash_command", {"command": "echo approved >> outputs/log.txt"}, id=call_id),
            ]
        ),
        Reply(text="One ran."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command log both")
    child.expect(QUESTION)
    assert "echo refused" in plain(child.before)
    child.sendline("n")
    child.expect(QUESTION)
    assert "echo approved" in plain(child.before)
    child.sendline("y")
    child.expect("One ran")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert logged_lines(data_dir) == ["approved"]
    sent = openai_server.chat_requests[-1].messages
    calls = [c for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    ids = [c["id"] for c in calls]
    assert len(ids) == 2 and len(set(ids)) == 2 and all(ids)
    answers = tool_answers(openai_server.chat_requests[-1])
    assert answers[ids[0]].startswith("Error: refused by the user")
    assert not answers[ids[1]].startswith("Error")
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)
