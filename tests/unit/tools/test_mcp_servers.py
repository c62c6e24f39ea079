"""Real MCP servers (tests/support/mcp_server.py) over stdio and streamable HTTP on loopback:
calls, errors, crashes and restarts, timeouts, start-up failures, secrets, approval marks."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from generalAgent import i18n
from generalAgent.config.settings import MCPSettings
from generalAgent.graph.nodes.tools import build_tool_node
from generalAgent.tools.errors import ToolError
from generalAgent.tools.mcp.config import load_mcp_config
from generalAgent.tools.mcp.manager import MCPServerManager
from generalAgent.tools.run_context import RunContext, SessionScope
from tests.support.mcp_config import stdio_entry, write_mcp_json
from tests.support.mcp_server import serve_http
from tests.support.processes import gone, processes_with

SECRET = "tok-SECRET-0123456789"
RESULT_CAP = 60_000  # the tools node's cap, as TOOL_RESULT_MAX_CHARS sets it by default


def start_manager(folder: Path, servers: dict[str, Any], startup_timeout: float = 60.0) -> MCPServerManager:
    path = write_mcp_json(folder, servers)
    settings = MCPSettings(mcp_config=str(path), mcp_startup_timeout=startup_timeout)
    config = load_mcp_config(settings, folder, {"NOTES_TOKEN": SECRET})
    return MCPServerManager(config, settings, log_dir=folder / "logs").start()


def tools_by_name(manager: MCPServerManager) -> dict[str, Any]:
    return {tool.name: tool for tool in manager.tools_of(manager.handles())}


def run_through_tools_node(tool: Any, args: dict[str, Any], context: RunContext | None = None) -> ToolMessage:
    """One call answered as the graph's tools node answers it (error status, result cap), in
    a session's run `context` when one is given."""
    graph = StateGraph(MessagesState, context_schema=RunContext)
    graph.add_node("tools", build_tool_node([tool], RESULT_CAP))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    call = {"name": tool.name, "args": args, "id": "call_1", "type": "tool_call"}
    result = graph.compile().invoke({"messages": [AIMessage(content="", tool_calls=[call])]}, context=context)
    return result["messages"][-1]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MCPServerManager, Path]]:
    folder = tmp_path_factory.mktemp("mcp")
    notes_file = folder / "notes.txt"
    with serve_http("remote") as url, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-parent-process-key")  # servers must not inherit it
        manager = start_manager(
            folder,
            {
                "notes": stdio_entry(env={"NOTES_FILE": str(notes_file), "TOKEN": "${NOTES_TOKEN}"}),
                "trusted": stdio_entry(
                    trust=True, tools=["echo", "files.read"], env={"NOTES_FILE": str(notes_file)}
                ),
                "remote": {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}},
            },
        )
        manager.wait_for_startup()
        yield manager, folder
        manager.close()


def test_stdio_and_http_tools_answer_in_a_fixed_order(servers: tuple[MCPServerManager, Path]) -> None:
    manager, _ = servers
    assert [s.state for s in manager.statuses()] == ["ready", "ready", "ready"]
    tools = tools_by_name(manager)
    assert tools["notes__echo"].invoke({"text": "你好, MCP"}) == "你好, MCP"
    assert tools["remote__add"].invoke({"a": 2, "b": 40}) == "42"
    assert tools["trusted__files_read"].invoke({"path": "a.txt"}) == "read a.txt"
    names = [t.name for t in manager.tools_of(["remote", "notes"])]
    assert names == sorted(n for n in names if n.startswith("notes__")) + sorted(
        n for n in names if n.startswith("remote__")
    )  # servers in configuration order, each server's tools by name
    assert names == [t.name for t in manager.tools_of(["notes", "remote"])]


def test_untrusted_tools_ask_for_approval_and_trusted_ones_do_not(
    servers: tuple[MCPServerManager, Path],
) -> None:
    manager, _ = servers
    tools = tools_by_name(manager)
    assert tools["notes__write_note"].metadata["needs_approval"] is True
    assert tools["remote__echo"].metadata["needs_approval"] is True
    assert "needs_approval" not in tools["trusted__echo"].metadata
    assert sorted(n for n in tools if n.startswith("trusted__")) == ["trusted__echo", "trusted__files_read"]


