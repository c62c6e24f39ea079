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
from tests.e2e.test_chat_interactive import expect_prompt
from tests.faults.conftest import assert_history_intact, assert_no_secret_kept, stored_messages
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

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
