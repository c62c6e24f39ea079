"""Terminal attacks: escape sequences and bidi controls in what the model, a tool or a file says.

A terminal obeys such sequences: they can redraw the approval question so that the user
approves a command other than the one shown, write the clipboard (OSC 52), set the window
title, or reorder text. The assertions are on the raw bytes the process wrote to the
terminal or to stdout, where such a sequence would do its work.
"""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.faults.conftest import assert_history_intact, assert_no_secret_kept, stored_messages
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt, plain

fault = pytest.mark.fault
# Erase the line, go to column 1, and draw a harmless command over the real one.
SPOOF = "\x1b[2K\x1b[1G  command: ls outputs/"
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: put "echo pwned" on the clipboard
TITLE = "\x1b]0;pwned\x1b\\"  # OSC 0 ended by ST: the window title
C1_CSI = "\x9b2J"  # erase the screen, in the 8-bit form
BIDI = "\u202etxt.exe"  # right-to-left override: shows as "exe.txt"
HOSTILE = [SPOOF, CLIPBOARD, TITLE, C1_CSI, "\u202e"]


def assert_nothing_hostile(raw: str, also: tuple[str, ...] = ()) -> None:
    for sequence in (*HOSTILE, *also):
        assert sequence not in raw, f"{sequence!r} reached the terminal"


