"""The graph repairs a history a stopped run left invalid, for every client, before the model call."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from generalAgent.config.settings import Settings
from generalAgent.graph.checkpoints import open_sqlite_checkpointer
from generalAgent.graph.history import INTERRUPTED_NOTE, STOPPED_TOOL, with_interrupted_answer
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.history import stored_history_problems
from tests.support.old_threads import store_thread_with_old_mentions, store_thread_with_stored_loops
from tests.support.scripted_model import ScriptedChatModel, ai


def test_calls_a_stopped_run_left_open_are_answered_inside_the_graph(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("it did not finish")])
    _, graph = build_test_agent(settings, model)
    # What a killed process leaves: the model's calls stored, their answers never.
    calls = [{"name": "now", "args": {}, "id": f"call_{n}", "type": "tool_call"} for n in range(2)]
    graph.update_state(
        thread(),
        {"messages": [HumanMessage("what time is it?"), AIMessage("", tool_calls=calls)]},
        as_node="planner",
    )
    # A client that knows nothing of the repair (a LangGraph Server client) just sends its turn.
    state = graph.invoke(user_turn("did it work?", settings), thread())
    kinds = [type(m).__name__ for m in state["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "HumanMessage", "AIMessage"]
    assert all(m.content == STOPPED_TOOL for m in state["messages"] if isinstance(m, ToolMessage))
    assert not stored_history_problems(state["messages"])
    sent = model.requests[-1].messages
    assert [m.content for m in sent if isinstance(m, ToolMessage)] == [STOPPED_TOOL, STOPPED_TOOL]
    assert "did it work?" in str(sent[-1].content)


def test_a_stopped_answer_a_client_saw_is_stored_once_before_its_next_message(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("Going on."), ai("Fine.")])
    _, graph = build_test_agent(settings, model)
    # What a served run stopped mid-answer leaves: the user's message, no answer.
    graph.update_state(thread(), {"messages": [HumanMessage("Tell me a long story")]}, as_node="planner")
    turn = {**user_turn("go on", settings), "interrupted_answer": "Once upon a time"}
    state = graph.invoke(turn, thread())
    assert [m.content for m in state["messages"]] == [
        "Tell me a long story",
        f"Once upon a time\n\n{INTERRUPTED_NOTE}",
        "go on",
        "Going on.",
    ]
    assert not state.get("interrupted_answer")  # used once
    assert [m.content for m in model.requests[-1].messages[1:3]] == [
        "Tell me a long story",
        f"Once upon a time\n\n{INTERRUPTED_NOTE}",
    ]
    # A turn that had its answer gets no claimed one.
    state = graph.invoke({**user_turn("and?", settings), "interrupted_answer": "I said yes"}, thread())
    assert [m.content for m in state["messages"]][-2:] == ["and?", "Fine."]
    assert "I said yes" not in str([m.content for m in state["messages"]])


def test_a_stopped_answer_is_cut_to_the_answer_limit_and_needs_a_turn_without_one() -> None:
    asked, again = HumanMessage("q"), HumanMessage("next")
    stored = with_interrupted_answer([asked, again], "x" * 50, 10)
    assert stored is not None and stored[1].content == "x" * 10 + f"\n\n{INTERRUPTED_NOTE}"
    assert with_interrupted_answer([asked, AIMessage("a"), again], "seen", 10) is None
    assert with_interrupted_answer([again], "seen", 10) is None
    assert with_interrupted_answer([asked, again], "  ", 10) is None


def test_an_ordinary_turn_takes_no_repair_step(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("hello"), ai("again")])
    _, graph = build_test_agent(settings, model)
    for text in ("hi", "and again"):
        steps = [node for update in graph.stream(user_turn(text, settings), thread()) for node in update]
        assert steps == ["planner"]


def test_a_thread_stored_with_the_old_state_keys_goes_on(settings: Settings) -> None:
    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    store_thread_with_stored_loops(saver, "t1")
    model = ScriptedChatModel(replies=[ai("The code word was heron.")])
    _, graph = build_test_agent(settings, model, saver)
    state = graph.invoke(user_turn("What was the code word?", settings), thread())
    assert [m.content for m in state["messages"]][:2] == [
        "Remember the code word heron.",
        "Noted: the code word is heron.",
    ]
    assert state["messages"][-1].content == "The code word was heron."
    assert "loops" not in state and "context_id" not in state
    assert [m.content for m in model.requests[-1].messages[1:3]] == [
        "Remember the code word heron.",
        "Noted: the code word is heron.",
    ]
    saver.conn.close()


def test_a_thread_stored_with_the_old_mentions_key_keeps_its_tools_for_every_client(
    settings: Settings,
) -> None:
    """Releases before 0.2 stored @names as `mentioned_agents`: the graph carries them to
    `mentions` in its repair step, so a client that only sends its turn keeps the tools."""
    saver = open_sqlite_checkpointer(settings.paths.sessions_db)
    store_thread_with_old_mentions(saver, "t1", ["run_bash_command"])
    model = ScriptedChatModel(replies=[ai("going on"), ai("here"), ai("still here")])
    _, graph = build_test_agent(settings, model, saver)
    steps = [node for update in graph.stream(user_turn("go on", settings), thread()) for node in update]
    assert steps == ["repair", "planner"]
    assert "run_bash_command" in model.requests[-1].tools
    state = graph.get_state(thread()).values
    assert state["mentions"] == ["run_bash_command"]
    assert state.get("mentioned_agents") is None  # carried once, emptied
    assert [m.content for m in state["messages"]][:2] == [
        "@run_bash_command get ready",
        "Ready when you are.",
    ]
    assert "mentioned_agents" not in graph.invoke(user_turn("and now?", settings), thread())  # the output
    steps = [node for update in graph.stream(user_turn("and again", settings), thread()) for node in update]
    assert steps == ["planner"]  # carried once: later turns take no extra step
    assert "run_bash_command" in model.requests[-1].tools
    saver.conn.close()
