"""Builds the agent: its parts (model, tools, skills, agents, prompts) and the compiled graph.

    START ─┬─ a call left open, an old key → repair ─┐
           ├────────────────────────────────────────┴─ a cut is due, /compact, /clear → compact ─┬─ a cut → planner
           └─────────────────────────────────────────────────────────────────────────────────────┴─ /compact, /clear → END
    planner ─┬─ tool calls, loops left ─┬─ one needs approval → approval ⇄ tools → (compact →) planner
             │                          └─ none does ─────────────────────→ tools
             ├─ tool calls, budget spent → finalize → END
             └─ no tool calls ───────────→ END

`repair` runs only when a run stopped with tool calls unanswered (graph/history.py): it
answers them in the stored history before anything else reads it, so every client (the
terminal, a LangGraph Server client) sends a valid history. It also carries, once, what
an older release stored under a key renamed since (graph/state.py's StoredState: the
main graph's state schema, while its input and output are AgentState), and it stores the
images a served client sent in its message as the local chat stores attached ones
(graph/images.py), so no data URL stays in the history. `compact` runs
only when the start of the history moves (graph/compaction.py). So an ordinary step adds
neither node nor checkpoint.

`approval` asks the user about the calls that need it, and `tools` judges each call again
right before it runs (tools/judge.py, the one judge): a call whose question is due only
now (a sibling changed what it would do) ends the tools step, and the graph goes back to
`approval` for it; a resume re-runs only that step, so each call runs at most once
(graph/nodes/approval.py says why). Calls of which none needs approval skip `approval`:
the step would only cost a checkpoint.

`build_graph` is the one place the graph is assembled; `make_graph` is the factory that
`langgraph.json` points to, so LangGraph Server serves the same graph unchanged.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import get_runtime

from generalAgent.agent_profiles import AgentCatalog, load_agent_profiles
from generalAgent.config.settings import Settings, load_settings
from generalAgent.display import N_, Message
from generalAgent.graph.compaction import build_compact_node
from generalAgent.graph.context import PromptBuilder
from generalAgent.graph.history import build_repair_node, needs_repair
from generalAgent.graph.nodes.approval import build_approval_node, needs_asking, pending_calls
from generalAgent.graph.nodes.finalize import build_finalize_node
from generalAgent.graph.nodes.planner import build_planner_node
from generalAgent.graph.nodes.tools import build_tools_node
from generalAgent.graph.project_memory import ProjectMemory, load_project_memory
from generalAgent.graph.query_rendering import QueryRendering
from generalAgent.graph.repetition import repeated_call
from generalAgent.graph.served import check_served_settings
from generalAgent.graph.state import AgentState, StoredState, SubagentState, model_calls_this_turn
from generalAgent.graph.subagents import SubagentRunner
from generalAgent.providers.factory import build_chat_model
from generalAgent.providers.vision import image_limits, takes_images
from generalAgent.skills.loader import SkillCatalog, load_skills
from generalAgent.tools.approval import ApprovalPolicy
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.mcp.manager import MCPServerManager
from generalAgent.tools.registry import ToolRegistry
from generalAgent.tools.run_context import ClientContext, RunContext

# A compiled graph of the agent: any state schema of ours, run with a RunContext.
AgentGraph = CompiledStateGraph[Any, RunContext, Any, Any]


@dataclass
class AgentParts:
    """What a graph is built from; built once per configuration: the process's, or one per
    folder of the editor server's sessions (agent/folder_agents.py)."""

    settings: Settings
    model: BaseChatModel
    env: ToolEnvironment
    registry: ToolRegistry
    skills: SkillCatalog
    agents: AgentCatalog
    memory: ProjectMemory = field(default_factory=ProjectMemory)  # AGENTS.md, read once per configuration

    @property
    def mcp(self) -> MCPServerManager:
        assert self.registry.mcp is not None  # build_parts always attaches one
        return self.registry.mcp

    @property
    def warnings(self) -> list[str | Message]:
        unread = [Message(N_("AGENTS.md not read: {problem}"), {"problem": p}) for p in self.memory.problems]
        return [*self.skills.warnings, *self.agents.warnings, *unread]


