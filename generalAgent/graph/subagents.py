"""Runs a delegated task as an isolated sub-agent: the same graph, a fresh state, its own thread.

The sub-agent's conversation is checkpointed under `subagent-xxxxxxxx` while it works, and
deleted when it ends; it never enters the parent's history: the parent gets one short JSON
result. It runs in a thread of its
own so that nothing of the parent run's context (config, callbacks, checkpoint
namespace) leaks into it; its progress and token usage reach the parent's stream as
custom events, so the chat can show them and count them.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from generalAgent.agent_profiles import AgentCatalog
from generalAgent.config.settings import Settings
from generalAgent.display import N_, Message, N_plural
from generalAgent.graph.history import call_ids
from generalAgent.graph.state import model_calls_this_turn
from generalAgent.graph.turn import SUBAGENT_PREFIX, subagent_turn_input, thread_config
from generalAgent.tools.run_context import RETRY_LISTENER, RunContext

Writer = Callable[[Any], None]


def _progress(writer: Writer, context_id: str, template: str | tuple[str, str], **fields: str | int) -> None:
    """A line of the sub-agent's work: English `text` for logs and scripts, `said` for the
    terminal to show in the UI language."""
    said = Message(template, fields)
    writer({"subagent": context_id, "text": said.english(), "said": said.to_data()})


class SubagentCancelled(Exception):
    """The user cancelled the turn while the sub-agent was working."""


class SubagentRunner:
    def __init__(self, graph: Any, settings: Settings, agents: AgentCatalog) -> None:
        self.graph = graph
        self.settings = settings
        self.agents = agents

    def __call__(
        self,
        task: str,
        agent: str,
        max_loops: int | None,
        parent_state: dict[str, Any],
        writer: Writer,
        parent: RunContext,
    ) -> dict[str, Any]:
        """Run the sub-agent to its answer, in the parent run's session (`parent`: its
        scope, so the parent's cancel stops it and its writes are the session's; the tools
        the user approved "always", which it may use without asking; the editor mode's
        limit). It never delegates further, so its context has no runner."""
        profile = self.agents.get(agent)
        if profile is None:
            return {
                "ok": False,
                "error": f"unknown agent {agent!r}; available: {', '.join(self.agents.names())}",
            }
        if not task.strip():
            return {"ok": False, "error": "the task is empty; describe what the sub-agent should do"}
        context_id = f"{SUBAGENT_PREFIX}{uuid.uuid4().hex[:8]}"
        loops = max(
            1,
            min(max_loops or self.settings.governance.subagent_max_loops, self.settings.governance.max_loops),
        )
        state = subagent_turn_input(
            task,
            parent_state,
            context_id=context_id,
            profile=profile.name,
            allowed_tools=profile.tools,
            max_loops=loops,
        )
        outcome: dict[str, Any] = {}
        events: queue.Queue[Any] = queue.Queue()
        # A context of its own (the parent's run config must not make it a subgraph), with
        # one thing of the parent's: where a retry of its model calls is reported.
        own = contextvars.Context()
        own.run(RETRY_LISTENER.set, RETRY_LISTENER.get())
        worker = threading.Thread(
            target=own.run,
            args=(self._run, context_id, state, replace(parent, run_subagent=None), events.put, outcome),
            name=context_id,
            daemon=True,
        )
        worker.start()
        # The parent's stream writer only works in the parent's context (this thread), so
        # the worker's events are relayed from here until it finishes.
        while worker.is_alive() or not events.empty():
            try:
                writer(events.get(timeout=0.05))
            except queue.Empty:
                continue
        # Nothing goes back to a finished sub-agent (the parent has its result, and a
        # sub-agent never waits for an approval): its thread would only grow sessions.db.
        checkpointer = getattr(self.graph, "checkpointer", None)
        if isinstance(checkpointer, BaseCheckpointSaver):
            checkpointer.delete_thread(context_id)
        if "error" in outcome:
            return {"ok": False, "error": outcome["error"], "context_id": context_id}
        return {"ok": True, "result": outcome["result"], "context_id": context_id, "loops": outcome["loops"]}

    def _run(
        self,
        context_id: str,
        state: dict[str, Any],
        context: RunContext,
        writer: Writer,
        outcome: dict[str, Any],
    ) -> None:
        config = thread_config(context_id)
        cancelled = context.cancelled
        task = " ".join(state["messages"][0].content.split())
        _progress(
            writer, context_id, N_("started ({profile}): {task}"), profile=state["agent_profile"], task=task
        )
        try:
            stream = self.graph.stream(state, config, context=context, stream_mode=["updates", "custom"])
            for mode, data in stream:
                if cancelled is not None and cancelled.is_set():
                    raise SubagentCancelled
                if mode == "custom":
                    self._relay(context_id, data, writer)
                    continue
                for change in data.values():
                    self._report(context_id, change, writer)
        except SubagentCancelled:
            outcome["error"] = "cancelled by the user"
            return
        except Exception as exc:  # a failing sub-agent is a result for the parent, not a crash
            from generalAgent.providers.errors import describe_model_error

            outcome["error"] = (
                describe_model_error(exc, self.settings.model) or f"{type(exc).__name__}: {exc}"
            )
            _progress(writer, context_id, N_("failed: {problem}"), problem=outcome["error"])
            return
        final = self.graph.get_state(config).values
        last = final["messages"][-1]
        loops = model_calls_this_turn(final["messages"])
        outcome.update(result=last.text if isinstance(last, AIMessage) else "", loops=loops)
        _progress(writer, context_id, N_plural("done in {count} step", "done in {count} steps"), count=loops)

    @staticmethod
    def _relay(context_id: str, event: Any, writer: Writer) -> None:
        """The sub-agent's own events: its compactions as progress lines, its summary calls'
        usage, the files its tools wrote, its model client's retries (written to its stream
        only on a server, where the user's process does not listen: graph/model_retries.py)."""
        if not isinstance(event, dict):
            return
        if isinstance(event.get("retry"), dict):
            writer({"retry": event["retry"]})  # the turn waits all the same
        if isinstance(event.get("usage"), dict):
            writer({"subagent": context_id, "usage": event["usage"]})
        if isinstance(event.get("files_written"), list):
            writer({"files_written": event["files_written"]})  # the session's files all the same
        compaction = event.get("compaction")
        if isinstance(compaction, dict) and compaction.get("state") != "started":
            writer({"subagent": context_id, "compaction": compaction})  # the terminal words it

    @staticmethod
    def _report(context_id: str, change: Any, writer: Writer) -> None:
        changes = change if isinstance(change, list) else [change]
        for item in changes:
            if not isinstance(item, dict):
                continue
            for message in item.get("messages", []):
                if isinstance(message, AIMessage):
                    if message.usage_metadata:
                        writer({"subagent": context_id, "usage": dict(message.usage_metadata)})
                    for call in message.tool_calls:
                        args = ", ".join(f"{k}={str(v)[:40]!r}" for k, v in (call.get("args") or {}).items())
                        writer({"subagent": context_id, "text": f"⚙ {call['name']}({args})"})
                    if not call_ids(message) and message.text:
                        _progress(writer, context_id, N_("answer: {text}"), text=message.text[:120])
