"""What a slash command may use of the running chat: typed here, so that the command modules
(session_commands, settings_commands, views, rewind, clipboard) never import cli/chat.py,
which imports them through the command registry. `Chat` is the one implementation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from generalAgent.agent.loading import LoadedAgent
    from generalAgent.agent.session import SessionController
    from generalAgent.cli.custom_commands import CustomCommands
    from generalAgent.config.settings import Settings

ReasoningDisplay = Literal["collapsed", "full", "off"]


class AgentUnavailable(Exception):
    """The agent failed to load; the chat has said why and must end."""


class ChatHandle(Protocol):
    console: Console
    session: SessionController
    settings: Settings  # /model replaces it for the turns that follow
    show_reasoning: ReasoningDisplay
    last_reasoning: list[str]  # the last turn's reasoning, per model call (/thinking)
    prompt_default: str  # what the next prompt starts with (/rewind's message)
    custom_commands: CustomCommands

    @property
    def model_name(self) -> str: ...

    def agent(self) -> LoadedAgent:
        """The loaded agent (waiting for the load); AgentUnavailable when it failed."""
        ...

    def run_turn(self, agent: LoadedAgent, graph_input: Any, *, context_only: bool = False) -> None: ...

    def send(self, text: str, mentions: tuple[str, ...] = ()) -> None: ...

    def farewell(self) -> None: ...
