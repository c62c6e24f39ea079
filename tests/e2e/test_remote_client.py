"""The terminal as a client of a served deployment: a real `langgraph dev` server, the real
ChatOpenAI client behind it against the scripted model server, and agent/remote.py (the
engine of `generalagent --server URL`) or the command itself in front.

Each test makes its own thread; the server keeps its files in the module's folder, so a
test can read what a tool on the server wrote, and when.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pexpect
import pytest

from generalAgent.agent.events import (
    ApprovalRequest,
    FilesWritten,
    MessageEnd,
    RetryNotice,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnEvent,
)
from generalAgent.agent.remote import RemoteAgent, RemoteError
from tests.support.environment import without_agent_variables
from tests.support.langgraph_server import KEYS, client_of, free_port, langgraph_dev
from tests.support.openai_server import ImageRules, RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt
from tests.support.turn_views import RecordingView

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def served(
    model_server: ScriptedOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    workdir = tmp_path_factory.mktemp("remote-client")
    with langgraph_dev(model_server, workdir) as url:
        yield url, workdir


def workspace_file(workdir: Path, thread: str, name: str) -> Path:
    return workdir / "data" / "workspaces" / thread / name


def test_a_turn_streams_and_answers(served: tuple[str, Path], model_server: ScriptedOpenAIServer) -> None:
    url, _workdir = served
    model_server.add(
        Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})]),
        Reply(text="It is noon in UTC, says the server.", prompt_tokens=1500, cached_tokens=1024),
    )
    view = RecordingView()
    with RemoteAgent(url, KEYS["alice"]) as agent:
        thread = agent.new_thread("What time is it? (remote-1)")
        result = agent.run_turn(thread, "What time is it? (remote-1)", view)
    assert result.ok, result.error
    assert result.answer == "It is noon in UTC, says the server."
    # Streamed in pieces, as the local chat shows them, then the same typed events.
    pieces = [e.text for e in view.of(TextChunk)]
    assert len(pieces) > 1 and "".join(pieces) == result.answer
    [start] = view.of(ToolStart)
    [end] = view.of(ToolEnd)
    assert start.name == "now" and start.args == {"timezone": "UTC"}
    assert end.call_id == start.call_id and "UTC" in end.content and not end.is_error
    assert len(view.of(MessageEnd)) == 2 and view.closed and not view.asked
    assert result.usage.model_calls == 2 and result.usage.cached_tokens == 1024
    assert result.usage.input_tokens >= 1500


@pytest.mark.parametrize("answer", ["yes", "no"])
def test_an_approval_is_asked_here_and_the_file_changes_only_after_yes(
    answer: str, served: tuple[str, Path], model_server: ScriptedOpenAIServer
) -> None:
    url, workdir = served
    model_server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/notes.txt", "content": "first draft"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/notes.txt", "content": "second draft"})]),
        Reply(text="Finished with the notes."),
    )
    seen_while_asked: list[str] = []
    with RemoteAgent(url, KEYS["alice"]) as agent:
        thread = agent.new_thread()
        notes = workspace_file(workdir, thread, "temp/notes.txt")

        def decide(request: ApprovalRequest) -> str:
            seen_while_asked.append(notes.read_text())
            return answer

        view = RecordingView(decide)
        result = agent.run_turn(thread, f"Write the notes twice ({answer})", view)
    assert result.ok, result.error
    # The new file needed no question; replacing it did, asked through this client.
    [request] = view.asked
    assert request.tool == "write_file" and request.args["content"] == "second draft"
    assert request.reason_template == "changes {path}, an existing file outside {folder}/"
    assert seen_while_asked == ["first draft"]
    assert notes.read_text() == ("second draft" if answer == "yes" else "first draft")
    written = [path for event in view.of(FilesWritten) for path in event.paths]
    assert written == [notes] * (2 if answer == "yes" else 1)
    assert result.answer == "Finished with the notes."
    assert not model_server.invalid_history_requests


def test_a_thread_is_resumed_and_listed_for_its_owner_only(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer
) -> None:
    url, _workdir = served
    model_server.add(Reply(text="Noted: the code word is heron."), Reply(text="The code word was heron."))
    with RemoteAgent(url, KEYS["alice"]) as agent:
        thread = agent.new_thread("Remember the code word heron (remote-3)")
        assert agent.run_turn(thread, "Remember the code word heron (remote-3)", RecordingView()).ok
    # Another process, later: the thread by its id, with its history.
    with RemoteAgent(url, KEYS["alice"]) as agent:
        found = agent.thread(thread)
        assert found.title == "Remember the code word heron (remote-3)"
        assert thread in [t.id for t in agent.threads()]
        result = agent.run_turn(found.id, "What was the code word? (remote-3b)", RecordingView())
    assert result.answer == "The code word was heron."
    last = model_server.chat_requests[-1].messages
    assert any("heron (remote-3)" in str(m.get("content")) for m in last)
    assert any(m.get("content") == "Noted: the code word is heron." for m in last)
    # Bob neither sees nor resumes it.
    with RemoteAgent(url, KEYS["bob"]) as agent:
        assert thread not in [t.id for t in agent.threads()]
        with pytest.raises(RemoteError, match=f"No thread {thread} of yours"):
            agent.thread(thread)


def test_a_refused_token_and_a_wrong_address_are_one_line(served: tuple[str, Path]) -> None:
    url, _workdir = served
    with RemoteAgent(url, "not-a-key-of-anyone") as agent:
        with pytest.raises(RemoteError) as refused:
            agent.check()
        result = agent.run_turn("00000000-0000-0000-0000-000000000000", "hello", RecordingView())
    assert str(refused.value).startswith(f"The server at {url} refused the token (401)")
    assert "REMOTE_SERVER_TOKEN" in str(refused.value)
    assert result.error is not None and "refused the token" in result.error
    nobody = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with RemoteAgent(nobody, KEYS["alice"]) as agent, pytest.raises(RemoteError) as unreachable:
        agent.check()
    assert str(unreachable.value).startswith(f"Cannot reach the server at {nobody}")
    assert time.monotonic() - started < 5
    with pytest.raises(RemoteError, match="is not a server address"):
        RemoteAgent("localhost:2024")


class StopAtWord(RecordingView):
    """A view whose user presses Ctrl-C when the `count`th piece of the answer arrives."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def on_event(self, event: TurnEvent) -> None:
        super().on_event(event)
        if isinstance(event, TextChunk) and len(self.of(TextChunk)) == self.count:
            raise KeyboardInterrupt


