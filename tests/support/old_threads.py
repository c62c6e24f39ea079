"""Threads as older versions of generalAgent stored them, for the tests that they still open.

`store_thread_of_the_double_approval_bug` writes what the old approval left behind when the
user answered "always" to two commands of one model message: the tools step saved both
answers, then applying its writes failed (`approved_tools` written twice in one step,
InvalidUpdateError), and from then on every read of the thread failed the same way.
The graph below has the old shape that matters: the same node names, `approved_tools`
without a reducer, and a tools step that writes it once per call.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import InvalidUpdateError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command

OLD_COMMANDS = ("echo one", "echo two")


class OldState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    approved_tools: list[str]  # no reducer: one write per step at most


def store_thread_of_the_double_approval_bug(
    saver: BaseCheckpointSaver, thread_id: str, question: str = "run both"
) -> list[str]:
    """Store the broken thread under `thread_id`; returns the tool answers it holds."""
    calls = [
        {"name": "run_bash_command", "args": {"command": c}, "id": f"call_old_{n}", "type": "tool_call"}
        for n, c in enumerate(OLD_COMMANDS)
    ]
    answers = [f"exit status 0\n{c.split()[-1]}" for c in OLD_COMMANDS]

    def planner(state: OldState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    def tools(state: OldState) -> list[Command]:
        return [
            Command(
                update={
                    "approved_tools": ["run_bash_command"],
                    "messages": [ToolMessage(answer, tool_call_id=call["id"], name="run_bash_command")],
                }
            )
            for call, answer in zip(calls, answers, strict=True)
        ]

    graph = StateGraph(OldState)
    graph.add_node("planner", planner)
    graph.add_node("tools", tools)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "tools")
    graph.add_edge("tools", END)
    compiled = graph.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread_id}}
    try:
        compiled.invoke({"messages": [HumanMessage(question)]}, config)
    except InvalidUpdateError:
        return answers
    raise AssertionError("the old graph was expected to fail as the old code did")


class StateWithStoredLoops(TypedDict, total=False):
    """The state before the derived and sub-agent-only keys left AgentState."""

    messages: Annotated[list[AnyMessage], add_messages]
    loops: int
    context_id: str
    parent_context: str | None
    agent_profile: str | None
    allowed_tools: list[str] | None
    workspace_id: str


def store_thread_with_stored_loops(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """A finished main turn as the state of 19 keys stored it (`loops`, `context_id`, ...)."""

    def planner(state: StateWithStoredLoops) -> dict[str, Any]:
        return {"messages": [AIMessage(content="Noted: the code word is heron.")], "loops": 1}

    graph = StateGraph(StateWithStoredLoops)
    graph.add_node("planner", planner)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", END)
    graph.compile(checkpointer=saver).invoke(
        {
            "messages": [HumanMessage("Remember the code word heron.")],
            "context_id": "main",
            "parent_context": None,
            "agent_profile": None,
            "allowed_tools": None,
            "workspace_id": thread_id,
        },
        {"configurable": {"thread_id": thread_id}},
    )


class StateWithMentionedAgents(TypedDict, total=False):
    """The state before release 0.2, which kept the session's @names as `mentioned_agents`."""

    messages: Annotated[list[AnyMessage], add_messages]
    mentioned_agents: list[str]
    new_mentioned_agents: list[str]
    workspace_id: str


def store_thread_with_old_mentions(saver: BaseCheckpointSaver, thread_id: str, mentioned: list[str]) -> None:
    """A finished turn in which the user @mentioned `mentioned`, stored under the old keys."""

    def planner(state: StateWithMentionedAgents) -> dict[str, Any]:
        return {"messages": [AIMessage(content="Ready when you are.")], "new_mentioned_agents": []}

    graph = StateGraph(StateWithMentionedAgents)
    graph.add_node("planner", planner)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", END)
    graph.compile(checkpointer=saver).invoke(
        {
            "messages": [HumanMessage(" ".join(f"@{name}" for name in mentioned) + " get ready")],
            "mentioned_agents": mentioned,
            "new_mentioned_agents": mentioned,
            "workspace_id": thread_id,
        },
        {"configurable": {"thread_id": thread_id}},
    )
