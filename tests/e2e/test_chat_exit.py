"""Ctrl-D ends the chat: pressed while a command still runs, with work still going on
behind the prompt (an MCP server that never answers, an embedding endpoint that hangs),
and while the agent is still loading."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pexpect
import pytest

from tests.support.mcp_config import stdio_entry, trust_folder, write_mcp_json
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.processes import processes_with
from tests.support.silent_server import SilentServer
from tests.support.terminal import ask, expect_prompt, plain

pytestmark = pytest.mark.e2e


def test_ctrl_d_pressed_while_the_chat_is_busy_ends_it_when_it_is_done(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    # Between two prompts the terminal is in line mode, where Ctrl-D is an empty end of line:
    # it reached the next prompt as a NUL, and the chat stayed open.
    write_mcp_json(workdir, {"later": stdio_entry("--hang", enabled=False)})
    trust_folder(workdir)
    openai_server.add(Reply(text="Answered without it."))
    child = spawn_chat(env={**cli_env, "MCP_STARTUP_TIMEOUT": "10"})
    expect_prompt(child)
    child.sendline("@later hello")
    child.expect("Starting the MCP server @later")  # the chat waits for it, up to 10 s
    child.sendeof()
    child.expect("did not start within 10 s")
    child.expect(pexpect.EOF, timeout=60)
    assert "Saved. Continue with:" in plain(child.before) or "Bye." in plain(child.before)


def test_ctrl_d_does_not_wait_for_a_hung_server_or_a_hung_embedding_endpoint(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    marker = f"hang-{uuid.uuid4().hex[:8]}"
    write_mcp_json(workdir, {"stuck": stdio_entry("--hang", "--name", marker)})
    trust_folder(workdir)
    (workdir / "notes.md").write_text("# Walrus\n\nThe walrus migrates north in spring.\n", encoding="utf-8")
    openai_server.add(
        Reply(tool_calls=[ToolCall("search_file", {"file_path": "uploads/notes.md", "query": "walrus"})]),
        Reply(text="Walruses go north."),
    )
    openai_server.hold_embeddings_of = "migrates"  # the passage (not the query) is never answered
    env = {**cli_env, "MCP_STARTUP_TIMEOUT": "300", "EMBEDDING_MODEL": "test-embed"}
    child = spawn_chat(env=env)
    expect_prompt(child)
    ask(child, "where does the walrus go? #notes.md", "Walruses go north")
    expect_prompt(child)
    deadline = time.monotonic() + 60
    while not [r for r in openai_server.requests if "migrates" in str(r.body.get("input"))]:
        assert time.monotonic() < deadline, "the passages were never sent to be embedded"
        time.sleep(0.1)
    ask(child, "/mcp", "@stuck")
    child.expect("starting")
    expect_prompt(child)
    child.sendeof()
    # Both would wait five minutes; the chat stops the server (its process too) and leaves.
    child.expect(pexpect.EOF, timeout=60)
    deadline = time.monotonic() + 30
    while processes_with(marker):
        assert time.monotonic() < deadline, "the hung MCP server outlived the chat"
        time.sleep(0.2)


# PostgreSQL is tried at each address of a multi-host DATABASE_URL in turn, for 10 s each
# (POSTGRES_CONNECT_SECONDS): with a server that never answers listed this often, the agent's
# load cannot end for two minutes.
FROZEN_POSTGRES_ADDRESSES = 12


@pytest.mark.parametrize("leave", ["ctrl-d", "/quit"])
def test_leaving_while_the_agent_loads_is_at_once_and_stops_the_servers_it_started(
    leave: str, spawn_chat, cli_env: dict[str, str], workdir: Path
) -> None:
    # The chat used to wait up to 15 s for the load to end before it stopped the MCP servers,
    # and left them running when the load took longer.
    marker = f"slow-{uuid.uuid4().hex[:8]}"
    write_mcp_json(workdir, {"slow": stdio_entry("--hang", "--name", marker)})
    trust_folder(workdir)
    with SilentServer() as postgres:
        hosts = ",".join(["127.0.0.1"] * FROZEN_POSTGRES_ADDRESSES)
        database = f"host={hosts} port={postgres.port} user=agent dbname=agent"  # libpq's key=value form
        env = {**cli_env, "MCP_STARTUP_TIMEOUT": "300", "DATABASE_URL": database}
        child = spawn_chat(env=env)
        expect_prompt(child)
        # The load has started the server (still starting: it never answers) and now waits
        # for PostgreSQL, which never answers either.
        assert postgres.wait_for_connections(1, timeout=60), "the load never reached PostgreSQL"
        deadline = time.monotonic() + 60
        while not processes_with(marker):
            assert time.monotonic() < deadline, "the load never started the MCP server"
            time.sleep(0.1)
        if leave == "ctrl-d":
            child.sendeof()
        else:
            child.sendline(leave)
        child.expect(pexpect.EOF, timeout=60)  # the load would go on for 120 s
        # It left before the load had tried every address: it did not wait for the load.
        assert postgres.connections < FROZEN_POSTGRES_ADDRESSES
    deadline = time.monotonic() + 30
    while processes_with(marker):
        assert time.monotonic() < deadline, "the MCP server the load started outlived the chat"
        time.sleep(0.2)