def last_run_once_ended(client, thread: str) -> dict:
    """The thread's last run, waited for (at most 15 s) until the server has ended it."""
    deadline = time.monotonic() + 15
    while (runs := client.runs.list(thread)) and runs[0]["status"] in ("pending", "running"):
        assert time.monotonic() < deadline, runs[0]["status"]
        time.sleep(0.2)
    return runs[0]


def test_ctrl_c_cancels_the_run_on_the_server(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer
) -> None:
    url, _workdir = served
    model_server.add(Reply(text="word " * 400, chunk_delay=0.05))

    view = StopAtWord(1)
    with RemoteAgent(url, KEYS["alice"]) as agent:
        thread = agent.new_thread()
        started = time.monotonic()
        result = agent.run_turn(thread, "Say many words (remote-5)", view)
        assert result.cancelled and view.closed
        assert time.monotonic() - started < 10  # the whole answer would take 25 s
        assert last_run_once_ended(client_of(url), thread)["status"] == "interrupted"


def test_the_part_of_an_answer_seen_before_ctrl_c_is_kept_on_the_server(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer
) -> None:
    # The server's auth forbids a client to write a thread's state, so a stopped answer was
    # lost: the next request showed the model two user messages in a row. The next message
    # now carries what the user saw, and the served graph's repair step stores it.
    url, _workdir = served
    model_server.add(Reply(text="word " * 400, chunk_delay=0.05))

    view = StopAtWord(3)
    with RemoteAgent(url, KEYS["alice"]) as agent:
        thread = agent.new_thread()
        assert agent.run_turn(thread, "Say many words (remote-partial)", view).cancelled
        seen = "".join(e.text for e in view.of(TextChunk))  # type: ignore[attr-defined]
        client = client_of(url)
        last_run_once_ended(client, thread)
        model_server.add(Reply(text="Going on from there."))
        result = agent.run_turn(thread, "Go on (remote-partial)", RecordingView())
        assert result.error is None and result.answer == "Going on from there."
    stored = [(m["type"], m["content"]) for m in client.threads.get_state(thread)["values"]["messages"]]
    assert stored == [
        ("human", "Say many words (remote-partial)"),
        ("ai", f"{seen}\n\n[answer interrupted by the user]"),
        ("human", "Go on (remote-partial)"),
        ("ai", "Going on from there."),
    ]
    sent = model_server.chat_requests[-1].messages
    assert [m["role"] for m in sent if m["role"] != "system"] == ["user", "assistant", "user"]
    assert sent[-2]["content"] == f"{seen}\n\n[answer interrupted by the user]"