def test_a_tool_that_raises_is_an_error_answer_the_model_can_read(
    servers: tuple[MCPServerManager, Path],
) -> None:
    manager, _ = servers
    answer = run_through_tools_node(tools_by_name(manager)["notes__fail"], {"message": "the index is locked"})
    assert answer.status == "error"
    assert answer.content.startswith("Error: ") and "the index is locked" in answer.content
    bad_arguments = run_through_tools_node(tools_by_name(manager)["notes__add"], {"a": "two"})
    assert bad_arguments.status == "error" and "Error" in bad_arguments.content


def test_results_are_capped_like_every_tool_result(servers: tuple[MCPServerManager, Path]) -> None:
    manager, _ = servers
    answer = run_through_tools_node(tools_by_name(manager)["notes__big"], {"chars": RESULT_CAP + 5_000})
    assert answer.status != "error"
    assert len(answer.content) < RESULT_CAP + 500 and "[Output cut:" in answer.content


def test_secrets_reach_neither_the_model_nor_the_log(servers: tuple[MCPServerManager, Path]) -> None:
    manager, folder = servers
    tools = tools_by_name(manager)
    assert tools["notes__show_env"].invoke({"variable": "TOKEN"}) == "***"  # the server got it, the model not
    with pytest.raises(ToolError) as failed:
        tools["notes__fail"].invoke({"message": f"bad token {SECRET}"})
    assert SECRET not in str(failed.value) and "bad token ***" in str(failed.value)
    assert tools["notes__show_env"].invoke({"variable": "OPENAI_API_KEY"}) == "(unset)"
    for status in manager.statuses():
        assert SECRET not in status.target and SECRET not in status.detail
    logs = "".join(p.read_text(encoding="utf-8") for p in (folder / "logs").glob("mcp-*.log"))
    assert SECRET not in logs


def test_a_server_that_crashes_mid_call_is_restarted_by_the_next_call(tmp_path: Path) -> None:
    manager = start_manager(tmp_path, {"fragile": stdio_entry(trust=True)})
    try:
        manager.wait_for_startup()
        tools = tools_by_name(manager)
        first_pid = tools["fragile__pid"].invoke({})
        answer = run_through_tools_node(tools["fragile__crash"], {})
        assert answer.status == "error"
        assert "the MCP server fragile stopped during this call (the process exited)" in answer.content
        assert "again restarts the server" in answer.content
        assert manager.status("fragile").state == "stopped"
        second_pid = tools["fragile__pid"].invoke({})
        assert second_pid != first_pid
        assert manager.status("fragile").state == "ready"
        # The failed call told the user already; this restart adds no line.
        assert manager.drain_notices() == []
    finally:
        manager.close()


@pytest.mark.parametrize(
    ("flags", "output_held"),
    [(("--quick",), False), (("--quick",), True), ((), False)],
    ids=["plain", "output-held", "sdk-server"],
)
def test_a_server_that_died_while_idle_answers_the_next_call_from_a_new_process(
    tmp_path: Path, flags: tuple[str, ...], output_held: bool
) -> None:
    """Killed while idle, the server is restarted before the call is sent: the call succeeds
    and the user gets one line, never "stopped during this call".

    Whether the client has read the end of the dead server's output before the call goes out
    is a race. `output_held` settles it the other way: a second writer keeps the output pipe
    open, as a helper process the server started would, so the end is never read and only a
    look at the process itself shows that it is gone. The SDK's server runs threads, which a
    kill ends one by one, so it is waited for until collected, not only until its main thread
    is a zombie.
    """
    manager = start_manager(tmp_path, {"fragile": stdio_entry(*flags, trust=True)})
    try:
        manager.wait_for_startup()
        tools = tools_by_name(manager)
        pid = int(tools["fragile__pid"].invoke({}))
        with contextlib.ExitStack() as stack:
            if output_held:
                stack.enter_context(open(f"/proc/{pid}/fd/1", "wb"))  # the server's stdout pipe
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while not gone(pid):
                assert time.monotonic() < deadline, "the killed server was never collected"
                time.sleep(0.05)
            answer = run_through_tools_node(tools["fragile__echo"], {"text": "still here"})
            assert answer.status == "success", answer.content
            assert answer.content == "still here"
        assert int(tools["fragile__pid"].invoke({})) != pid
        assert manager.status("fragile").state == "ready"
        assert manager.drain_notices() == [
            "MCP server fragile had stopped while idle (the process exited); the next call restarted it."
        ]
        assert manager.drain_notices() == []
    finally:
        manager.close()


