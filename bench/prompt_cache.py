"""How much of each request a provider's prompt cache can reuse, printed as JSON.

Runs the real compiled graph and the real ChatOpenAI client against the local
OpenAI-compatible test server over scripted sessions, and measures every request as it
went over the wire. A provider caches the longest exact prefix shared with an earlier
request, counted in 128-token blocks and only from 1,024 tokens on (OpenAI's rule), so
for each request:

    cacheable = floor128(tokens of the prefix shared with the previous request), 0 if < 1024
    ratio     = cacheable / prompt tokens

Tokens are `count_tokens_approximately` (tool definitions: their JSON, 4 chars a token).
Sessions: 10 turns; 100 turns with a tool call every turn (todo_write), uploads at turns
3 and 50, @mentions at turns 20 and 60, MAX_MESSAGE_HISTORY=40. The same sessions also
run through a naive per-call sliding window (keep the last 40 messages on every call, as
a plain chat loop does), for a side-by-side ratio. With reasoning on, the same sessions run in
DeepSeek's dialect against a server as strict as DeepSeek (every answer thinks, and the
reasoning of each tool-calling turn is sent back), and the echoed reasoning counts.

    python -m bench.prompt_cache
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage, convert_to_messages  # noqa: E402
from langchain_core.messages.utils import count_tokens_approximately  # noqa: E402

from generalAgent.config.settings import load_settings  # noqa: E402
from generalAgent.graph.context import PromptBuilder  # noqa: E402
from generalAgent.graph.history import clean_message_history  # noqa: E402
from generalAgent.graph.turn import main_turn_input, thread_config  # noqa: E402
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall  # noqa: E402
from tests.support.summaries import extractive_summary, is_summary_request  # noqa: E402

# Facts the user states: a compaction's summary keeps them, so its size is like a real one's.
FACT_TURNS = {
    2: "the report is for the Hangzhou office.",
    15: "figures are in thousands of CNY.",
    40: "the board meets on 12 March.",
}
BLOCK = 128
MINIMUM = 1024
# How many earlier requests a request is matched against (a provider's cache holds recent
# prefixes for minutes; a session sends a handful of requests a minute).
RECENT_PREFIXES = 8
ANSWER = (
    "Here is what I found. The quarterly report shows revenue growth of 12% year on year, "
    "driven by the enterprise segment; customer satisfaction rose to 4.6 out of 5. "
    "营收同比增长 12%，主要来自企业客户；客户满意度提升至 4.6 分。 "
) * 3


# -- the measure ------------------------------------------------------------------------
def wire_tokens(request: RecordedRequest) -> tuple[int, list[int], list[str]]:
    """(tool tokens, tokens per message, text per message) of one request as sent."""
    tools = request.body.get("tools") or []
    tool_tokens = len(json.dumps(tools, ensure_ascii=False)) // 4
    messages = [_as_message(m) for m in request.messages]
    echoed = [len(m.get("reasoning_content") or "") // 4 for m in request.messages]
    per_message = [count_tokens_approximately([m]) + r for m, r in zip(messages, echoed, strict=True)]
    texts = [json.dumps(m, ensure_ascii=False, sort_keys=True) for m in request.messages]
    return tool_tokens, per_message, texts


def cacheable_prefix_tokens(previous: RecordedRequest | None, current: RecordedRequest) -> int:
    """Tokens of `current` a provider would serve from cache after `previous`."""
    if previous is None:
        return 0
    return shared_prefix_tokens(Wire.of(previous), Wire.of(current))


@dataclass(frozen=True)
class Wire:
    """A request as the measure reads it: its tools, and each message's text and tokens."""

    tools: str
    tool_tokens: int
    per_message: list[int]
    texts: list[str]

    @classmethod
    def of(cls, request: RecordedRequest) -> Wire:
        tool_tokens, per_message, texts = wire_tokens(request)
        return cls(json.dumps(request.body.get("tools") or []), tool_tokens, per_message, texts)