def test_a_claimed_partial_answer_of_a_turn_that_was_answered_is_not_stored(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer
) -> None:
    url, _workdir = served
    client = client_of(url)
    thread = client.threads.create()["thread_id"]
    model_server.add(Reply(text="A whole answer."), Reply(text="Fine."))
    client.runs.wait(thread, "generalAgent", input={"messages": [{"role": "user", "content": "Hi (claim)"}]})
    with pytest.raises(httpx.HTTPStatusError) as refused:  # only text, as the user saw it
        client.runs.wait(
            thread,
            "generalAgent",
            input={"messages": [{"role": "user", "content": "x"}], "interrupted_answer": 7},
        )
    assert refused.value.response.status_code == 403
    assert "interrupted_answer must be the text the user saw" in refused.value.response.text
    # A turn that was answered gets no second, claimed answer.
    client.runs.wait(
        thread,
        "generalAgent",
        input={
            "messages": [{"role": "user", "content": "Again (claim)"}],
            "interrupted_answer": "I said yes",
        },
    )
    stored = [m["content"] for m in client.threads.get_state(thread)["values"]["messages"]]
    assert stored == ["Hi (claim)", "A whole answer.", "Again (claim)", "Fine."]


def generalagent(url: str, *args: str, token: str | None, tmp_path: Path) -> subprocess.CompletedProcess:
    env = without_agent_variables(os.environ)
    env.update(GENERALAGENT_CONFIG_DIR=str(tmp_path / "config"), DATA_DIR=str(tmp_path / "data"))
    if token is not None:
        env["REMOTE_SERVER_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "generalAgent", "--server", url, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_print_mode_answers_from_the_server_without_a_local_model(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    url, _workdir = served
    model_server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": "outputs/summary.md", "content": "# Summary"})]),
        Reply(text="The summary is in outputs/summary.md."),
    )
    done = generalagent(url, "-p", "Summarise (remote-6)", token=KEYS["bob"], tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The summary is in outputs/summary.md.\n"
    assert "write_file" in done.stderr and "thread " in done.stderr
    assert "Files written on the server (1):" in done.stderr and "outputs/summary.md" in done.stderr
    # No MODEL_NAME here: the model is the server's.
    assert not (tmp_path / "data" / "sessions.db").exists()

    thread = done.stderr.split("thread ")[1].split()[0]
    model_server.add(Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})]), Reply(text="Noon."))
    streamed = generalagent(
        url,
        "-p",
        "And the time? (remote-6b)",
        "--resume",
        thread,
        "--output-format",
        "stream-json",
        token=KEYS["bob"],
        tmp_path=tmp_path,
    )
    assert streamed.returncode == 0, streamed.stderr
    lines = [json.loads(line) for line in streamed.stdout.splitlines()]
    assert lines[0] == {"type": "start", "session_id": thread, "model": None, "server": url}
    kinds = [line["type"] for line in lines]
    assert "tool_call" in kinds and "tool_result" in kinds and "text" in kinds and kinds[-1] == "result"
    assert lines[-1]["status"] == "answered" and lines[-1]["answer"] == "Noon."
    assert lines[-1]["session_id"] == thread and lines[-1]["usage"]["input_tokens"] > 0


