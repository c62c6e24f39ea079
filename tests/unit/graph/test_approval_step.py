"""The approval step in the real graph: each call of a batch is asked once and run at most once.

A model message holds n calls of run_bash_command, which always asks (n = 1, 2, 5), and a
sibling call that does not; every mix of answers (y / n / a / k) goes through `run_turn`, the function
the chat and `-p` use; the commands append to a log and the sibling saves a note, so every
run is counted. Ctrl-C between two answers runs
nothing. A thread stored by the old code (an interrupt inside the tool, `approved_tools`
written twice in one step) opens and goes on.
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from rich.console import Console

from generalAgent.agent.turns import run_turn
from generalAgent.cli.render import TerminalView
from generalAgent.config.settings import Settings, load_settings
from generalAgent.graph.checkpoints import open_sqlite_checkpointer
from generalAgent.graph.history import settle_unfinished_step
from generalAgent.graph.turn import main_turn_input
from generalAgent.knowledge import open_store
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.history import stored_history_problems
from tests.support.old_threads import store_thread_of_the_double_approval_bug
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

ANSWERS = {"y": "yes", "n": "no", "a": "always", "k": "keep"}
GUARDED = "run_bash_command"  # every call asks


class Runs:
    """What ran in one case's session: the commands' lines in outputs/runs.log, and the
    sibling's notes in the knowledge base."""

    def __init__(self, settings: Settings, session: str) -> None:
        self.settings = settings
        self.session = session

    def commands(self) -> list[str]:
        log = self.settings.paths.workspaces_dir / self.session / "outputs" / "runs.log"
        return sorted(log.read_text().splitlines()) if log.exists() else []

    def notes(self) -> int:
        with open_store(self.settings) as store:
            items = store.list_knowledge(limit=1000)
        return sum(1 for item in items if item.title == f"sibling of {self.session}")


@dataclass
class SharedAgent:
    """One graph for the many answer mixes (building one costs more than a turn); each
    case runs in a session of its own with the model's script reset."""

    settings: Settings
    model: ScriptedChatModel
    graph: Any


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> SharedAgent:
    settings = load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
        paths={"data_dir": tmp_path_factory.mktemp("data")},
    )
    model = ScriptedChatModel()
    return SharedAgent(settings, model, build_test_agent(settings, model)[1])


def batch(n: int, session: str) -> AIMessage:
    """n commands that need approval, and a sibling call (a note) that does not."""
    calls = [tool_call(GUARDED, {"command": f"echo {i} >> outputs/runs.log"}, f"g{i}") for i in range(n)]
    note = {"title": f"sibling of {session}", "content": "Saved beside the commands."}
    return ai("", *calls, tool_call("add_knowledge", note, "s"))


def turn(text: str, settings: Settings, session: str) -> dict[str, Any]:
    return user_turn(text, settings, session_id=session, mentions=[GUARDED])


def view_answering(answers: list[str], asked: list[str]) -> TerminalView:
    def approve(request: dict[str, Any]) -> str:
        asked.append(request["call_id"])
        answer = answers.pop(0)
        if answer == "^C":
            raise KeyboardInterrupt
        return ANSWERS[answer]

    return TerminalView(Console(file=io.StringIO()), approver=approve)


def no_description(exc: BaseException) -> None:
    """Errors are not expected here: run_turn reports them as "Unexpected error"."""


def expected_runs(mix: str) -> tuple[list[str], int]:
    """Which guarded calls run, and how many questions are asked: after an "a" or "k", the
    remaining calls of the tool are approved without asking."""
    runs, asked, remembered = [], 0, False
    for number, answer in enumerate(mix):
        if not remembered:
            asked += 1
            remembered = answer in "ak"
        if remembered or answer == "y":
            runs.append(str(number))
    return runs, asked


def distinct_mixes(calls: int, answers: str) -> list[str]:
    """Every mix of `answers` for `calls` calls, up to what is asked: after an "a" or a "k"
    nobody is asked about that tool again, so mixes that differ only later behave alike."""
    mixes = set()
    for mix in itertools.product(answers, repeat=calls):
        text = "".join(mix)
        cut = min((text.index(c) + 1 for c in "ak" if c in text), default=calls)
        mixes.add(text[:cut] + "y" * (calls - cut))  # what follows is never asked
    return sorted(mixes)


MIXES = [*distinct_mixes(1, "ynak"), *distinct_mixes(2, "ynak"), *distinct_mixes(5, "yna")]


@pytest.mark.parametrize("mix", MIXES)
def test_each_call_is_asked_once_and_runs_at_most_once(shared: SharedAgent, mix: str) -> None:
    graph, settings = shared.graph, shared.settings
    session = f"mix-{len(mix)}-{mix}"
    runs = Runs(settings, session)
    shared.model.replies = [batch(len(mix), session), ai("done")]
    asked: list[str] = []
    approved: set[str] = set()
    result = run_turn(
        graph,
        thread(session),
        turn("go", settings, session),
        view_answering(list(mix), asked),
        no_description,
        approved=approved,
    )
    assert result.ok and result.answer == "done", result.error
    expected, questions = expected_runs(mix)
    assert runs.commands() == expected
    assert runs.notes() == 1
    assert len(asked) == len(set(asked)) == questions
    state = graph.get_state(thread(session)).values
    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert sorted(m.tool_call_id for m in answers) == sorted([*(f"g{i}" for i in range(len(mix))), "s"])
    refused = {m.tool_call_id for m in answers if m.status == "error"}
    assert refused == {f"g{i}" for i in range(len(mix)) if str(i) not in expected}
    assert (state.get("approved_tools") or []) == ([GUARDED] if "k" in mix[:questions] else [])
    assert approved == ({GUARDED} if set("ak") & set(mix[:questions]) else set())
    assert not stored_history_problems(state["messages"])


@pytest.mark.parametrize("stop_at", [0, 1, 4])
def test_ctrl_c_between_answers_runs_nothing(shared: SharedAgent, stop_at: int) -> None:
    graph, settings = shared.graph, shared.settings
    session = f"ctrl-c-{stop_at}"
    runs = Runs(settings, session)
    shared.model.replies = [batch(5, session), ai("next answer")]
    answers = ["y"] * stop_at + ["^C"]
    result = run_turn(
        graph, thread(session), turn("go", settings, session), view_answering(answers, []), print
    )
    assert result.cancelled
    assert runs.commands() == [] and runs.notes() == 0  # not the approved ones, not the sibling
    messages = graph.get_state(thread(session)).values["messages"]
    assert not stored_history_problems(messages)
    assert all(m.content.startswith("Cancelled") for m in messages if isinstance(m, ToolMessage))
    after = run_turn(
        graph, thread(session), turn("and now?", settings, session), view_answering([], []), print
    )
    assert after.answer == "next answer"
    assert runs.commands() == [] and runs.notes() == 0


def test_a_thread_stored_by_the_old_bug_opens_and_goes_on(settings: Settings) -> None:
    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    stored_answers = store_thread_of_the_double_approval_bug(saver, "t1")
    model = ScriptedChatModel(replies=[ai("going on")])
    _, graph = build_test_agent(settings, model, saver)
    assert settle_unfinished_step(graph, thread())  # the answers the failed step left are stored
    state = graph.invoke(main_turn_input("again", session_id="t1", max_loops=5), thread())
    answers = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answers == stored_answers
    assert state["messages"][-1].content == "going on"
    assert not stored_history_problems(state["messages"])
    # The answers of the old "always" were never stored: the next command asks again.
    assert not state.get("approved_tools")
    saver.conn.close()
