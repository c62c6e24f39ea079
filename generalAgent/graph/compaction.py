"""Compaction: the turns a cut drops are summarised into one message at the head of the history.

The cut with hysteresis (graph/history.py, `window_start`) is the one moment the head of what
is sent changes anyway, so that is when the dropped turns are summarised: the summary
costs no cache misses beyond the cut's own. The `compact` node runs before the planner
whenever a cut is due (and for `/compact` and `/clear`); it asks the model, with a prompt
of its own (templates/compaction.md) and no tools, for a summary that folds the previous
summary and the dropped turns together, and stores it in the thread's state
(`ConversationSummary`): every later request is

    system prompt · <conversation_summary> · the messages after the summary · reminders

until the next cut. If the summarising call fails, or the user skips it with Ctrl-C, the
cut happens as a plain cut (the previous summary stays, the new turns are dropped) and the
user is told. Every outcome is reported as a custom stream event (`{"compaction": ...}`)
that the terminal shows as one line; the summary call's usage as `{"usage": ...}`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command

from generalAgent.config.settings import Settings
from generalAgent.graph.cancellation import TurnCancelled, invoke_cancellable
from generalAgent.graph.encodable_text import encodable_messages
from generalAgent.graph.history import messages_after, open_question
from generalAgent.graph.prompts import TEMPLATES
from generalAgent.graph.state import AgentState, ConversationSummary, UploadedFile
from generalAgent.providers.tokens import context_budget, estimate_tokens
from generalAgent.tools.run_context import RunContext

LOGGER = logging.getLogger(__name__)

# What the summariser reads of each message: tool results are the bulk of a history and
# mostly raw material, the conversation itself is what must survive.
TOOL_RESULT_CHARS = 2_000
MESSAGE_CHARS = 8_000
CALL_ARGUMENT_CHARS = 300
# One summarising call reads at most this share of the context budget; a longer stretch of
# dropped turns (an old session opened for the first time) is folded in several calls.
TRANSCRIPT_SHARE = 0.5
# Words are what a model can count; a word is about 1.3 tokens of English.
WORDS_PER_TOKEN = 0.75
# The summary may exceed its budget a little before it is cut, as the model cannot count exactly.
SUMMARY_SLACK = 1.5


class SummaryUnavailable(Exception):
    """The summarising call failed or was skipped; the message says why, in a few words."""


# -- pure parts -------------------------------------------------------------------------
def transcript_entries(messages: Sequence[BaseMessage]) -> list[str]:
    """One entry per message, as the summariser reads it: who, what, clipped."""
    names: dict[str, str] = {}
    entries = []
    for message in messages:
        if isinstance(message, HumanMessage):
            entries.append(f"User: {_clip(_text(message), MESSAGE_CHARS)}")
        elif isinstance(message, AIMessage):
            parts = [f"Assistant: {_clip(_text(message), MESSAGE_CHARS)}"] if _text(message).strip() else []
            for call in message.tool_calls:
                names[call.get("id") or ""] = call["name"]
                arguments = _clip(json.dumps(call.get("args") or {}, ensure_ascii=False), CALL_ARGUMENT_CHARS)
                parts.append(f"Assistant called {call['name']}({arguments})")
            if parts:
                entries.append("\n".join(parts))
        elif isinstance(message, ToolMessage):
            name = message.name or names.get(message.tool_call_id, "a tool")
            status = " (error)" if message.status == "error" else ""
            entries.append(f"Result of {name}{status}: {_clip(_text(message), TOOL_RESULT_CHARS)}")
    return entries


def batches(entries: Sequence[str], max_tokens: int, count: Callable[[str], int]) -> list[list[str]]:
    """Consecutive groups of entries of at most `max_tokens` each (an entry alone may pass it)."""
    groups: list[list[str]] = []
    size = 0
    for entry in entries:
        tokens = count(entry)
        if not groups or size + tokens > max_tokens:
            groups.append([])
            size = 0
        groups[-1].append(entry)
        size += tokens
    return groups


def summary_request(
    previous: str, entries: Sequence[str], max_tokens: int, focus: str, uploads: Sequence[UploadedFile]
) -> list[BaseMessage]:
    """The summarising request: the compaction prompt, then the previous summary and the turns."""
    focus_line = f"- Above all, keep what concerns: {focus.strip()}\n" if focus.strip() else ""
    system = _template().format(max_words=int(max_tokens * WORDS_PER_TOKEN), focus=focus_line)
    parts = [
        f"<previous_summary>\n{previous.strip() or '(none: these are the first turns)'}\n</previous_summary>"
    ]
    if uploads:
        files = "\n".join(f"- {u.get('path', u.get('name', '?'))} ({u.get('type', 'file')})" for u in uploads)
        parts.append(f"<attached_files>\n{files}\n</attached_files>")
    parts.append("<turns_leaving_the_context>\n" + "\n\n".join(entries) + "\n</turns_leaving_the_context>")
    return encodable_messages([SystemMessage(content=system), HumanMessage(content="\n\n".join(parts))])


def fit_summary(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The summary as stored: cut at a line end when the model wrote far more than asked."""
    text = text.strip()
    limit = int(max_tokens * SUMMARY_SLACK)
    if count(text) <= limit:
        return text
    chars = int(len(text) * limit / count(text))
    cut = text.rfind("\n", 0, chars)
    return text[: cut if cut > chars // 2 else chars].rstrip() + "\n[summary cut to its size limit]"


# -- the summariser and the node ----------------------------------------------------------
class Summariser:
    """Asks the model for the folded summary, in as many calls as the dropped turns need."""

    def __init__(self, model: BaseChatModel, settings: Settings) -> None:
        self.model = model
        self.max_tokens = settings.governance.summary_max_tokens
        self.transcript_tokens = max(
            4_000, int(context_budget(settings.model, settings.governance) * TRANSCRIPT_SHARE)
        )

    def summarise(
        self,
        previous: str,
        dropped: Sequence[BaseMessage],
        *,
        focus: str,
        uploads: Sequence[UploadedFile],
        config: RunnableConfig,
        stop: threading.Event,
        on_usage: Callable[[dict[str, Any]], None],
    ) -> str:
        text = previous
        for group in batches(transcript_entries(dropped), self.transcript_tokens, estimate_tokens):
            request = summary_request(text, group, self.max_tokens, focus, uploads)
            try:
                response = invoke_cancellable(self.model, request, config, stop)
            except TurnCancelled:
                raise SummaryUnavailable("skipped with Ctrl-C") from None
            except Exception as exc:  # any failure of the call: the plain cut still happens
                LOGGER.warning("summarising failed: %s", exc)
                raise SummaryUnavailable(f"the summary request failed: {type(exc).__name__}") from exc
            if response.usage_metadata:
                on_usage(dict(response.usage_metadata))
            written = _text(response).strip()
            if not written:
                raise SummaryUnavailable("the model returned an empty summary")
            text = fit_summary(written, self.max_tokens, estimate_tokens)
        return text


def build_compact_node(
    model: BaseChatModel,
    settings: Settings,
    pending_cut: Callable[[AgentState], list[BaseMessage]],
):
    """The `compact` node: records the cut that is due (or the /compact or /clear asked for).

    `pending_cut` gives the messages a cut would drop now (the planner's own computation,
    so the node and the request agree). It goes on to the planner after a cut, and ends
    the run after /compact or /clear, which answer nothing.
    """
    summariser = Summariser(model, settings)
    enabled = settings.governance.compact_history

    def compact(state: AgentState, config: RunnableConfig, runtime: Runtime[RunContext]) -> Command:
        # The session's scope: a cancel while the summary is written skips the summary
        # (SessionScope.cancel), not the turn. A run without one (a server's) cannot skip.
        scope = runtime.context.scope if isinstance(runtime.context, RunContext) else None
        summarising = scope.summarising if scope is not None else threading.Event()
        skip = scope.skip_summary if scope is not None else threading.Event()
        writer = get_stream_writer()
        request = state.get("context_request") or {}
        previous: ConversationSummary = dict(state.get("summary") or {})  # type: ignore[assignment]
        action = request.get("action")
        after = "planner" if not action else END
        dropped = messages_after(state.get("messages", []), previous) if action else pending_cut(state)
        # /clear right after /compact drops no message, but the summary must go all the same.
        clears_summary = action == "clear" and bool(previous.get("text") or previous.get("question"))
        if not dropped and not clears_summary:
            if action:
                writer({"compaction": {"state": "nothing", "messages": 0}})
            return Command(update={"context_request": None}, goto=after)
        through = (dropped[-1].id or "") if dropped else previous.get("through", "")
        summary: ConversationSummary = {
            "text": previous.get("text", ""),
            "through": through,
            "messages": previous.get("messages", 0) + len(dropped),
            "unsummarised": previous.get("unsummarised", 0),
        }
        if not action and (question := open_question(state.get("messages", []), through)):
            summary["question"] = question
        update: dict[str, Any] = {"context_request": None}
        if action == "clear":
            summary["text"] = ""
            # The content read from outside is gone from what the model sees: what it stores
            # from now on is its own again (tools/provenance.py).
            update["read_untrusted"] = False
            summary["unsummarised"] = summary["messages"]
            event: dict[str, Any] = {"state": "cleared", "messages": len(dropped)}
        elif not enabled:
            summary["unsummarised"] = summary.get("unsummarised", 0) + len(dropped)
            event = {"state": "plain", "messages": len(dropped), "reason": "COMPACT_HISTORY is off"}
        else:
            writer({"compaction": {"state": "started", "messages": len(dropped)}})
            skip.clear()
            summarising.set()
            try:
                text = summariser.summarise(
                    previous.get("text", ""),
                    dropped,
                    focus=request.get("focus", ""),
                    uploads=state.get("uploaded_files", []),
                    config=config,
                    stop=skip,
                    on_usage=lambda usage: writer({"usage": usage}),
                )
            except SummaryUnavailable as exc:
                summary["unsummarised"] = summary.get("unsummarised", 0) + len(dropped)
                event = {"state": "plain", "messages": len(dropped), "reason": str(exc)}
            else:
                summary["text"] = text
                event = {"state": "done", "messages": len(dropped), "tokens": estimate_tokens(text)}
            finally:
                summarising.clear()
        summary["tokens"] = estimate_tokens(summary["text"])
        update["summary"] = summary
        writer({"compaction": event})
        return Command(update=update, goto=after)

    return compact


def _text(message: BaseMessage) -> str:
    text = message.text
    return text if isinstance(text, str) else str(message.content)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return f"{text[:limit]} […{len(text) - limit:,} more characters]"


def _template() -> str:
    return (TEMPLATES / "compaction.md").read_text(encoding="utf-8").strip()
