"""The planner node: one model call with the static prompt, the safe history and reminders.

What one request is made of, in this order, and why:
1. the static SystemMessage, built once when the node is built (KV-cache prefix);
2. the stored history: the summary of what earlier cuts compacted (graph/compaction.py),
   then the messages after it, cleaned of unanswered tool calls and cut with hysteresis,
   so its head stays byte-identical between cuts;
3. this call's reminders appended at the very end (todos, this turn's @mentions and
   uploads, a history warning), so they never disturb the cached prefix.
The tools bound are assembled from the state on every call; the `new_*` fields are
cleared in the update, which is what makes mention and upload reminders fire once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool

from generalAgent.agent_profiles import AgentCatalog
from generalAgent.config.settings import Settings
from generalAgent.graph import reminders
from generalAgent.graph.cancellation import invoke_cancellable, with_callback
from generalAgent.graph.compaction import history_head, messages_after, starts_afresh
from generalAgent.graph.message_utils import clean_message_history, truncate_messages_safely, window_start
from generalAgent.graph.project_memory import ProjectMemory
from generalAgent.graph.prompts import build_subagent_prompt, build_system_prompt, prompt_hash
from generalAgent.graph.state import AgentState, ConversationSummary, merge_uploads, model_calls_this_turn
from generalAgent.graph.tool_arguments import RawToolArguments, reject_repaired_calls
from generalAgent.models import hide_api_key
from generalAgent.skills.loader import SkillCatalog
from generalAgent.tools.registry import ToolRegistry
from generalAgent.tools.visibility import classify_mentions, visible_tools_for_state

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
        self._message_tokens = MessageTokenCache()
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

    def visible_tools(self, state: AgentState) -> list[Any]:
        return visible_tools_for_state(self.registry, self.skills.ids(), self.agents.names(), state)

    def history(self, state: AgentState, system: SystemMessage, tools: list[Any]) -> list[BaseMessage]:
        """What is sent of the stored history: the summary of what was compacted, then the
        messages after it as valid pairs, within the message and token budget."""
        messages = state.get("messages", [])
        summary = state.get("summary")
        kept = truncate_messages_safely(
            self._body(messages, summary), **self._window_limits(system, tools), count_tokens=self._count
        )
        return [*history_head(messages, summary), *kept]

    def pending_cut(self, state: AgentState) -> list[BaseMessage]:
        """The messages the next request would leave out: what a compaction must cover now."""
        system = self.system_message(state)
        tools = self.visible_tools(state)
        body = self._body(state.get("messages", []), state.get("summary"))
        start = window_start(body, **self._window_limits(system, tools), count_tokens=self._count)
        return body[:start]

    def _body(
        self, messages: Sequence[BaseMessage], summary: ConversationSummary | None
    ) -> list[BaseMessage]:
        return clean_message_history(messages_after(messages, summary))

    def _window_limits(self, system: SystemMessage, tools: list[Any]) -> dict[str, Any]:
        """The cut's limits; with compaction on, room for the summary is kept in the token budget."""
        governance = self.settings.governance
        reserved = governance.summary_max_tokens if governance.compact_history else 0
        return {
            "max_messages": governance.max_message_history,
            "low_water": governance.history_low_water,
            "max_tokens": max(
                1_000, governance.max_context_tokens - self._fixed_tokens(system, tools) - reserved
            ),
        }

    def _count(self, message: BaseMessage) -> int:
        return self._message_tokens.count(message)

    def reminders(self, state: AgentState, kept_messages: int) -> list[str]:
        mentions = classify_mentions(
            state.get("new_mentions", []),
            self.registry.names(),
            self.skills.ids(),
            self.agents.names(),
        )
        uploads = state.get("new_uploaded_files", [])
        if starts_afresh(state.get("messages", []), state.get("summary")):
            # After /clear the files are still in the workspace; the model hears of them again.
            uploads = merge_uploads(state.get("uploaded_files", []), uploads)
        return [
            reminders.build_todo_reminder(state.get("todos", [])),
            reminders.build_mention_reminder(mentions.tools, mentions.skills, mentions.agents),
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
            self._static_tokens[key] = count_tokens_approximately([system]) + len(repr(schemas)) // 4
        return self._static_tokens[key]


class MessageTokenCache:
    """Approximate token counts per stored message, so each message is counted once.

    The budget check replays the whole history on every call; messages are immutable
    once stored and keep their id, so their count can be remembered.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self._counts: dict[str, int] = {}
        self._max_entries = max_entries

    def count(self, message: BaseMessage) -> int:
        key = message.id
        if key is None:
            return count_tokens_approximately([message])
        cached = self._counts.get(key)
        if cached is None:
            if len(self._counts) >= self._max_entries:
                self._counts.clear()
            cached = self._counts[key] = count_tokens_approximately([message])
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
        system = prompts.system_message(state)
        tools = prompts.visible_tools(state)
        history = prompts.history(state, system, tools)
        request = [system, *reminders.attach_reminders(history, prompts.reminders(state, len(history)))]
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
        response = reject_repaired_calls(response, raw_arguments.by_id())
        return {
            "messages": [response],
            "loops": model_calls_this_turn(state.get("messages", [])) + 1,
            "new_mentions": [],
            "new_uploaded_files": [],
        }

    return planner