def test_print_mode_with_a_refused_token_says_so_in_one_line(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    url, _workdir = served
    done = generalagent(url, "-p", "hello", token="wrong-token", tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"The server at {url} refused the token (401): set REMOTE_SERVER_TOKEN to a key or token it accepts "
        "(docs/deployment.md)."
    ]


def test_the_chat_on_a_server_asks_here_lists_threads_and_cancels_with_ctrl_c(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    url, workdir = served
    env = without_agent_variables(os.environ)
    env.update(
        GENERALAGENT_CONFIG_DIR=str(tmp_path / "config"),
        DATA_DIR=str(tmp_path / "data"),
        REMOTE_SERVER_TOKEN=KEYS["alice"],
        PROMPT_TOOLKIT_NO_CPR="1",
        TERM="xterm-256color",
        COLUMNS="120",
        NO_COLOR="1",
    )
    model_server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/plan.txt", "content": "plan one"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/plan.txt", "content": "plan two"})]),
        Reply(text="The plan is written twice."),
    )
    child = pexpect.spawn(
        sys.executable,
        ["-m", "generalAgent", "--server", url],
        env=env,
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 120),
    )
    try:
        child.expect("Connected to")
        expect_prompt(child)
        child.sendline("Write the plan twice (remote-chat)")
        child.expect("Approve write_file")
        [plan] = list((workdir / "data" / "workspaces").glob("*/temp/plan.txt"))
        assert plan.read_text() == "plan one"  # the question comes before the change
        child.expect("\\[y\\]es")
        child.sendline("y")
        child.expect("The plan is written twice.")
        child.expect("Files written on the server")
        expect_prompt(child)
        assert plan.read_text() == "plan two"

        child.sendline("/threads")
        child.expect("Write the plan twice")
        expect_prompt(child)

        model_server.add(Reply(text="word " * 400, chunk_delay=0.05))
        child.sendline("Say many words (remote-chat)")
        child.expect("word word")
        child.sendintr()
        child.expect("Interrupted: the run was cancelled on the server.")
        expect_prompt(child)
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
    thread = plan.parent.parent.name
    assert last_run_once_ended(client_of(url), thread)["status"] == "interrupted"


