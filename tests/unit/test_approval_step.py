"""The approval step in the real graph: each call of a batch is asked once and run at most once.

A model message holds n calls of a tool that always asks (n = 1, 2, 5) and one sibling call
that does not; every mix of answers (y / n / a / k) goes through `run_turn`, the function
the chat and `-p` use, and each tool counts its runs. Ctrl-C between two answers runs
nothing. A thread stored by the old code (an interrupt inside the tool, `approved_tools`
written twice in one step) opens and goes on.
"""

from __future__ import annotations

import io
import itertools
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from rich.console import Console

from generalAgent.cli.render import TerminalView
from generalAgent.cli.turns import STOPPED_TOOL, open_call_answers, run_turn
from generalAgent.config.settings import Settings, load_settings
from generalAgent.graph.checkpoints import open_sqlite_checkpointer
from generalAgent.graph.turn import main_turn_input
from generalAgent.tools.approval import NEEDS_APPROVAL
from generalAgent.tools.registry import ToolSpec
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.history import stored_history_problems
from tests.support.old_threads import store_thread_of_the_double_approval_bug
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

ANSWERS = {"y": "yes", "n": "no", "a": "always", "k": "keep"}


class Counter:
    """What each tool ran, in a thread-safe list (the tools node runs calls in parallel)."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self._lock = threading.Lock()

    def add(self, what: str) -> None:
        with self._lock:
            self.runs.append(what)


def counting_tools(counter: Counter) -> list[BaseTool]:
    @tool("guarded")
    def guarded(n: int) -> str:
        """A side effect the user must approve."""
        counter.add(f"guarded {n}")
        return f"guarded {n} ran"

    @tool("sibling")
    def sibling() -> str:
        """A call in the same message that needs no approval."""
        counter.add("sibling")
        return "sibling ran"

    guarded.metadata = {NEEDS_APPROVAL: True}
    return [guarded, sibling]


def agent_with(settings: Settings, model: ScriptedChatModel, counter: Counter, checkpointer: Any = None):
    parts, graph = build_test_agent(settings, model, checkpointer)
    for built in counting_tools(counter):
        parts.registry.register(ToolSpec(built.name, "core", "test", built.description), built)
    return graph


@dataclass
class SharedAgent:
    """One graph for the many answer mixes (building one costs more than a turn); each
    case runs on a thread of its own with the counter and the model's script reset."""

    settings: Settings
    model: ScriptedChatModel
    counter: Counter
    graph: Any


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> SharedAgent:
    settings = load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
        paths={"data_dir": tmp_path_factory.mktemp("data")},
    )
    model, counter = ScriptedChatModel(), Counter()
    return SharedAgent(settings, model, counter, agent_with(settings, model, counter))


def batch(n: int) -> AIMessage:
    calls = [tool_call("guarded", {"n": i}, f"g{i}") for i in range(n)]
    return ai("", *calls, tool_call("sibling", {}, "s"))


def view_answering(answers: list[str], asked: list[str]) -> TerminalView:
    def approve(request: dict[str, Any]) -> str:
        asked.append(request["call_id"])
        answer = answers.pop(0)
        if answer == "^C":
            raise KeyboardInterrupt
        return ANSWERS[answer]

    return TerminalView(Console(file=io.StringIO()), approver=approve)


def expected_runs(mix: str) -> tuple[list[str], int]:
    """Which guarded calls run, and how many questions are asked: after an "a" or "k", the
    remaining calls of the tool are approved without asking."""
    runs, asked, remembered = [], 0, False
    for number, answer in enumerate(mix):
        if not remembered:
            asked += 1
            remembered = answer in "ak"
        if remembered or answer == "y":
            runs.append(f"guarded {number}")
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
    counter, graph, settings = shared.counter, shared.graph, shared.settings
    counter.runs.clear()
    shared.model.replies = [batch(len(mix)), ai("done")]
    config = thread(f"mix-{len(mix)}-{mix}")
    asked: list[str] = []
    approved: set[str] = set()
    result = run_turn(
        graph,
        config,
        user_turn("go", settings, session_id=config["configurable"]["thread_id"]),
        view_answering(list(mix), asked),
        lambda exc: None,
        approved=approved,
    )
    assert result.ok and result.answer == "done", result.error
    runs, questions = expected_runs(mix)
    assert sorted(r for r in counter.runs if r != "sibling") == runs
    assert counter.runs.count("sibling") == 1
    assert len(asked) == len(set(asked)) == questions
    state = graph.get_state(config).values
    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert sorted(m.tool_call_id for m in answers) == sorted([*(f"g{i}" for i in range(len(mix))), "s"])
    refused = {m.tool_call_id for m in answers if m.status == "error"}
    assert refused == {f"g{i}" for i, a in enumerate(mix) if f"guarded {i}" not in runs}
    assert (state.get("approved_tools") or []) == (["guarded"] if "k" in mix[:questions] else [])
    assert approved == ({"guarded"} if set("ak") & set(mix[:questions]) else set())
    assert not stored_history_problems(state["messages"])


@pytest.mark.parametrize("stop_at", [0, 1, 4])
def test_ctrl_c_between_answers_runs_nothing(settings: Settings, stop_at: int) -> None:
    counter = Counter()
    model = ScriptedChatModel(replies=[batch(5), ai("next answer")])
    graph = agent_with(settings, model, counter)
    answers = ["y"] * stop_at + ["^C"]
    result = run_turn(graph, thread(), user_turn("go", settings), view_answering(answers, []), lambda e: None)
    assert result.cancelled
    assert counter.runs == []  # not the approved ones, not the sibling
    messages = graph.get_state(thread()).values["messages"]
    assert not stored_history_problems(messages)
    assert all(m.content.startswith("Cancelled") for m in messages if isinstance(m, ToolMessage))
    after = run_turn(graph, thread(), user_turn("and now?", settings), view_answering([], []), lambda e: None)
    assert after.answer == "next answer" and counter.runs == []


def test_a_refused_call_is_not_asked_again_on_retry(settings: Settings) -> None:
    """/retry after an error re-enters the graph where it stopped: answered calls stay answered."""
    counter = Counter()
    model = ScriptedChatModel(replies=[batch(2), ai("done")])
    graph = agent_with(settings, model, counter)
    asked: list[str] = []
    run_turn(graph, thread(), user_turn("go", settings), view_answering(["y", "n"], asked), lambda e: None)
    again = run_turn(graph, thread(), None, view_answering([], asked), lambda e: None)
    assert again.ok and asked == ["g0", "g1"]
    assert sorted(counter.runs) == ["guarded 0", "sibling"]


def test_a_thread_stored_by_the_old_bug_opens_and_goes_on(settings: Settings) -> None:
    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    stored_answers = store_thread_of_the_double_approval_bug(saver, "t1")
    model = ScriptedChatModel(replies=[ai("going on")])
    graph = agent_with(settings, model, Counter(), saver)
    closing = open_call_answers(graph, thread(), STOPPED_TOOL)
    assert [m.content for m in closing] == stored_answers
    state = graph.invoke(main_turn_input("again", session_id="t1", max_loops=5, closing=closing), thread())
    assert state["messages"][-1].content == "going on"
    assert not stored_history_problems(state["messages"])
    # The answers of the old "always" were never stored: the next command asks again.
    assert not state.get("approved_tools")
    saver.conn.close()