def shared_prefix_tokens(previous: Wire, current: Wire) -> int:
    if previous.tools != current.tools:
        return 0  # tool definitions come first in the prompt: a change there invalidates all
    shared = current.tool_tokens
    for before, now, tokens in zip(previous.texts, current.texts, current.per_message, strict=False):
        if before == now:
            shared += tokens
            continue
        common = 0
        for a, b in zip(before, now, strict=False):
            if a != b:
                break
            common += 1
        shared += common // 4  # the shared start of the first differing message
        break
    cacheable = (shared // BLOCK) * BLOCK
    return cacheable if cacheable >= MINIMUM else 0


def prompt_tokens(request: RecordedRequest) -> int:
    tool_tokens, per_message, _ = wire_tokens(request)
    return tool_tokens + sum(per_message)


def _as_message(wire: dict[str, Any]) -> BaseMessage:
    wire = {k: v for k, v in wire.items() if k != "reasoning_content"}
    if wire.get("content") is None:
        wire["content"] = ""
    return convert_to_messages([wire])[0]


# -- the reference: a naive per-call sliding window ----------------------------------------
def naive_sliding_window(messages: list[BaseMessage], keep_recent: int) -> list[BaseMessage]:
    """Keep the last `keep_recent` messages on every call, plus the AI call of a kept answer."""
    if len(messages) <= keep_recent:
        return list(messages)
    calls: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                calls[call["id"]] = index
    keep = set(range(len(messages) - keep_recent, len(messages)))
    for index in list(keep):
        message = messages[index]
        if isinstance(message, ToolMessage) and message.tool_call_id in calls:
            keep.add(calls[message.tool_call_id])
    keep.update(i for i, m in enumerate(messages) if isinstance(m, SystemMessage))
    return clean_message_history([messages[i] for i in sorted(keep)])


@contextmanager
def sliding_window_history(keep_recent: int):
    original = PromptBuilder.history

    def history(self: PromptBuilder, state: dict, system: Any, tools: list) -> list[BaseMessage]:
        return naive_sliding_window(clean_message_history(state.get("messages", [])), keep_recent)

    PromptBuilder.history = history  # type: ignore[method-assign]
    try:
        yield
    finally:
        PromptBuilder.history = original  # type: ignore[method-assign]


# -- the sessions -------------------------------------------------------------------------
THOUGHT = "The user asks about growth; check the todo list, then answer from the report. " * 6


def responder(request: RecordedRequest) -> Reply:
    """Every turn: one todo_write call, then an answer; summaries when compaction asks."""
    if is_summary_request(request.messages):
        return Reply(text=extractive_summary(request.messages))
    last = request.messages[-1]
    if last["role"] == "user" and not _after_tool(request.messages):
        turn = sum(1 for m in request.messages if m["role"] == "user")
        todos = [
            {
                "content": f"step {i} of the analysis",
                "status": "completed" if i < turn % 5 else "pending",
                "priority": "medium",
            }
            for i in range(5)
        ]
        todos[turn % 5]["status"] = "in_progress"
        return Reply(tool_calls=[ToolCall("todo_write", {"todos": todos})])
    return Reply(text=ANSWER)


def _after_tool(messages: list[dict[str, Any]]) -> bool:
    """True when the last user message is only a reminder sent after a tool answer."""
    return len(messages) >= 2 and messages[-2]["role"] == "tool"


def thinking_responder(request: RecordedRequest) -> Reply:
    """The same session from a model that thinks before every call and answer."""
    reply = responder(request)
    reply.reasoning = THOUGHT
    return reply


def run_session(
    turns: int, window: Callable[[], Any] | None, reasoning: bool = False, compact: bool = False
) -> list[RecordedRequest]:
    from generalAgent.agent.loading import load_agent

    upload_turns = {3: "季度报告.pdf", 50: "annual-report-2025.docx"}
    mention_turns = {20: "agent", 60: "pdf"}
    server = ScriptedOpenAIServer(
        responder=thinking_responder if reasoning else responder,
        dialect="deepseek" if reasoning else "generic",
        strict_history=True,
    )
    with tempfile.TemporaryDirectory() as tmp, server:
        settings = load_settings(
            env_file=None,
            model={
                "model_name": "test-model",
                "openai_api_key": "sk-bench",
                "openai_base_url": server.base_url,
                "model_max_retries": 0,
                "model_provider": "deepseek" if reasoning else "generic",
            },
            governance={"max_message_history": 40, "compact_history": compact},
            paths={"data_dir": Path(tmp)},
        )
        agent = load_agent(settings)
        config = thread_config("bench")
        with window() if window else _nothing():
            for turn in range(1, turns + 1):
                uploads: list[Any] = []
                if turn in upload_turns:
                    name = upload_turns[turn]
                    uploads.append(
                        {
                            "name": name,
                            "path": f"uploads/{name}",
                            "type": name.rsplit(".", 1)[1],
                            "size": 2_400_000,
                            "pages": 48,
                        }
                    )
                mentions = [mention_turns[turn]] if turn in mention_turns else []
                question = f"Turn {turn}: what does the report say about growth in region {turn % 7}?"
                if turn in FACT_TURNS:
                    question += f" Remember: {FACT_TURNS[turn]}"
                turn_input = main_turn_input(
                    question, session_id="bench", max_loops=30, mentions=mentions, uploads=uploads
                )
                agent.graph.invoke(turn_input, config)
        agent.close()
        if server.refusals:
            raise RuntimeError(f"the server refused {len(server.refusals)} request(s): {server.refusals[0]}")
        return server.chat_requests


@contextmanager
def _nothing():
    yield


def measure(requests: list[RecordedRequest]) -> dict[str, Any]:
    """Each request against the earlier request it shares the longest prefix with.

    A provider keeps recent prefixes, not only the last one: after a request of another
    kind (a summary request, with its own system prompt and no tools) the next request of
    the conversation still finds the conversation's prefix. `previous_only` is the stricter
    figure, against the request just before.
    """
    ratios, strict = [], []
    largest = 0
    cacheable_tokens = total_tokens = 0
    wires = [Wire.of(request) for request in requests]
    for index, wire in enumerate(wires):
        total = wire.tool_tokens + sum(wire.per_message)
        largest = max(largest, total)
        earlier = wires[max(0, index - RECENT_PREFIXES) : index]
        best = max((shared_prefix_tokens(before, wire) for before in earlier), default=0)
        ratios.append(best / total)
        strict.append(shared_prefix_tokens(wires[index - 1], wire) / total if index else 0.0)
        cacheable_tokens += best
        total_tokens += total
    ordered = sorted(ratios)
    conversation = [
        r for r, request in zip(ratios, requests, strict=True) if not is_summary_request(request.messages)
    ]
    return {
        "requests": len(requests),
        "mean_cacheable_ratio": round(statistics.mean(ratios), 3),
        "p10_cacheable_ratio": round(ordered[max(0, len(ordered) // 10 - 1)], 3),
        "token_weighted_ratio": round(cacheable_tokens / total_tokens, 3),
        "mean_previous_only": round(statistics.mean(strict), 3),
        "mean_conversation_requests": round(statistics.mean(conversation), 3),
        "largest_prompt_tokens": largest,
    }


def main() -> None:
    from generalAgent.providers.tokens import context_budget

    defaults = load_settings(env_file=None, model={"model_name": "test-model", "model_provider": "generic"})
    budget = context_budget(defaults.model, defaults.governance)
    result: dict[str, Any] = {"max_context_tokens": budget}
    for turns in (10, 100):
        compaction_requests = run_session(turns, window=None, compact=True)
        compaction = measure(compaction_requests)
        compaction["summary_requests"] = sum(1 for r in compaction_requests if is_summary_request(r.messages))
        hysteresis = measure(run_session(turns, window=None))
        sliding = measure(run_session(turns, window=lambda: sliding_window_history(40)))
        result[f"session_{turns}_turns"] = {
            "compaction": compaction,
            "hysteresis_plain_cut": hysteresis,
            "sliding_window_40": sliding,
            "ratio_compaction_over_sliding": round(
                compaction["mean_cacheable_ratio"] / max(sliding["mean_cacheable_ratio"], 1e-9), 2
            ),
            "within_token_budget": max(
                compaction["largest_prompt_tokens"], hysteresis["largest_prompt_tokens"]
            )
            <= budget,
        }
        thinking = measure(run_session(turns, window=None, reasoning=True))
        result[f"session_{turns}_turns"]["hysteresis_reasoning_on"] = thinking
    result["targets"] = {
        "mean_100_turns_compaction": ">= 0.90",
        "mean_100_turns_reasoning_on": ">= 0.90",
        "mean_10_turns": ">= 0.80",
        "sliding_window_100": "about 0.2",
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