def server_process(port: str) -> int:
    """The pid of this test's `langgraph dev` serving on `port` (a child of this process,
    leading its own process group)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"dev" in command and port.encode() in command:
            return int(proc.name)
    raise AssertionError(f"no langgraph dev on port {port}")


def test_a_server_gone_during_a_turn_is_one_line_at_once(
    model_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    (tmp_path / "doomed").mkdir()
    model_server.add(Reply(text="word " * 400, chunk_delay=0.05))
    killed: list[float] = []
    with langgraph_dev(model_server, tmp_path / "doomed") as url:

        class KillTheServer(RecordingView):
            def on_event(self, event: TurnEvent) -> None:
                super().on_event(event)
                if isinstance(event, TextChunk) and not killed:
                    os.killpg(server_process(url.rsplit(":", 1)[1]), signal.SIGKILL)
                    killed.append(time.monotonic())

        with RemoteAgent(url, KEYS["alice"]) as agent:
            thread = agent.new_thread()
            result = agent.run_turn(thread, "Say many words (remote-gone)", KillTheServer())
    assert killed and time.monotonic() - killed[0] < 5  # no reconnecting for half a minute
    assert result.error is not None and not result.cancelled
    assert result.error.startswith("The connection to the server was lost during the turn")
    assert f"thread {thread}" in result.error and "\n" not in result.error


def test_ctrl_c_at_a_question_leaves_the_thread_usable(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer
) -> None:
    url, workdir = served
    model_server.add(
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/draft.txt", "content": "one"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "temp/draft.txt", "content": "two"})]),
    )

    def walk_away(request: ApprovalRequest) -> str:
        raise KeyboardInterrupt

    with RemoteAgent(url, KEYS["alice"]) as agent:
        thread = agent.new_thread()
        stopped = agent.run_turn(thread, "Draft twice (remote-8)", RecordingView(walk_away))
        assert stopped.cancelled
        draft = workspace_file(workdir, thread, "temp/draft.txt")
        assert draft.read_text() == "one"
        model_server.add(Reply(text="Fine, no second draft."))
        result = agent.run_turn(thread, "Never mind (remote-8b)", RecordingView())
    assert result.ok, result.error
    assert result.answer == "Fine, no second draft."
    assert draft.read_text() == "one"
    assert not model_server.invalid_history_requests


def test_print_mode_refuses_what_nobody_approved_and_runs_what_the_command_line_did(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    url, workdir = served
    first = ToolCall("write_file", {"path": "temp/log.txt", "content": "old"})
    second = ToolCall("write_file", {"path": "temp/log.txt", "content": "new"})
    model_server.add(
        Reply(tool_calls=[first]), Reply(tool_calls=[second]), Reply(text="Could not replace it.")
    )
    refused = generalagent(url, "-p", "Log twice (remote-9)", token=KEYS["alice"], tmp_path=tmp_path)
    assert refused.returncode == 3, refused.stderr
    assert "Refused without asking: write_file" in refused.stderr
    thread = refused.stderr.split("thread ")[1].split()[0]
    log = workspace_file(workdir, thread, "temp/log.txt")
    assert log.read_text() == "old"

    model_server.add(Reply(tool_calls=[second]), Reply(text="Replaced."))
    allowed = generalagent(
        url,
        "-p",
        "Now replace it (remote-9b)",
        "--resume",
        thread,
        "--allowed-tools",
        "write_file",
        token=KEYS["alice"],
        tmp_path=tmp_path,
    )
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == "Replaced.\n" and f"thread {thread}" in allowed.stderr
    assert log.read_text() == "new"


STORY = "Once upon a time a heron waited by the river. " * 6


def marker_of(request: RecordedRequest) -> str:
    first_user = next(m for m in request.messages if m.get("role") == "user")
    return next(mark for mark in ("[A]", "[B]", "[C]") if mark in str(first_user.get("content")))


def test_a_retry_on_the_server_reaches_only_the_client_whose_call_retries(tmp_path: Path) -> None:
    """B streams a long answer; meanwhile A's model request on the same server gets a 429
    and the server's client retries it: A's turn is told (as the local chat would be), B's
    is not; then `-p --output-format stream-json` shows a 500's retry as a line."""
    seen: dict[str, int] = {}
    lock = threading.Lock()
    (tmp_path / "server").mkdir()

    def respond(request: RecordedRequest) -> Reply:
        mark = marker_of(request)
        with lock:
            seen[mark] = seen.get(mark, 0) + 1
            first = seen[mark] == 1
        if mark == "[A]":
            return Reply(status=429, retry_after=1) if first else Reply(text="A is done.")
        if mark == "[C]":
            return Reply(status=500, retry_after=0) if first else Reply(text="C is done.")
        return Reply(text=STORY, chunk_chars=3, chunk_delay=0.08)  # about 8 s of streaming

    with (
        ScriptedOpenAIServer(responder=respond, strict_history=True) as model,
        langgraph_dev(model, tmp_path / "server", {"MODEL_MAX_RETRIES": "2"}, runs_at_once=2) as url,
    ):
        view_a, view_b = RecordingView(), RecordingView()
        results: dict[str, object] = {}

        def run_b() -> None:
            with RemoteAgent(url, KEYS["bob"]) as agent:
                results["B"] = agent.run_turn(agent.new_thread(), "[B] Tell me a story", view_b)

        b = threading.Thread(target=run_b)
        b.start()
        started = time.monotonic()
        while not view_b.of(TextChunk):
            assert time.monotonic() - started < 60, "B never streamed"
            time.sleep(0.05)
        with RemoteAgent(url, KEYS["alice"]) as agent:
            result_a = agent.run_turn(agent.new_thread(), "[A] Hello", view_a)
        assert b.is_alive(), "B was still streaming while A retried"
        b.join(60)
        done = generalagent(
            url, "-p", "[C] Hi", "--output-format", "stream-json", token=KEYS["alice"], tmp_path=tmp_path
        )
    assert result_a.ok and result_a.answer == "A is done.", result_a.error
    assert view_a.of(RetryNotice) == [RetryNotice(429, 1.0, 1, 2)]
    result_b = results["B"]
    assert isinstance(result_b, type(result_a)) and result_b.ok and result_b.answer == STORY
    assert not view_b.of(RetryNotice)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    retries = [line for line in lines if line["type"] == "retry"]
    assert [(r["status"], r["attempt"], r["of"]) for r in retries] == [(500, 1, 2)]
    assert lines[-1]["answer"] == "C is done."


