"""Do facts from early turns still reach the model 90 turns later? Printed as JSON.

A scripted 100-turn session runs through the real graph and `ChatOpenAI` against the local
OpenAI-compatible test server (MAX_MESSAGE_HISTORY=40, so the history is cut every few
turns). Every turn the model calls a tool and answers; the user states a fact at turns 2,
15 and 40 ("Remember: ...") and asks for all three at turn 95. Reported, with compaction
on and off:

    facts_sent_at_turn_95   which facts are anywhere in the request of turn 95
    compactions             summary requests made
    summary_tokens          size of the summary at the head of that request
    summary_share_of_turn_95     summary tokens / that request's tokens
    summary_share_of_session     tokens of all summary requests and answers / all tokens sent and received

The server's summariser is scripted (tests/support/summaries.py): it carries the previous
summary forward and keeps each sentence the user asked to remember, as a faithful model
would. So this measures the mechanism (folding, placement at the head, persistence across
cuts), not a model's summarising skill.

    python -m bench.compaction_recall
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.prompt_cache import prompt_tokens  # noqa: E402
from generalAgent.agent.loading import load_agent  # noqa: E402
from generalAgent.config.settings import load_settings  # noqa: E402
from generalAgent.graph.turn import main_turn_input  # noqa: E402
from generalAgent.providers.tokens import estimate_tokens  # noqa: E402
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall  # noqa: E402
from tests.support.summaries import extractive_summary, is_summary_request  # noqa: E402

TURNS = 100
QUESTION_TURN = 95
FACTS = {
    2: ("the client is Lindqvist Bikes in Malmö", "Lindqvist Bikes"),
    15: ("the invoice number is INV-2025-0917", "INV-2025-0917"),
    40: ("报告必须在 3 月 14 日之前交给王经理", "3 月 14 日"),
}
ANSWER = (
    "I checked the figures again: revenue grew 12% year on year, mostly from the enterprise "
    "segment, and the margin held at 31%. 营收同比增长 12%，利润率保持在 31%。"
)


def responder(request: RecordedRequest) -> Reply:
    if is_summary_request(request.messages):
        return Reply(text=extractive_summary(request.messages))
    if "tool" in [m["role"] for m in request.messages[-2:]]:
        return Reply(text=ANSWER)
    return Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})])


def question(turn: int) -> str:
    if turn in FACTS:
        return f"Turn {turn}: please note this. Remember: {FACTS[turn][0]}."
    if turn == QUESTION_TURN:
        return f"Turn {turn}: who is the client, what is the invoice number, and when is the report due?"
    return f"Turn {turn}: how did region {turn % 7} do this quarter?"


def run(compact: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(responder=responder) as server:
        settings = load_settings(
            env_file=None,
            model={
                "model_name": "test-model",
                "openai_api_key": "sk-bench",
                "openai_base_url": server.base_url,
            },
            governance={"max_message_history": 40, "compact_history": compact},
            paths={"data_dir": Path(tmp)},
        )
        agent = load_agent(settings)
        config = {"configurable": {"thread_id": "recall"}, "recursion_limit": 1000}
        marks: dict[int, int] = {}
        for turn in range(1, TURNS + 1):
            marks[turn] = len(server.chat_requests)
            agent.graph.invoke(
                main_turn_input(question(turn), session_id="recall", max_loops=settings.governance.max_loops),
                config,
            )
        state = agent.graph.get_state(config).values
        agent.close()
        requests = server.chat_requests
    at_question = next(r for r in requests[marks[QUESTION_TURN] :] if not is_summary_request(r.messages))
    sent = json.dumps(at_question.messages, ensure_ascii=False)
    summaries = [r for r in requests if is_summary_request(r.messages)]
    summary_text = (state.get("summary") or {}).get("text", "")
    head = at_question.messages[1].get("content") or ""
    summary_tokens = estimate_tokens(head) if "<conversation_summary>" in head else 0
    total = sum(prompt_tokens(r) for r in requests) + sum(estimate_tokens(ANSWER) for _ in requests)
    summary_cost = sum(prompt_tokens(r) for r in summaries) + len(summaries) * estimate_tokens(summary_text)
    return {
        "facts_sent_at_turn_95": {str(turn): marker in sent for turn, (_, marker) in FACTS.items()},
        "compactions": len(summaries),
        "requests": len(requests),
        "summary_tokens": summary_tokens,
        "turn_95_request_tokens": prompt_tokens(at_question),
        "summary_share_of_turn_95": round(summary_tokens / prompt_tokens(at_question), 3),
        "summary_share_of_session": round(summary_cost / total, 3),
        "stored_messages": len(state["messages"]),
    }


def main() -> None:
    result = {"compaction": run(compact=True), "plain_cut": run(compact=False)}
    result["targets"] = {"facts_sent_at_turn_95": "all three with compaction"}
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
