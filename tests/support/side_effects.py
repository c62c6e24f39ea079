"""What the approval step would ask about a call, and the note a call saved."""

from __future__ import annotations

from typing import Any

from generalAgent.config.settings import Settings
from generalAgent.knowledge import open_store
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai


def pending_questions(settings: Settings, text: str, call: dict[str, Any]) -> list[dict[str, Any]]:
    """Run one turn whose model makes `call`; the approval requests it stopped at ([] if none)."""
    model = ScriptedChatModel(replies=[ai("", call), ai("done")])
    _, graph = build_test_agent(settings, model)
    graph.invoke(user_turn(text, settings), thread())
    interrupts = [i for task in graph.get_state(thread()).tasks for i in task.interrupts]
    return [request for i in interrupts for request in i.value["requests"]]


def saved_note(settings: Settings) -> str:
    with open_store(settings) as store:
        return store.add_knowledge(title="Pricing decisions", content="We keep the old prices.").id
