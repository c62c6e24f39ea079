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
run through the reference per-turn sliding window of seed 004 (keep the last 40 messages
on every call), for a side-by-side ratio.

    python -m bench.prompt_cache
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage, convert_to_messages  # noqa: E402
from langchain_core.messages.utils import count_tokens_approximately  # noqa: E402

from generalAgent.config.settings import load_settings  # noqa: E402
from generalAgent.graph.message_utils import clean_message_history  # noqa: E402
from generalAgent.graph.nodes.planner import PromptBuilder  # noqa: E402
from generalAgent.graph.turn import main_turn_input, thread_config  # noqa: E402
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall  # noqa: E402

BLOCK = 128
MINIMUM = 1024
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
    per_message = [count_tokens_approximately([m]) for m in messages]
    texts = [json.dumps(m, ensure_ascii=False, sort_keys=True) for m in request.messages]
    return tool_tokens, per_message, texts


def cacheable_prefix_tokens(previous: RecordedRequest | None, current: RecordedRequest) -> int:
    """Tokens of `current` a provider would serve from cache after `previous`."""
    if previous is None:
        return 0
    tool_tokens, per_message, texts = wire_tokens(current)
    if (previous.body.get("tools") or []) != (current.body.get("tools") or []):
        return 0  # tool definitions come first in the prompt: a change there invalidates all
    _, _, previous_texts = wire_tokens(previous)
    shared = tool_tokens
    for before, now, tokens in zip(previous_texts, texts, per_message, strict=False):
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
    wire = dict(wire)
    if wire.get("content") is None:
        wire["content"] = ""
    return convert_to_messages([wire])[0]


# -- the reference: seed 004's per-call sliding window ------------------------------------
def seed_sliding_window(messages: list[BaseMessage], keep_recent: int) -> list[BaseMessage]:
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
        return seed_sliding_window(clean_message_history(state.get("messages", [])), keep_recent)

    PromptBuilder.history = history  # type: ignore[method-assign]
    try:
        yield
    finally:
        PromptBuilder.history = original  # type: ignore[method-assign]


# -- the sessions -------------------------------------------------------------------------
def responder(request: RecordedRequest) -> Reply:
    """Every turn: one todo_write call, then an answer."""
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


def run_session(turns: int, window: Callable[[], Any] | None) -> list[RecordedRequest]:
    from generalAgent.cli.runtime import load_agent

    upload_turns = {3: "季度报告.pdf", 50: "annual-report-2025.docx"}
    mention_turns = {20: "agent", 60: "pdf"}
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(responder=responder) as server:
        settings = load_settings(
            env_file=None,
            model={
                "model_name": "test-model",
                "openai_api_key": "sk-bench",
                "openai_base_url": server.base_url,
                "model_max_retries": 0,
            },
            governance={"max_message_history": 40},
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
                turn_input = main_turn_input(
                    question, session_id="bench", max_loops=30, mentions=mentions, uploads=uploads
                )
                agent.graph.invoke(turn_input, config)
        agent.close()
        return server.chat_requests


@contextmanager
def _nothing():
    yield


def measure(requests: list[RecordedRequest]) -> dict[str, Any]:
    ratios = []
    largest = 0
    previous = None
    for request in requests:
        total = prompt_tokens(request)
        largest = max(largest, total)
        ratios.append(cacheable_prefix_tokens(previous, request) / total)
        previous = request
    ordered = sorted(ratios)
    return {
        "requests": len(requests),
        "mean_cacheable_ratio": round(statistics.mean(ratios), 3),
        "p10_cacheable_ratio": round(ordered[max(0, len(ordered) // 10 - 1)], 3),
        "largest_prompt_tokens": largest,
    }


def main() -> None:
    budget = load_settings(env_file=None).governance.max_context_tokens
    result: dict[str, Any] = {"max_context_tokens": budget}
    for turns in (10, 100):
        hysteresis = measure(run_session(turns, window=None))
        sliding = measure(run_session(turns, window=lambda: sliding_window_history(40)))
        result[f"session_{turns}_turns"] = {
            "hysteresis": hysteresis,
            "sliding_window_40": sliding,
            "ratio_hysteresis_over_sliding": round(
                hysteresis["mean_cacheable_ratio"] / max(sliding["mean_cacheable_ratio"], 1e-9), 2
            ),
            "within_token_budget": hysteresis["largest_prompt_tokens"] <= budget,
        }
    result["targets"] = {
        "mean_100_turns": ">= 0.85",
        "mean_10_turns": ">= 0.80",
        "sliding_window_100": "about 0.2",
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
