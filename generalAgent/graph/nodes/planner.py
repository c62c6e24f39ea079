"""The planner node: one model call with the context graph/context.py builds.

The tools bound are assembled from the state on every call; the `new_*` fields are
cleared in the update, which is what makes mention and upload reminders fire once.
MCP servers join the session at a turn's first call only (`servers_joining`), recorded in
the update, so every later call of the turn, and the tools node, sees the same tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from generalAgent.graph.cancellation import AnswerLimits, invoke_cancellable, with_callback
from generalAgent.graph.context import PromptBuilder
from generalAgent.graph.images import image_tokens
from generalAgent.graph.model_retries import streaming_retries
from generalAgent.graph.state import AgentState, merge_names, model_calls_this_turn
from generalAgent.graph.tool_arguments import (
    RawToolArguments,
    refuse_excess_calls,
    refuse_unbounded_calls,
    reject_repaired_calls,
    rename_argument_aliases,
    unique_call_ids,
)
from generalAgent.graph.tool_set_cache import ToolSetCache
from generalAgent.providers.errors import hide_api_key
from generalAgent.providers.tokens import ESTIMATE_KEY
from generalAgent.tools.run_context import RunContext, cancel_token_of


def build_planner_node(model: BaseChatModel, prompts: PromptBuilder):
    """The planner node function, closed over the model and the static prompts.

    The session's cancel token (the run's context, tools/run_context.py) makes a model
    call stop at once when the user cancels that session's turn.
    """

    def bind(tools: Sequence[Any]) -> tuple[Any, dict[str, frozenset[str]]]:
        """The model bound to `tools`, and each tool's argument names (for the alias renaming)."""
        return (model.bind_tools(tools) if tools else model), {t.name: frozenset(t.args) for t in tools}

    # Binding converts every tool's schema; the visible set changes rarely, so bind once per set.
    bound = ToolSetCache(bind)

    def planner(state: AgentState, config: RunnableConfig, runtime: Runtime[RunContext]) -> dict[str, Any]:
        cancelled = cancel_token_of(runtime)  # this session's: another's cancel leaves it
        loops = model_calls_this_turn(state.get("messages", []))
        joining = prompts.servers_joining(state) if loops == 0 else []
        if joining:
            state = {**state, "mcp_servers": merge_names(state.get("mcp_servers"), joining)}
        system = prompts.system_message(state)
        tools = prompts.visible_tools(state)
        history = prompts.history(state, system, tools)
        reminder_texts = prompts.reminders(state, len(history))
        sent_history = prompts.with_images(state, config, history)
        request = prompts.request(system, sent_history, reminder_texts)
        runnable, parameters = bound.get(tools)
        raw_arguments = RawToolArguments()
        try:
            model_settings = prompts.settings.model
            # A served run's retries go to its own stream (the user's process reports its own).
            with streaming_retries():
                response = invoke_cancellable(
                    runnable,
                    request,
                    with_callback(config, raw_arguments),
                    cancelled,
                    AnswerLimits(
                        model_settings.model_answer_max_chars, model_settings.model_call_max_seconds
                    ),
                )
        except Exception as exc:
            hide_api_key(exc, prompts.settings.model)  # the failed step is stored and logged
            raise
        raw = raw_arguments.by_id()
        # Bounded first (nothing below walks a 600-deep argument), then strict JSON, then
        # one id per call before anything is paired with it (approvals, answers).
        limits = prompts.settings.tools
        response = refuse_excess_calls(response, limits.tool_calls_max_per_message)
        response = refuse_unbounded_calls(
            response, raw, limits.tool_argument_max_chars, limits.tool_argument_max_depth
        )
        response = unique_call_ids(reject_repaired_calls(response, raw))
        # `path` for a tool whose schema says `file_path` (or the other way round): renamed
        # before approval, hooks and the tool see it; the schemas shown stay as they are.
        response = rename_argument_aliases(response, parameters)
        # Counted on the request without image data (a data URL is not text the provider reads).
        # Without images the request sent is that request: built once, not twice per call.
        plain = request if sent_history is history else prompts.request(system, history, reminder_texts)
        estimate = prompts.estimate_request(system, tools, plain) + image_tokens(history)
        response.response_metadata[ESTIMATE_KEY] = estimate
        update: dict[str, Any] = {
            "messages": [response],
            "new_mentions": [],
            "new_uploaded_files": [],
            # Decisions belong to the message they were given for: a new one starts without
            # any, also when its calls go straight to the tools node (route_after_planner).
            "approvals": {},
        }
        if joining:
            update["mcp_servers"] = joining
        return update

    return planner