def build_parts(
    settings: Settings, model: BaseChatModel | None = None, mcp: MCPServerManager | None = None
) -> AgentParts:
    """`mcp`: the process's MCP servers, already starting (the CLI starts them first, so they
    come up while the rest loads); without one, the configured servers are started here."""
    env = ToolEnvironment(
        settings=settings,
        # Tools that show images (view_page) need to know whether this model sees them.
        image_limits=image_limits(settings.model) if takes_images(settings.model) else None,
    )
    registry = ToolRegistry.from_yaml(env, settings.paths.tools_config)
    registry.attach_mcp(mcp or MCPServerManager.from_settings(settings).start())
    return AgentParts(
        settings=settings,
        model=model or build_chat_model(settings.model, native_search=settings.tools.native_search),
        env=env,
        registry=registry,
        skills=load_skills(settings.paths.skills_dir),
        agents=load_agent_profiles(settings.paths.agents_dir),
        memory=load_project_memory(settings, settings.working_folder),
    )


def route_after_planner(
    state: AgentState, default_max_loops: int, asks: Callable[[AgentState], bool] = lambda state: True
) -> str:
    """approval (then tools) while loops remain, finalize when the budget is spent or the
    model repeats a call (graph/repetition.py), else the turn is over. Calls of which none
    needs an approval (`asks` says) go straight to tools: one checkpoint less per step.

    A state without `max_loops` (e.g. a run started by a LangGraph Server client) gets
    the MAX_LOOPS setting, so no run can loop without bound.
    """
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        max_loops = state.get("max_loops") or default_max_loops
        if model_calls_this_turn(state["messages"]) >= max_loops or repeated_call(state["messages"]):
            return "finalize"
        return "approval" if asks(state) else "tools"
    return END


def route_after_tools(state: AgentState, to_model: Callable[[AgentState], str]) -> str:
    """approval when the tools node stopped before a call that needs a question (it judges
    each call when it is about to run, graph/nodes/tools.py), else on to the model."""
    return "approval" if pending_calls(state["messages"])[2] else to_model(state)


def route_at_start(state: StoredState, to_model: Callable[[AgentState], str]) -> str:
    """repair first when a stopped run left calls open or an old release a renamed key
    (graph/history.py), else on to the model."""
    return "repair" if needs_repair(state) else to_model(state)


def _route_after_planner(
    state: AgentState,
    config: RunnableConfig,
    *,
    max_loops: int,
    visible_tools: Callable[[AgentState], list[Any]],
    env: ToolEnvironment,
    policy: ApprovalPolicy,
) -> str:
    # Not a `runtime` parameter: LangGraph routes without a runtime in update_state (a
    # /rewind, a repair), which would then fail; get_runtime() gives None there instead.
    runtime = get_runtime()
    asks = functools.partial(
        needs_asking, config=config, runtime=runtime, visible_tools=visible_tools, env=env, policy=policy
    )
    return route_after_planner(state, max_loops, asks)


def route_to_model(state: AgentState, prompts: PromptBuilder) -> str:
    """compact when the context must change before the next model call, else planner."""
    if state.get("context_request") or prompts.pending_cut(state):
        return "compact"
    return "planner"


@dataclass(frozen=True)
class AgentGraphs:
    """The compiled graphs of one agent: the main one, and the one its sub-agents run."""

    main: AgentGraph
    subagent: AgentGraph


def build_graphs(parts: AgentParts, checkpointer: BaseCheckpointSaver | None = None) -> AgentGraphs:
    """Both graphs, in the order they depend on each other, so nothing is set afterwards.

    delegate_task runs a sub-agent on a graph of the same nodes; a sub-agent never
    delegates, so its graph has no sub-agent runner and can be compiled first. The main
    graph's tools node is then built with a runner for it (graph/subagents.py).
    """
    prompts = PromptBuilder(parts.settings, parts.registry, parts.skills, parts.agents, memory=parts.memory)
    # A sub-agent's thread is new on every delegation: nothing old is ever stored in it.
    subagent = _define_graph(parts, prompts, SubagentState, SubagentState, run_subagent=None).compile(
        checkpointer=checkpointer, name="generalAgent-subagent"
    )
    runner = SubagentRunner(subagent, parts.settings, parts.agents)
    main = _define_graph(parts, prompts, AgentState, StoredState, run_subagent=runner).compile(
        checkpointer=checkpointer, name="generalAgent"
    )
    return AgentGraphs(main=main, subagent=subagent)