def test_a_call_that_outlasts_its_timeout_is_abandoned_and_the_server_keeps_serving(tmp_path: Path) -> None:
    # Two seconds: what the call is abandoned after, and ample for the echo that follows.
    manager = start_manager(tmp_path, {"slow": stdio_entry(trust=True, timeout=2)})
    try:
        manager.wait_for_startup()
        tools = tools_by_name(manager)
        started = time.monotonic()
        answer = run_through_tools_node(tools["slow__sleep"], {"seconds": 3600})
        assert time.monotonic() - started < 60  # abandoned, not waited for
        assert answer.status == "error" and "no answer from the MCP server slow within 2 s" in answer.content
        assert tools["slow__echo"].invoke({"text": "ok"}) == "ok"
    finally:
        manager.close()


def test_ctrl_c_abandons_a_waiting_call_at_once_in_its_own_session_only(tmp_path: Path) -> None:
    """Two sessions of one process wait for the same server; cancelling one abandons its
    call at once while the other's still waits, until that session is cancelled too."""
    manager = start_manager(tmp_path, {"slow": stdio_entry(trust=True)})
    first, second = SessionScope("first", tmp_path), SessionScope("second", tmp_path)
    answers: dict[str, ToolMessage] = {}
    try:
        manager.wait_for_startup()
        sleep = tools_by_name(manager)["slow__sleep"]
        waiting = [
            threading.Thread(
                target=lambda s=scope: answers.__setitem__(
                    s.session_id, run_through_tools_node(sleep, {"seconds": 3600}, RunContext(scope=s))
                )
            )
            for scope in (first, second)
        ]
        for thread in waiting:
            thread.start()
        time.sleep(0.5)
        started = time.monotonic()
        first.cancel()
        waiting[0].join(60)
        assert time.monotonic() - started < 60  # abandoned, not waited for
        assert "cancelled: the user pressed Ctrl-C" in str(answers["first"].content)
        time.sleep(0.5)
        assert "second" not in answers and waiting[1].is_alive()  # another session's call goes on
        second.cancel()
        waiting[1].join(60)
        assert "cancelled: the user pressed Ctrl-C" in str(answers["second"].content)
    finally:
        manager.close()


def test_a_hanging_server_is_skipped_with_one_notice_and_stopped(tmp_path: Path) -> None:
    marker = f"hang-{uuid.uuid4().hex[:8]}"
    # "ok" answers without the SDK's import, so it starts within the 2 s however busy the machine.
    manager = start_manager(
        tmp_path,
        {"hang": stdio_entry("--hang", "--name", marker), "ok": stdio_entry("--quick", trust=True)},
        startup_timeout=2.0,
    )
    assert manager.status("hang").state == "starting"  # start() never waits for a server
    try:
        manager.wait_for_startup()
        hang, ok = manager.statuses()
        assert hang.state == "failed" and hang.detail == "did not start within 2 s (MCP_STARTUP_TIMEOUT)"
        assert ok.state == "ready" and ok.tools
        assert tools_by_name(manager)["ok__add"].invoke({"a": 2, "b": 40}) == "42"
        notices = manager.drain_notices()
        assert notices == [
            "MCP server hang: did not start within 2 s (MCP_STARTUP_TIMEOUT); its tools are skipped (/mcp lists servers)."
        ]
        assert manager.drain_notices() == []
        assert manager.tools_of(["hang"]) == []
        deadline = time.monotonic() + 30
        while processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_with(marker) == []
    finally:
        manager.close()


def test_start_failures_say_why_in_one_line(tmp_path: Path) -> None:
    manager = start_manager(
        tmp_path,
        {
            "broken": stdio_entry("--fail-start"),
            "missing": {"command": "no-such-program-for-mcp"},
            "unset": stdio_entry(env={"KEY": "${NOT_SET_ANYWHERE}"}),
            "nobody": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
        },
    )
    try:
        manager.wait_for_startup()
        details = {s.handle: s.detail for s in manager.statuses()}
        assert details["broken"] == "the process exited (notes server: cannot open the database)"
        assert (
            details["missing"]
            == "cannot run 'no-such-program-for-mcp': no such program (check 'command' and PATH)"
        )
        assert (
            details["unset"] == "needs NOT_SET_ANYWHERE, which is not set; set it in the environment or .env"
        )
        assert details["nobody"] == "cannot connect to http://127.0.0.1:9/mcp"
        assert len(manager.drain_notices()) == 4
        assert all(s.state == "failed" for s in manager.statuses())
    finally:
        manager.close()


