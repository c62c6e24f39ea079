"""MCP servers through the real `generalagent` process: an mcp.json next to the user's documents,
the real client against the local model server, real MCP servers over stdio and HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.history import tool_text
from tests.support.mcp_config import stdio_entry, trust_folder, write_mcp_json
from tests.support.mcp_server import serve_http
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.processes import gone
from tests.support.terminal import ask, expect_prompt, plain

pytestmark = pytest.mark.e2e

TOKEN = "mcp-token-SECRET-98765"


def tool_answers(request: RecordedRequest) -> dict[str, str]:
    return {m["tool_call_id"]: tool_text(m["content"]) for m in request.messages if m["role"] == "tool"}


def mcp_until(child: pexpect.spawn, status: str) -> str:
    """Everything /mcp showed, asked twice a second until its table has `status` (servers
    start once the agent has loaded, which a busy machine delays)."""
    shown, deadline = "", time.monotonic() + 60
    while status not in shown:
        assert time.monotonic() < deadline, shown
        child.expect(pexpect.TIMEOUT, timeout=0.5)
        shown += ask(child, "/mcp", "/mcp") + expect_prompt(child)
    return shown


def test_a_dropped_mcp_json_gives_the_model_working_tools(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path
) -> None:
    """-p: stdio and HTTP tools called, one raising, one crashing its server, then a restart."""
    notes = workdir / "notes.txt"
    calls = [
        ToolCall("notes__write_note", {"text": "buy milk"}),
        ToolCall("remote__add", {"a": 2, "b": 3}),
        ToolCall("notes__fail", {"message": "disk is full"}),
        ToolCall("notes__crash", {}),
        ToolCall("notes__show_env", {"variable": "TOKEN"}),
    ]
    openai_server.add(
        Reply(tool_calls=calls[:3]),
        Reply(tool_calls=[calls[3]]),
        Reply(tool_calls=[calls[4]]),
        Reply(text="All done."),
    )
    with serve_http("remote") as url:
        write_mcp_json(
            workdir,
            {
                "notes": stdio_entry(trust=True, env={"NOTES_FILE": str(notes), "TOKEN": "${NOTES_TOKEN}"}),
                "remote": {"type": "http", "url": url, "trust": True},
            },
        )
        trust_folder(workdir, {"notes": ["NOTES_TOKEN"]})
        result = run_cli(["-p", "use my tools"], {**cli_env, "NOTES_TOKEN": TOKEN}, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done.\n"
    assert notes.read_text(encoding="utf-8") == "buy milk\n"
    first = openai_server.chat_requests[0]
    assert {"notes__write_note", "remote__add", "notes__crash"} <= set(first.tool_names)
    answers = {}
    for request in openai_server.chat_requests[1:]:
        answers.update(tool_answers(request))
    assert answers[calls[0].id] == "noted: buy milk"
    assert answers[calls[1].id] == "5"
    assert answers[calls[2].id].startswith("Error: ") and "disk is full" in answers[calls[2].id]
    assert answers[calls[3].id].startswith("Error: the MCP server notes stopped during this call")
    assert answers[calls[4].id] == "***"  # restarted by this call; the secret stays out of the context
    for request in openai_server.chat_requests:
        assert TOKEN not in json.dumps(request.body)
    assert TOKEN not in result.stderr
    log = (Path(cli_env["DATA_DIR"]) / "logs").glob("*.log")
    assert all(TOKEN not in path.read_text(encoding="utf-8") for path in log)


def test_a_server_that_died_while_idle_answers_the_next_call_and_the_user_hears_once(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path
) -> None:
    """-p: the server is killed between two calls. Its output is held open (as a helper process
    it started would hold it), so only the process itself shows that it is gone: the second
    call goes to a new process, and the user reads one line about the restart."""
    first, second = ToolCall("notes__pid", {}), ToolCall("notes__echo", {"text": "still here"})
    held: list[BinaryIO] = []

    def kill_then_call(request: RecordedRequest) -> Reply:
        answers = tool_answers(request)
        if second.id in answers:
            return Reply(text="All done.")
        pid = int(answers[first.id])
        held.append(open(f"/proc/{pid}/fd/1", "wb"))  # noqa: SIM115  # closed after the run
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not gone(pid) and time.monotonic() < deadline:  # collected by the agent
            time.sleep(0.05)
        return Reply(tool_calls=[second])

    openai_server.add(Reply(tool_calls=[first]))
    openai_server.responder = kill_then_call
    write_mcp_json(workdir, {"notes": stdio_entry("--quick", trust=True)})
    trust_folder(workdir)
    try:
        # Unconfined: the test kills the server by the pid it reports, which in the
        # sandbox's own PID namespace is not the host's.
        result = run_cli(["-p", "use my tools"], {**cli_env, "SANDBOX": "off"}, workdir)
    finally:
        for pipe in held:
            pipe.close()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done.\n"
    answers: dict[str, str] = {}
    for request in openai_server.chat_requests[1:]:
        answers.update(tool_answers(request))
    assert len(held) == 1 and gone(int(answers[first.id]))
    assert answers[second.id] == "still here"
    notice = "MCP server notes had stopped while idle (the process exited); the next call restarted it."
    assert plain(result.stderr).count(notice) == 1, result.stderr
    assert "stopped during this call" not in result.stderr


def test_a_hanging_server_never_holds_up_the_chat(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    write_mcp_json(workdir, {"hang": stdio_entry("--hang"), "notes": stdio_entry(trust=True)})
    trust_folder(workdir)
    openai_server.add(Reply(text="Hi there."))
    # The start-up timeout is longer than this test waits for anything: the chat must not wait for it.
    child = spawn_chat(env={**cli_env, "MCP_STARTUP_TIMEOUT": "120"})
    expect_prompt(child)
    shown = ask(child, "hello", "Hi there")
    assert "hang" not in shown
    expect_prompt(child)
    ask(child, "/mcp", "@hang")
    child.expect("starting")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_a_server_that_fails_to_start_costs_one_warning_line(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    # notes answers without the MCP SDK's import: it starts within the 2 s on a busy machine too.
    write_mcp_json(workdir, {"hang": stdio_entry("--hang"), "notes": stdio_entry("--quick", trust=True)})
    trust_folder(workdir)
    openai_server.add(Reply(text="First."), Reply(text="Second."))
    child = spawn_chat(env={**cli_env, "MCP_STARTUP_TIMEOUT": "2"})
    expect_prompt(child)
    # The user looks at /mcp until the server has failed: the warning comes once, with that table.
    shown = mcp_until(child, "failed: did not start within 2 s")
    warning = "MCP server hang: did not start within 2 s (MCP_STARTUP_TIMEOUT); its tools are skipped"
    assert plain(shown).count(warning) == 1 and "ready" in shown
    assert warning not in ask(child, "hello", "First")
    expect_prompt(child)
    assert warning not in ask(child, "again", "Second")
    expect_prompt(child)
    first = openai_server.chat_requests[0]
    assert "notes__echo" in first.tool_names and not [n for n in first.tool_names if n.startswith("hang__")]
    child.sendeof()
    child.expect(pexpect.EOF)


def test_mentioning_a_disabled_server_brings_its_tools(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    write_mcp_json(workdir, {"calc": stdio_entry(enabled=False, trust=True, tools=["add"])})
    trust_folder(workdir)
    call = ToolCall("calc__add", {"a": 20, "b": 22})
    openai_server.add(Reply(tool_calls=[call]), Reply(text="The sum is 42."), Reply(text="Still here."))
    child = spawn_chat()
    expect_prompt(child)
    assert "off: @calc starts it" in ask(child, "/mcp", "Untrusted")
    expect_prompt(child)
    ask(child, "@calc what is 20 + 22?", "The sum is 42")
    expect_prompt(child)
    request = openai_server.chat_requests[0]
    assert "calc__add" in request.tool_names
    assert "The user mentioned the MCP server @calc" in request.messages[-1]["content"]
    assert tool_answers(openai_server.chat_requests[1]) == {call.id: "42"}
    ask(child, "thanks", "Still here")
    expect_prompt(child)
    assert "calc__add" in openai_server.chat_requests[2].tool_names  # one mention is enough
    child.sendeof()
    child.expect(pexpect.EOF)


def test_an_untrusted_servers_tool_asks_before_it_runs(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    """The approval step of the graph (issue 11) asks for tools marked needs_approval."""
    notes = workdir / "notes.txt"
    write_mcp_json(workdir, {"notes": stdio_entry(env={"NOTES_FILE": str(notes)})})
    trust_folder(workdir)
    openai_server.add(
        Reply(tool_calls=[ToolCall("notes__write_note", {"text": "refused"})]),
        Reply(text="Not written."),
        Reply(tool_calls=[ToolCall("notes__write_note", {"text": "approved"})]),
        Reply(text="Written."),
    )
    child = spawn_chat()
    expect_prompt(child)
    mcp_until(child, "ready")
    child.sendline("note something")
    child.expect("Approve notes__write_note")
    child.sendline("n")
    child.expect("Not written")
    expect_prompt(child)
    assert not notes.exists()
    child.sendline("note it after all")
    child.expect("Approve notes__write_note")
    child.sendline("y")
    child.expect("Written")
    expect_prompt(child)
    assert notes.read_text(encoding="utf-8") == "approved\n"
    child.sendeof()
    child.expect(pexpect.EOF)


def test_doctor_starts_each_server_and_reports_it(cli_env: dict[str, str], workdir: Path) -> None:
    write_mcp_json(
        workdir,
        {
            # Started within the 3 s however busy the machine: no MCP SDK to import.
            "notes": stdio_entry("--quick", trust=True, env={"TOKEN": "${NOTES_TOKEN}"}),
            "later": stdio_entry(enabled=False),
            "hang": stdio_entry("--hang"),
            "missing": {"command": "no-such-mcp-server-program"},
        },
    )
    env = {**cli_env, "MCP_STARTUP_TIMEOUT": "3", "NOTES_TOKEN": TOKEN}
    trust_folder(workdir, {"notes": ["NOTES_TOKEN"]})
    result = run_cli(["doctor", "--offline"], env, workdir)
    out = " ".join(result.stdout.split())  # the report wraps at the terminal's width
    assert result.returncode == 1
    assert "✓ mcp @notes" in out and "tools in" in out and "starts at start-up" in out
    assert "✓ mcp @later" in out and "starts on @later" in out
    assert "✗ mcp @hang" in out and "did not start within 3 s" in out
    assert "✗ mcp @missing" in out and "no such program" in out
    assert TOKEN not in out + result.stderr


def test_an_untrusted_folders_servers_never_start_not_even_in_doctor(
    cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    marker = workdir / "started"  # in the folder: a trusted folder's server runs in the sandbox
    command = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    write_mcp_json(workdir, {"pwn": command}, name=".mcp.json")
    for args in (["doctor", "--offline"], ["doctor"], ["mcp", "list"], ["-p", "hello"]):
        result = run_cli(args, {**cli_env, "MCP_STARTUP_TIMEOUT": "3"}, workdir)
        out = " ".join((result.stdout + result.stderr).split())
        assert "not trusted" in out and "trust" in out, args
        assert not marker.exists(), args
    trust_folder(workdir)  # once trusted, doctor does start it (and reports it)
    run_cli(["doctor", "--offline"], {**cli_env, "MCP_STARTUP_TIMEOUT": "3"}, workdir)
    assert marker.exists()


def test_mcp_add_list_remove_edit_the_folders_mcp_json(cli_env: dict[str, str], workdir: Path) -> None:
    added = run_cli(
        [
            "mcp",
            "add",
            "notes",
            "--env",
            f"TOKEN={TOKEN}",
            "--trust",
            "--",
            "python",
            "server.py",
            "--db",
            "x.db",
        ],
        cli_env,
        workdir,
    )
    assert added.returncode == 0, added.stderr
    remote = run_cli(
        [
            "mcp",
            "add",
            "search",
            "--url",
            "https://mcp.example.com/mcp",
            "-H",
            "Authorization: Bearer ${KEY}",
            "--disabled",
        ],
        cli_env,
        workdir,
    )
    assert remote.returncode == 0, remote.stderr
    data = json.loads((workdir / "mcp.json").read_text(encoding="utf-8"))
    assert data["mcpServers"]["notes"] == {
        "command": "python",
        "args": ["server.py", "--db", "x.db"],
        "env": {"TOKEN": TOKEN},
        "trust": True,
    }
    assert data["mcpServers"]["search"]["headers"] == {"Authorization": "Bearer ${KEY}"}
    untrusted = run_cli(["mcp", "list"], cli_env, workdir)
    unwrapped = " ".join(untrusted.stdout.split())  # a long temporary path wraps the line
    assert "@notes" not in unwrapped and "not trusted" in unwrapped
    trust_folder(workdir)
    listed = run_cli(["mcp", "list"], cli_env, workdir)
    assert "@notes" in listed.stdout and "python server.py --db x.db" in listed.stdout
    assert "on @search" in listed.stdout and "https://mcp.example.com/mcp" in listed.stdout
    assert TOKEN not in listed.stdout
    twice = run_cli(["mcp", "add", "notes", "--", "python"], cli_env, workdir)
    assert twice.returncode == 2 and "exists; remove it first" in " ".join(twice.stderr.split())
    assert run_cli(["mcp", "remove", "notes"], cli_env, workdir).returncode == 0
    gone = run_cli(["mcp", "remove", "notes"], cli_env, workdir)
    assert gone.returncode == 2 and "No MCP server named notes" in " ".join(gone.stderr.split())
    assert list(json.loads((workdir / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]) == ["search"]
    user = run_cli(["mcp", "add", "everywhere", "--user", "--", "python", "tools.py"], cli_env, workdir)
    assert user.returncode == 0, user.stderr
    user_file = Path(cli_env["GENERALAGENT_CONFIG_DIR"]) / "mcp.json"
    assert list(json.loads(user_file.read_text(encoding="utf-8"))["mcpServers"]) == ["everywhere"]
    listed = run_cli(["mcp", "list"], cli_env, workdir)
    assert "@everywhere" in listed.stdout and "@search" in listed.stdout


PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "print(f'PEAK-KB {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)


@contextmanager
def huge_answer_server(transport: str) -> Iterator[tuple[dict[str, Any], ToolCall]]:
    """(mcp.json's servers, the call) of a server answering tens of MB: a stdio server's one
    line of 60 MB, or a streamable HTTP server's 40 MB as an event stream or a JSON body."""
    if transport == "stdio":
        yield {"notes": stdio_entry("--quick", trust=True)}, ToolCall("notes__big", {"mb": 60})
        return
    with serve_http("remote", json_response=transport == "http-json") as url:
        yield {"remote": {"type": "http", "url": url, "trust": True}}, ToolCall("remote__big_mb", {"mb": 40})


@pytest.mark.parametrize("transport", ["stdio", "http-event-stream", "http-json"])
def test_a_huge_mcp_answer_is_cut_as_it_streams_in(
    transport: str, openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path
) -> None:
    """The SDK held a stdio server's whole line, then copies of it (main: ~1 GB peak for
    60 MB, 3.4 GB for 200 MB), and read an HTTP server's answer whole; now each is cut at
    MCP_MESSAGE_MAX_BYTES as it arrives, and the model gets its head with a note naming
    the setting."""
    with huge_answer_server(transport) as (servers, call):
        write_mcp_json(workdir, servers)
        trust_folder(workdir)
        openai_server.add(Reply(tool_calls=[call]), Reply(text="Too much."))
        env = {**cli_env, "MCP_MESSAGE_MAX_BYTES": "4000000"}
        result = subprocess.run(
            [sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "generalAgent", "-p", "get it"],
            env=env,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 0, result.stderr
    answer = tool_answers(openai_server.chat_requests[1])[call.id]
    note, text = answer.split("\n", 1)
    assert "over MCP_MESSAGE_MAX_BYTES (4,000,000 bytes); the rest was not read" in note, note
    assert text.startswith("BIG-START 数据数据"), text[:100]
    peak_mb = int(result.stderr.rsplit("PEAK-KB ", 1)[1].split()[0]) / 1024
    assert peak_mb < 400, peak_mb