def build_graph(parts: AgentParts, checkpointer: BaseCheckpointSaver | None = None) -> AgentGraph:
    """The agent's graph (what the terminal runs and LangGraph Server serves)."""
    return build_graphs(parts, checkpointer).main


def _define_graph(
    parts: AgentParts,
    prompts: PromptBuilder,
    schema: type[AgentState],
    stored: type[AgentState],
    run_subagent: SubagentRunner | None,
) -> StateGraph[AgentState, RunContext, AgentState, AgentState]:
    """`schema`: what clients send and see; `stored`: what a stored thread may hold (the
    schema, and keys an older release used), read by the routes from START and by repair."""
    # The run's context (tools/run_context.py): the session's scope and the run's approval
    # inputs, handed to every node and tool; several sessions' runs go at once.
    # A client's context (LangGraph Server) is built as ClientContext: none of it is taken.
    graph: StateGraph[AgentState, RunContext, AgentState, AgentState] = StateGraph(
        stored, context_schema=ClientContext, input_schema=schema, output_schema=schema
    )
    # Every node reads the whole state of its graph (input_schema): LangGraph would otherwise
    # give a node only the keys of the type its function is annotated with (AgentState).
    graph.add_node("planner", build_planner_node(parts.model, prompts), input_schema=schema)
    policy = ApprovalPolicy(auto_approved=parts.settings.tools.auto_approved)
    graph.add_node(
        "approval", build_approval_node(prompts.visible_tools, parts.env, policy), input_schema=schema
    )
    # A lone search query in another language than the documents gets the chat model's
    # rendering (graph/query_rendering.py), in a sub-agent's searches too.
    rendering = QueryRendering(parts.model, parts.settings.model)
    graph.add_node(
        "tools",
        build_tools_node(prompts.visible_tools, parts.env, policy, run_subagent, rendering),
        input_schema=schema,
    )
    graph.add_node("finalize", build_finalize_node(parts.model, prompts), input_schema=schema)
    graph.add_node(
        "compact",
        build_compact_node(parts.model, parts.settings, prompts.pending_cut),
        destinations=("planner", END),
        input_schema=schema,
    )
    # Routes are partials: LangGraph reads a plain function's annotation as the schema of
    # what it may see, and a sub-agent's route must see the sub-agent's keys too.
    to_model = functools.partial(route_to_model, prompts=prompts)
    graph.add_node(
        "repair",
        build_repair_node(to_model, parts.settings.model.model_answer_max_chars, prompts.receive_images),
        destinations=("compact", "planner"),
        input_schema=stored,
    )
    graph.add_conditional_edges(
        START, functools.partial(route_at_start, to_model=to_model), ["repair", "compact", "planner"]
    )
    after_planner = functools.partial(
        _route_after_planner,
        max_loops=parts.settings.governance.max_loops,
        visible_tools=prompts.visible_tools,
        env=parts.env,
        policy=policy,
    )
    graph.add_conditional_edges("planner", after_planner, ["approval", "tools", "finalize", END])
    graph.add_edge("approval", "tools")
    graph.add_conditional_edges(
        "tools", functools.partial(route_after_tools, to_model=to_model), ["approval", "compact", "planner"]
    )
    graph.add_edge("finalize", END)
    return graph


async def make_graph() -> AgentGraph:
    """Factory for LangGraph Server (`langgraph.json`): the graph without a checkpointer.

    The server supplies its own checkpointer and calls this factory for every request
    (runs, state reads, schema), inside its event loop. Building the parts reads files
    and creates the model client, which must neither block that loop nor be repeated
    per request: the graph is built once per process, in a worker thread.
    """
    return await asyncio.to_thread(_served_graph)


@functools.cache
def _served_graph() -> AgentGraph:
    # A server has no prompt to keep responsive: its MCP servers are waited for once, here.
    settings = load_settings()
    check_served_settings(settings)  # keys out of children; no shell without a sandbox
    mcp = MCPServerManager.from_settings(settings).start()
    mcp.wait_for_startup()
    return build_graph(build_parts(settings, mcp=mcp))
