"""MCP tools in the graph: when a server's tools join a session, the @mention tier, and a call
through the real graph to a real server (the model is scripted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from generalAgent.config.settings import Settings, load_settings
from generalAgent.graph.builder import build_graph, build_parts
from generalAgent.graph.turn import subagent_turn_input
from generalAgent.tools.mcp.manager import MCPServerManager
from tests.support.agent import thread, user_turn
from tests.support.mcp_config import stdio_entry, write_mcp_json
from tests.support.scripted_model import Request, ScriptedChatModel, ai, tool_call


def settings_with(tmp_path: Path, data_dir: Path, servers: dict[str, Any]) -> Settings:
    path = write_mcp_json(tmp_path, servers)
    return load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test"},
        paths={"data_dir": data_dir},
        mcp={"mcp_config": str(path), "mcp_startup_timeout": 20},
    )


def mcp_names(request: Request) -> list[str]:
    return [name for name in request.tools if "__" in name]


def test_a_server_that_loads_mid_turn_joins_at_the_next_turn(tmp_path: Path, data_dir: Path) -> None:
    settings = settings_with(tmp_path, data_dir, {"notes": stdio_entry(trust=True)})
    manager = MCPServerManager.from_settings(settings)  # not started yet: it starts during the turn

    def respond(request: Request) -> Any:
        calls = len(model.requests)
        if calls == 1:
            manager.start().wait_for_startup()  # loaded now, between two calls of the same turn
            return ai("", tool_call("now"))
        if calls == 3:
            return ai("", tool_call("notes__echo", {"text": "joined"}))
        return ai("done")

    model = ScriptedChatModel(responder=respond)
    parts = build_parts(settings, model=model, mcp=manager)
    graph = build_graph(parts, InMemorySaver())
    try:
        first = graph.invoke(user_turn("what time is it?", settings), thread())
        assert [mcp_names(r) for r in model.requests] == [[], []]  # one tool list for the whole turn
        assert model.requests[0].tools == model.requests[1].tools
        assert not first.get("mcp_servers")
        second = graph.invoke(user_turn("echo something", settings), thread())
        offered = mcp_names(model.requests[2])
        assert "notes__echo" in offered and offered == sorted(offered)
        assert model.requests[2].tools == model.requests[3].tools
        assert second["mcp_servers"] == ["notes"]
        answer = [m for m in second["messages"] if isinstance(m, ToolMessage)][-1]
        assert answer.content == "joined" and answer.status != "error"
    finally:
        manager.close()


def test_a_disabled_server_joins_on_its_first_mention_and_stays(tmp_path: Path, data_dir: Path) -> None:
    settings = settings_with(
        tmp_path,
        data_dir,
        {"notes": stdio_entry(trust=True), "later": stdio_entry(enabled=False, trust=True, tools=["add"])},
    )
    model = ScriptedChatModel(responder=lambda request: ai("ok"))
    parts = build_parts(settings, model=model)
    parts.mcp.wait_for_startup()
    graph = build_graph(parts, InMemorySaver())
    try:
        graph.invoke(user_turn("hello", settings), thread())
        assert "later__add" not in model.requests[-1].tools
        assert parts.mcp.status("later").state == "off"
        state = graph.invoke(user_turn("@later add 2 and 3", settings, mentions=["later"]), thread())
        request = model.requests[-1]
        assert [n for n in mcp_names(request) if n.startswith("later__")] == ["later__add"]
        reminder = request.messages[-1].content
        assert (
            "The user mentioned the MCP server @later: its tools are available to you now: later__add."
            in reminder
        )
        assert state["mcp_servers"] == ["notes", "later"]
        graph.invoke(user_turn("and now?", settings), thread())
        assert "later__add" in model.requests[-1].tools
        assert "@later" not in str(model.requests[-1].messages[-1].content)  # the reminder fired once
        tools = model.requests[-1].tools
        assert tools.index("notes__add") < tools.index("later__add")  # servers in configuration order
    finally:
        parts.mcp.close()


def test_a_sub_agent_is_offered_its_parents_servers() -> None:
    parent = {"context_id": "main", "workspace_id": "w", "mcp_servers": ["notes"], "mentions": []}
    state = subagent_turn_input(
        "task", parent, context_id="subagent-1", profile="general", allowed_tools=None, max_loops=3
    )
    assert state["mcp_servers"] == ["notes"]
