"""The planner node: one model call with the static prompt, the safe history and reminders.

What one request is made of, in this order, and why:
1. the static SystemMessage, built once when the node is built (KV-cache prefix);
2. the stored history: the summary of what earlier cuts compacted (graph/compaction.py),
   then the messages after it, cleaned of unanswered tool calls and cut with hysteresis,
   so its head stays byte-identical between cuts;
3. this call's reminders appended at the very end (todos, this turn's @mentions and
   uploads, a history warning), so they never disturb the cached prefix.
Tool results are sent framed as data (graph/untrusted_text.py), the same way every time.
The tools bound are assembled from the state on every call; the `new_*` fields are
cleared in the update, which is what makes mention and upload reminders fire once.
MCP servers join the session at a turn's first call only (`servers_joining`), recorded in
the update, so every later call of the turn, and the tools node, sees the same tools.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool

from generalAgent.agent_profiles import AgentCatalog
from generalAgent.config.settings import Settings
from generalAgent.graph import reminders
from generalAgent.graph.cancellation import invoke_cancellable, with_callback
from generalAgent.graph.compaction import history_head, messages_after, starts_afresh
from generalAgent.graph.encodable_text import encodable_messages
from generalAgent.graph.images import image_tokens, with_turn_images
from generalAgent.graph.message_utils import (
    TokenCounter,
    clean_message_history,
    truncate_messages_safely,
    window_start,
)
from generalAgent.graph.project_memory import ProjectMemory
from generalAgent.graph.prompts import build_subagent_prompt, build_system_prompt, prompt_hash
from generalAgent.graph.state import (
    AgentState,
    ConversationSummary,
    merge_names,
    merge_uploads,
    model_calls_this_turn,
)
from generalAgent.graph.tool_arguments import (
    RawToolArguments,
    refuse_unbounded_calls,
    reject_repaired_calls,
    unique_call_ids,
)
from generalAgent.graph.untrusted_text import frame_tool_results
from generalAgent.providers.detection import choose_provider
from generalAgent.providers.errors import hide_api_key
from generalAgent.providers.tokens import (
    ESTIMATE_KEY,
    MESSAGE_OVERHEAD,
    calibration_factor,
    context_budget,
    estimate_message_tokens,
    estimate_payload_tokens,
    estimate_tokens,
)
from generalAgent.providers.vision import takes_images
from generalAgent.skills.loader import SkillCatalog
from generalAgent.tools.registry import ToolRegistry
from generalAgent.tools.visibility import classify_mentions, servers_joining, visible_tools_for_state
from generalAgent.tools.workspace import Workspace

LOGGER = logging.getLogger(__name__)


class PromptBuilder:
    """Everything the planner and finalize nodes share to turn a state into a request."""

    def __init__(
        self,
        settings: Settings,
        registry: ToolRegistry,
        skills: SkillCatalog,
        agents: AgentCatalog,
        now: datetime | None = None,
        memory: ProjectMemory | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.skills = skills
        self.agents = agents
        self._now = now or datetime.now(UTC)
        self._memory = memory.prompt_section() if memory is not None else ""
        self.main_prompt = SystemMessage(content=build_system_prompt(skills, agents, self._now, self._memory))
        self._subagent_prompts: dict[str | None, SystemMessage] = {}
        self._static_tokens: dict[tuple[int, tuple[str, ...]], int] = {}
        # Echoed reasoning is part of the prompt, so it counts where the dialect sends it.
        self._message_tokens = MessageTokenCache(
            with_reasoning=choose_provider(settings.model).dialect.echo != "never"
        )
        self.budget = context_budget(settings.model, settings.governance)
        LOGGER.debug("system prompt hash %s", prompt_hash(self.main_prompt.text))

    def system_message(self, state: AgentState) -> SystemMessage:
        if not state.get("parent_context"):
            return self.main_prompt
        profile_name = state.get("agent_profile")
        if profile_name not in self._subagent_prompts:
            profile = self.agents.get(profile_name) if profile_name else None
            text = build_subagent_prompt(self.skills, profile, self._now, self._memory)
            self._subagent_prompts[profile_name] = SystemMessage(content=text)
        return self._subagent_prompts[profile_name]

    @staticmethod
    def request(
        system: SystemMessage, history: list[BaseMessage], reminder_texts: Sequence[str]
    ) -> list[BaseMessage]:
        """What is sent to the model: the system prompt, then the history with tool results
        framed as data and the reminders at the end, every text one UTF-8 can carry."""
        return encodable_messages(
            [system, *reminders.attach_reminders(frame_tool_results(history), reminder_texts)]
        )

    def with_images(
        self, state: AgentState, config: RunnableConfig, history: list[BaseMessage]
    ) -> list[BaseMessage]:
        """The history with this turn's images as image parts, for a model that takes them."""
        if not image_tokens(history) or not takes_images(self.settings.model):
            return history
        configurable = (config or {}).get("configurable", {})
        session = str(state.get("workspace_id") or configurable.get("thread_id") or "default")
        workspace = Workspace.for_session(self.settings.paths.workspaces_dir, session)
        return with_turn_images(history, workspace.root)

    def visible_tools(self, state: AgentState) -> list[Any]:
        return visible_tools_for_state(self.registry, self.skills.ids(), self.agents.names(), state)

    def history(self, state: AgentState, system: SystemMessage, tools: list[Any]) -> list[BaseMessage]:
        """What is sent of the stored history: the summary of what was compacted, then the
        messages after it as valid pairs, within the message and token budget.

        Sizes are estimated per script and scaled by how far the last estimate was from
        the provider's own count (`calibration_factor`), so a Chinese history is cut
        before the provider would refuse it.
        """
        messages = state.get("messages", [])
        summary = state.get("summary")
        factor = calibration_factor(messages)
        kept = truncate_messages_safely(
            self._body(messages, summary),
            **self._window_limits(system, tools, factor),
            count_tokens=self._counter(factor),
        )
        return [*history_head(messages, summary), *kept]

    def pending_cut(self, state: AgentState) -> list[BaseMessage]:
        """The messages the next request would leave out: what a compaction must cover now."""
        system = self.system_message(state)
        tools = self.visible_tools(state)
        messages = state.get("messages", [])
        factor = calibration_factor(messages)
        body = self._body(messages, state.get("summary"))
        start = window_start(
            body, **self._window_limits(system, tools, factor), count_tokens=self._counter(factor)
        )
        return body[:start]

    def _body(
        self, messages: Sequence[BaseMessage], summary: ConversationSummary | None
    ) -> list[BaseMessage]:
        return clean_message_history(messages_after(messages, summary))

    def _window_limits(self, system: SystemMessage, tools: list[Any], factor: float) -> dict[str, Any]:
        """The cut's limits; with compaction on, room for the summary is kept in the token budget."""
        governance = self.settings.governance
        reserved = governance.summary_max_tokens if governance.compact_history else 0
        fixed = math.ceil(self._fixed_tokens(system, tools) * factor)
        return {
            "max_messages": governance.max_message_history,
            "low_water": governance.history_low_water,
            "max_tokens": max(1_000, self.budget - fixed - reserved),
        }

    def _counter(self, factor: float) -> TokenCounter:
        return lambda message: math.ceil(self._message_tokens.count(message) * factor)

    def estimate_request(self, system: SystemMessage, tools: list[Any], request: list[BaseMessage]) -> int:
        """The uncalibrated estimate of a request, kept on its answer to calibrate the next."""
        body = [m for m in request if m is not system]
        return self._fixed_tokens(system, tools) + sum(self._message_tokens.count(m) for m in body)

    def servers_joining(self, state: AgentState) -> list[str]:
        return servers_joining(self.registry, dict(state))

    def reminders(self, state: AgentState, kept_messages: int) -> list[str]:
        mentions = classify_mentions(
            state.get("new_mentions", []),
            self.registry.names(),
            self.skills.ids(),
            self.agents.names(),
            self.registry.mcp_handles(),
        )
        servers = {
            handle: [t.name for t in self.registry.mcp_tools([handle])]
            for handle in mentions.servers
            if handle in (state.get("mcp_servers") or [])
        }
        uploads = state.get("new_uploaded_files", [])
        if starts_afresh(state.get("messages", []), state.get("summary")):
            # After /clear the files are still in the workspace; the model hears of them again.
            uploads = merge_uploads(state.get("uploaded_files", []), uploads)
        return [
            reminders.build_todo_reminder(state.get("todos", [])),
            reminders.build_mention_reminder(mentions.tools, mentions.skills, mentions.agents, servers),
            reminders.build_upload_reminder(uploads),
            reminders.build_history_warning(
                kept_messages,
                self.settings.governance.max_message_history,
                compacting=self.settings.governance.compact_history,
            ),
        ]

    def _fixed_tokens(self, system: SystemMessage, tools: list[Any]) -> int:
        """Tokens of the system prompt and tool schemas: static, so counted once per pair."""
        key = (id(system), tuple(t.name for t in tools))  # system messages live as long as self
        if key not in self._static_tokens:
            schemas = [convert_to_openai_tool(t) for t in tools]
            self._static_tokens[key] = (
                MESSAGE_OVERHEAD + estimate_tokens(system.text) + estimate_payload_tokens(schemas)
            )
        return self._static_tokens[key]


