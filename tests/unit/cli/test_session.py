"""The session controller (agent/session.py): one state reset as a whole, and the turn's
sequence (UserPromptSubmit hooks → prepare → open → run → record) with the real graph, a
real SessionCatalog and real hook commands."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

from generalAgent.agent.loading import LoadedAgent
from generalAgent.agent.session import SessionController, SessionState, TurnRules
from generalAgent.cli.render import TerminalView
from generalAgent.cli.terminal_text import console_lines
from generalAgent.config.settings import Settings
from generalAgent.hooks import Hook, HookSet
from generalAgent.sessions import SessionCatalog
from tests.support.agent import build_test_agent
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

USAGE = {"input_tokens": 120, "output_tokens": 8, "total_tokens": 128}


def recording_hook(event: str, log: Path, tmp_path: Path, block: str = "") -> Hook:
    """A real command that appends the event's name to `log` (and blocks with `block`)."""
    script = tmp_path / f"{event}.py"
    script.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(event['hook_event_name'] + '\\n')\n"
        + (f"print({block!r}, file=sys.stderr)\nsys.exit(2)\n" if block else "")
    )
    return Hook(event, f"{sys.executable} {script}", tmp_path / "settings.json")


@pytest.fixture
def console() -> Console:
    return Console(file=io.StringIO(), width=120, color_system=None)


@pytest.fixture
def catalog(settings: Settings):
    catalog = SessionCatalog(settings.paths.sessions_db)
    yield catalog
    catalog.close()


def terminal_view(console: Console):
    return lambda: contextlib.nullcontext(TerminalView(console, stream_answer=False))


def test_a_message_goes_through_the_hooks_then_the_graph_and_is_recorded(
    settings: Settings, catalog: SessionCatalog, console: Console, tmp_path: Path
) -> None:
    log = tmp_path / "events.log"
    hooks = HookSet(
        tuple(recording_hook(event, log, tmp_path) for event in ("UserPromptSubmit", "Stop")), cwd=tmp_path
    )
    model = ScriptedChatModel(replies=[ai("Hello back.", usage=USAGE)])
    parts, graph = build_test_agent(settings, model)
    agent = LoadedAgent(parts=parts, graph=graph, checkpointer=None, notices=[])
    session = SessionController(settings, catalog, hooks, console_lines(console), cwd=tmp_path)

    outcome = session.send("hello there\nsecond line", lambda: agent, terminal_view(console))

    assert outcome.sent and outcome.result is not None and outcome.result.answer == "Hello back."
    assert log.read_text().splitlines() == ["UserPromptSubmit"]  # Stop is the front end's call
    session.stop()
    assert log.read_text().splitlines() == ["UserPromptSubmit", "Stop"]
    info = catalog.get(session.id)
    assert info is not None and (info.title, info.turns) == ("hello there", 1)
    assert info.usage.input_tokens == 120
    assert session.state.last_turn is not None and session.state.cancelled_turn is None
    assert session.state.context_tokens == 128


def test_a_blocked_message_waits_for_nothing_and_leaves_no_session(
    settings: Settings, catalog: SessionCatalog, console: Console, tmp_path: Path
) -> None:
    log = tmp_path / "events.log"
    hooks = HookSet((recording_hook("UserPromptSubmit", log, tmp_path, block="No secrets."),), cwd=tmp_path)
    session = SessionController(settings, catalog, hooks, console_lines(console), cwd=tmp_path)

    def no_agent() -> LoadedAgent:
        raise AssertionError("a blocked message must not wait for the agent")

    outcome = session.send("my password is hunter2", no_agent, terminal_view(console))

    assert not outcome.sent and "No secrets." in outcome.blocked
    assert "No secrets." in console.file.getvalue()  # type: ignore[attr-defined]
    assert catalog.get(session.id) is None


def test_moving_to_another_session_leaves_nothing_of_this_one(
    settings: Settings, catalog: SessionCatalog, console: Console
) -> None:
    session = SessionController(settings, catalog, HookSet(), console_lines(console))
    first = session.id
    state = session.state
    state.first_line = "old title"
    state.pending_uploads.append(object())
    state.approved.add("run_bash_command")
    state.last_turn = state.cancelled_turn = {"messages": []}
    state.context_tokens = 9000

    session.switch("20260101-0000-abcd", "a resumed one")

    assert session.state == SessionState("20260101-0000-abcd", "a resumed one")
    session.switch()
    assert session.id not in {first, "20260101-0000-abcd"} and session.state.first_line == ""


def test_a_modes_approvals_hold_for_its_turns_and_the_users_always_answers_stay(
    settings: Settings, catalog: SessionCatalog, console: Console, tmp_path: Path
) -> None:
    """An editor's mode (TurnRules) adds approvals for its turns only; the user's own
    "always" answers given in between stay with the session, and only_tools refuses the rest."""
    bash = lambda text: ai("", tool_call("run_bash_command", {"command": f"echo {text}"}))  # noqa: E731
    model = ScriptedChatModel(
        replies=[bash("one"), ai("ran one"), bash("two"), ai("ran two"), bash("three"), ai("ran three")]
        + [bash("four"), ai("refused four")]
    )
    parts, graph = build_test_agent(settings, model)
    agent = LoadedAgent(parts=parts, graph=graph, checkpointer=None, notices=[])
    session = SessionController(
        settings, catalog, HookSet((), cwd=tmp_path), console_lines(console), cwd=tmp_path
    )
    asked: list[str] = []

    def view():
        def approve(request: dict) -> str:
            asked.append(request["tool"])
            return "always"

        return contextlib.nullcontext(TerminalView(console, stream_answer=False, approver=approve))

    session.rules = TurnRules(approved=frozenset({"run_bash_command"}))
    assert session.send("@run_bash_command one", lambda: agent, view).result.answer == "ran one"
    assert asked == [] and session.state.approved == set()  # the mode's approval is not remembered
    session.rules = TurnRules()
    assert session.send("@run_bash_command two", lambda: agent, view).result.answer == "ran two"
    assert asked == ["run_bash_command"] and session.state.approved == {"run_bash_command"}
    assert session.send("@run_bash_command three", lambda: agent, view).result.answer == "ran three"
    assert asked == ["run_bash_command"]  # the user's "always" holds
    session.rules = TurnRules(only_tools=frozenset({"read_file"}))
    assert session.send("@run_bash_command four", lambda: agent, view).result.answer == "refused four"
    answer = graph.get_state(session.config()).values["messages"][-2]
    assert answer.type == "tool" and answer.status == "error" and "refused" in str(answer.content)