def test_a_process_that_exited_is_named_with_last_words_its_reader_took_in_late(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread reading a server's stderr may take in the last line a moment after the
    process has exited (under load the failure read "the process exited" alone, once in
    CI): the description waits, briefly, for the reader to reach the pipe's end."""
    from generalAgent.tools.mcp import server as mcp_server

    pump = mcp_server.StderrLog._pump

    def late_pump(self: Any, read_end: int) -> None:
        time.sleep(0.2)
        pump(self, read_end)

    monkeypatch.setattr(mcp_server.StderrLog, "_pump", late_pump)
    manager = start_manager(tmp_path, {"broken": stdio_entry("--fail-start")})
    try:
        manager.wait_for_startup()
        details = {s.handle: s.detail for s in manager.statuses()}
        assert details["broken"] == "the process exited (notes server: cannot open the database)"
    finally:
        manager.close()


def test_a_disabled_server_starts_only_when_asked(tmp_path: Path) -> None:
    manager = start_manager(tmp_path, {"later": stdio_entry(enabled=False, trust=True)})
    try:
        manager.wait_for_startup()
        assert manager.status("later").state == "off" and manager.loaded_handles() == []
        status = manager.load("later")
        assert status.state == "ready" and "later__echo" in manager.tool_names("later")
        assert manager.loaded_handles() == ["later"]
    finally:
        manager.close()


def test_an_http_server_that_went_away_is_a_clear_error(tmp_path: Path) -> None:
    with serve_http("gone") as url:
        manager = start_manager(tmp_path, {"gone": {"type": "http", "url": url, "trust": True}})
        manager.wait_for_startup()
        tools = tools_by_name(manager)
        assert tools["gone__echo"].invoke({"text": "up"}) == "up"
    try:
        started = time.monotonic()
        # The connection could not be opened, so the call never left: the server is reported
        # as not running, never as "stopped during this call" (which says it may have run).
        with pytest.raises(ToolError) as raised:
            tools["gone__echo"].invoke({"text": "down"})
        assert time.monotonic() - started < 30
        assert str(raised.value) == (
            f"the MCP server gone is not running and could not be restarted: cannot connect to {url}. "
            "Tell the user."
        )
        assert manager.status("gone").state == "failed"
    finally:
        manager.close()


def test_an_http_server_restarted_while_idle_gets_a_new_session_and_the_call(tmp_path: Path) -> None:
    """The restarted server answers 404 to the old session, refusing the call unread: the
    client opens a new session and sends the call there, once (as the MCP specification asks)."""
    with serve_http("again") as url:
        manager = start_manager(tmp_path, {"again": {"type": "http", "url": url, "trust": True}})
        manager.wait_for_startup()
        tools = tools_by_name(manager)
        assert tools["again__echo"].invoke({"text": "first"}) == "first"
    try:
        with serve_http("again", port=int(urlsplit(url).port or 0)):
            answer = run_through_tools_node(tools["again__echo"], {"text": "second"})
            assert answer.status == "success", answer.content
            assert answer.content == "second"
            assert tools["again__add"].invoke({"a": 2, "b": 3}) == "5"
        i18n.use_language("zh")  # the line is the terminal's: translated, its fields kept
        try:
            notices = manager.drain_notices(i18n._)
        finally:
            i18n.use_language("en")
        assert notices == ["MCP 服务器 again 在空闲时已停止（服务器已结束它的会话），下一次调用已将其重启。"]
    finally:
        manager.close()


def test_servers_that_cannot_be_set_up_fail_instead_of_hanging_their_callers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import generalAgent.tools.mcp.server as server_module

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no room for the server's log")

    monkeypatch.setattr(server_module, "MCPServer", broken)
    manager = start_manager(tmp_path, {"notes": stdio_entry()})
    try:
        finished = threading.Event()
        threading.Thread(target=lambda: (manager.wait_for_startup(), finished.set()), daemon=True).start()
        assert finished.wait(60), "waiting for start-up never returned"
        status = manager.status("notes")
        assert status.state == "failed" and "no room for the server's log" in status.detail
        assert any("could not be set up" in notice for notice in manager.drain_notices())
        assert manager.tools_of(["notes"]) == []
    finally:
        manager.close()