class MessageTokenCache:
    """Estimated token counts per stored message, so each message is counted once.

    The budget check replays the whole history on every call; messages are immutable
    once stored and keep their id, so their count can be remembered.
    """

    def __init__(self, max_entries: int = 100_000, with_reasoning: bool = False) -> None:
        self._counts: dict[str, int] = {}
        self._max_entries = max_entries
        self._with_reasoning = with_reasoning

    def count(self, message: BaseMessage) -> int:
        key = message.id
        if key is None:
            return estimate_message_tokens(message, self._with_reasoning)
        cached = self._counts.get(key)
        if cached is None:
            if len(self._counts) >= self._max_entries:
                self._counts.clear()
            cached = self._counts[key] = estimate_message_tokens(message, self._with_reasoning)
        return cached


def build_planner_node(
    model: BaseChatModel, prompts: PromptBuilder, cancelled: threading.Event | None = None
):
    """The planner node function, closed over the model and the static prompts.

    `cancelled` (the tool environment's cancel event) makes a model call stop at once
    when the user cancels the turn.
    """

    # Binding converts every tool's schema; the visible set changes rarely, so bind once per set.
    bound: dict[tuple[str, ...], Any] = {}

    def planner(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        loops = model_calls_this_turn(state.get("messages", []))
        joining = prompts.servers_joining(state) if loops == 0 else []
        if joining:
            state = {**state, "mcp_servers": merge_names(state.get("mcp_servers"), joining)}
        system = prompts.system_message(state)
        tools = prompts.visible_tools(state)
        history = prompts.history(state, system, tools)
        reminder_texts = prompts.reminders(state, len(history))
        request = prompts.request(system, prompts.with_images(state, config, history), reminder_texts)
        key = tuple(t.name for t in tools)
        if key not in bound:
            bound[key] = model.bind_tools(tools) if tools else model
        raw_arguments = RawToolArguments()
        try:
            response = invoke_cancellable(
                bound[key], request, with_callback(config, raw_arguments), cancelled
            )
        except Exception as exc:
            hide_api_key(exc, prompts.settings.model)  # the failed step is stored and logged
            raise
        raw = raw_arguments.by_id()
        # Bounded first (nothing below walks a 600-deep argument), then strict JSON, then
        # one id per call before anything is paired with it (approvals, answers).
        limits = prompts.settings.tools
        response = refuse_unbounded_calls(
            response, raw, limits.tool_argument_max_chars, limits.tool_argument_max_depth
        )
        response = unique_call_ids(reject_repaired_calls(response, raw))
        # Counted on the request without image data (a data URL is not text the provider reads).
        plain = prompts.request(system, history, reminder_texts)
        estimate = prompts.estimate_request(system, tools, plain) + image_tokens(history)
        response.response_metadata[ESTIMATE_KEY] = estimate
        update: dict[str, Any] = {
            "messages": [response],
            "loops": loops + 1,
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