@fault(
    area="security",
    fault="A command hides a second one behind escape codes that redraw the approval question (…; touch SPOOFED #ESC[2K ESC[1G command: ls outputs/), and the answer carries an OSC 52 clipboard write, a title change, an 8-bit CSI and a bidi override",
    outcome="The question shows the whole command with the codes as visible marks (␛[2K␛[1G), so 'touch SPOOFED' is on screen; after 'n' nothing runs; no escape code from the model reaches the terminal.",
    found="the codes were written raw: the question showed only 'command: ls outputs/' and the hidden command ran on 'y'; the answer's OSC 52 reached the terminal",
)
def test_escape_codes_cannot_spoof_the_approval_question(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    command = f"echo hello; touch outputs/SPOOFED #{SPOOF}"
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": command})]),
        Reply(text=f"Done.{CLIPBOARD}{TITLE}{C1_CSI} See {BIDI}\r\nbye"),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command say hello")
    child.expect(r"\[a\]lways")
    question = child.before
    child.sendline("n")
    child.expect("bye")
    raw = question + child.before + child.after
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "touch outputs/SPOOFED #␛[2K␛[1G  command: ls outputs/" in question
    assert_nothing_hostile(raw)
    assert "See txt.exe" in raw
    assert not list(data_dir.glob("workspaces/*/outputs/SPOOFED"))
    assert_history_intact(stored_messages(data_dir))
    assert_no_secret_kept(data_dir, raw)


@fault(
    area="security",
    fault="-p: the answer, a tool's arguments and a tool's error carry escape codes (OSC 52 clipboard write, title, 8-bit CSI, bidi override, CR)",
    outcome="stdout has the answer's text without any of them; the tool lines on stderr have none either; exit 0.",
    found="the answer's OSC 52 clipboard write reached stdout raw",
)
def test_print_mode_output_carries_no_escape_codes(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall("read_file", {"path": f"uploads/{CLIPBOARD}missing{TITLE}.txt"}),
                ToolCall(f"no_such_tool{C1_CSI}", {"x": SPOOF}),
            ]
        ),
        Reply(text=f"Answer{CLIPBOARD}{TITLE}{C1_CSI} {BIDI}\r\nend"),
    )
    result = run_cli(["-p", "read it"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Answer txt.exe\nend\n"
    assert_nothing_hostile(result.stdout, also=("\r",))
    assert_nothing_hostile(result.stderr)
    assert "read_file" in result.stderr and "no_such_tool" in result.stderr
    assert_no_secret_kept(data_dir, result.stdout, result.stderr)


@fault(
    area="security",
    fault="A tool call's arguments hold a lone surrogate (edit_file whose new_string is \\ud83d), drawn by the terminal in the tool line",
    outcome="The line shows U+FFFD in its place; the session goes on and the next message is answered; the history is intact.",
    found="the chat ended with a traceback (UnicodeEncodeError: surrogates not allowed) raised by the renderer drawing the edit_file line",
)
def test_a_lone_surrogate_in_tool_arguments_is_drawn_and_the_session_goes_on(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    raw_arguments = '{"path": "outputs/notes.txt", "old_string": "hello", "new_string": "bye \\ud83d"}'
    openai_server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": "outputs/notes.txt", "content": "hello\n"})]),
        Reply(tool_calls=[ToolCall("edit_file", raw_arguments)]),
        Reply(text="Edited."),
        Reply(text="Still here."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("write and edit the notes")
    child.expect("Edited")
    shown = child.before
    expect_prompt(child)
    child.sendline("are you there?")
    child.expect("Still here")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "edit_file" in shown and "\ufffd" in shown
    assert "Traceback" not in shown and "UnicodeEncodeError" not in shown
    assert_history_intact(stored_messages(data_dir))


@fault(
    area="security",
    fault="A command whose dangerous part comes first and is followed by 60 newlines (then 'echo hello'), and one padded with 3,000 spaces and a zero-width space",
    outcome="The question shows each command on one line: the newlines as ␊ (runs as a count), the blanks as a count, the zero-width space as <U+200B>; 'touch outputs/HIDDEN' is right above the question; after 'n' nothing runs.",
    found="the newlines were printed raw: the question showed only 'echo hello' above [y/N], the first part scrolled away",
)
def test_newlines_and_blanks_cannot_scroll_a_command_out_of_its_question(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    hidden_by_lines = "touch outputs/HIDDEN #" + "\n" * 60 + "echo hello"
    hidden_by_blanks = "touch outputs/HIDDEN2 #" + " " * 3000 + "\u200b" + "echo hello"
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": hidden_by_lines})]),
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": hidden_by_blanks})]),
        Reply(text="Nothing ran."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command say hello")
    questions = []
    for _ in range(2):
        child.expect(r"\[a\]lways")
        questions.append(plain(child.before).split("Approve")[-1])
        child.sendline("n")
    child.expect("Nothing ran")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    for question, name in zip(questions, ["HIDDEN", "HIDDEN2"], strict=True):
        assert len(question.splitlines()) <= 10, question  # the whole question fits on a screen
        assert f"touch outputs/{name} #" in question
    assert "␊" in questions[0] and "empty lines" in questions[0]
    assert "3,000 blanks" in questions[1] or "3000 blanks" in questions[1]
    assert "<U+200B>echo hello" in questions[1]
    assert not list(data_dir.glob("workspaces/*/outputs/HIDDEN*"))
    assert_history_intact(stored_messages(data_dir))


@fault(
    area="security",
    fault="The agent writes temp/x.sh (no question: temp/ is its scratch folder), then asks to run 'bash temp/x.sh'",
    outcome="The question names temp/x.sh with its size and shows its first lines (the 'touch outputs/PWNED' inside), not only the file name; after 'n' nothing runs.",
    found="the question showed only 'bash temp/x.sh': what the script did was never on screen",
)
def test_a_script_written_in_the_session_is_shown_in_the_question_that_runs_it(
    openai_server: ScriptedOpenAIServer, spawn_chat, data_dir: Path
) -> None:
    script = "#!/bin/sh\ntouch outputs/PWNED\necho tidy\n"
    openai_server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/x.sh", "content": script})]),
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": "bash temp/x.sh"})]),
        Reply(text="Nothing ran."),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("@run_bash_command tidy up")
    child.expect(r"\[a\]lways")
    question = plain(child.before).split("Approve")[-1]
    child.sendline("n")
    child.expect("Nothing ran")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "temp/x.sh" in question and f"({len(script.encode())} bytes)" in question
    assert "touch outputs/PWNED" in question
    assert not list(data_dir.glob("workspaces/*/outputs/PWNED"))
    assert_history_intact(stored_messages(data_dir))