def test_print_mode_sends_the_files_its_paths_name_in_the_message(
    served: tuple[str, Path], model_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    """The server cannot read this machine's files: a #path's text goes in the message, as
    the local chat would give it to the model (a document's as read from it); an image goes
    too, and this server's text-only model gets the line the local chat gives such a model
    (OCR text, or why there is none), never the image part; a name that is not there sends
    nothing, with the local chat's words. Before, the message went as typed and the
    server's model never saw the files."""
    from PIL import Image

    from tests.support.documents import make_docx

    (tmp_path / "notes.txt").write_text("The launch code word is REMOTE-ATTACHED-7731.\n", encoding="utf-8")
    make_docx(
        tmp_path / "plan.docx",
        "Plan",
        ["Phase two starts in WEEK-4412."],
        [["step", "week"], ["two", "4412"]],
    )
    Image.new("RGB", (40, 30), (200, 30, 30)).save(tmp_path / "shot.png")
    model_server.add(Reply(text="The code word is REMOTE-ATTACHED-7731; phase two starts in WEEK-4412."))
    url = served[0]
    done = generalagent(
        url,
        "-p",
        "What do #notes.txt, #plan.docx and #shot.png say? (remote-attach)",
        token=KEYS["bob"],
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    [request] = [r for r in model_server.chat_requests if "(remote-attach)" in str(r.messages)]
    [user] = [m for m in request.messages if m.get("role") == "user" and "(remote-attach)" in str(m)]
    text = str(user["content"])
    assert "REMOTE-ATTACHED-7731" in text and '<attached_file name="notes.txt" type="text">' in text
    assert "WEEK-4412" in text and '<attached_file name="plan.docx" type="docx">' in text
    # test-model is no vision model: the served graph decided as a local chat decides.
    assert "[image: shot.png; this model does not take images" in text and "image_url" not in str(user)
    assert "not sent" not in done.stderr and not request.image_parts

    asked = len(model_server.chat_requests)
    missing = generalagent(
        url, "-p", "Read #nope.txt (remote-attach-2)", token=KEYS["bob"], tmp_path=tmp_path
    )
    assert missing.returncode == 2
    assert "nope.txt" in missing.stderr and "Nothing was sent" in missing.stderr
    assert len(model_server.chat_requests) == asked


def test_images_reach_a_served_vision_model_once_and_are_bounded_here(tmp_path: Path) -> None:
    """Images of a --server message go as image parts: a vision model on the server gets
    them in that turn (stored in the thread's workspace, a placeholder in the history
    after it, as a local chat does); a text-only model's server does not send them (the
    test above). Past the client's count one image is left out, said in one line. Before,
    every image stayed on this machine ("… was not sent: a server's agent is not given
    images from this machine yet")."""
    from PIL import Image

    from generalAgent.graph.images import MAX_SENT_IMAGES

    workdir = tmp_path / "server"
    workdir.mkdir()
    here = tmp_path / "client"
    here.mkdir()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(here / "shot.png")
    for number in range(MAX_SENT_IMAGES + 1):
        Image.new("RGB", (8 + number, 8), (0, 0, 200)).save(here / f"tile-{number:02}.png")
    vision = "qwen2.5-vl-7b-instruct"  # a vision model by its name, as the server decides
    with (
        ScriptedOpenAIServer(model=vision, images=ImageRules(), strict_history=True) as model_server,
        langgraph_dev(model_server, workdir, {"MODEL_NAME": vision}) as url,
    ):
        model_server.add(Reply(text="A red rectangle."), Reply(text="Still red."), Reply(text="Many tiles."))
        done = generalagent(
            url, "-p", "What is in #shot.png? (remote-vision)", token=KEYS["bob"], tmp_path=here
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "A red rectangle.\n" and "not sent" not in done.stderr
        [request] = [r for r in model_server.chat_requests if "(remote-vision)" in str(r.messages)]
        [image] = request.image_parts
        assert image.role == "user" and image.format == "PNG" and (image.width, image.height) == (40, 30)
        thread = done.stderr.split("thread ")[1].split()[0]
        stored = list((workdir / "data" / "workspaces" / thread / ".images").iterdir())
        assert len(stored) == 1 and stored[0].name.endswith("-40x30.png")

        # The next turn sends the placeholder, not the image again (the cached prefix holds).
        again = generalagent(
            url, "-p", "And now? (remote-vision-2)", "--resume", thread, token=KEYS["bob"], tmp_path=here
        )
        assert again.returncode == 0, again.stderr
        [later] = [r for r in model_server.chat_requests if "(remote-vision-2)" in str(r.messages)]
        assert not later.image_parts and "[image: shot.png (40×30)" in str(later.messages)

        many = " ".join(f"#tile-{number:02}.png" for number in range(MAX_SENT_IMAGES + 1))
        bounded = generalagent(url, "-p", f"Count {many} (remote-vision-3)", token=KEYS["bob"], tmp_path=here)
        assert bounded.returncode == 0, bounded.stderr
        last = f"tile-{MAX_SENT_IMAGES:02}.png"
        assert f"{last} was not sent: a message to the server carries at most {MAX_SENT_IMAGES} images" in (
            " ".join(bounded.stderr.split())
        )
        [counted] = [r for r in model_server.chat_requests if "(remote-vision-3)" in str(r.messages)]
        assert len(counted.image_parts) == MAX_SENT_IMAGES
