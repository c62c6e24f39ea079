"""Prompt sizes in the provider's tokens, estimated per script, and each model's context window.

DeepSeek's "Token & Token Usage" guide gives the rule of thumb used here: about 0.6
token per Chinese character and 0.3 per English character. Four characters a token
(LangChain's `count_tokens_approximately`) undercounts Chinese text by about 2.4x, so a
history of Chinese passages could outgrow the window while the budget thought it had
room. The estimate is then calibrated with what the provider reported for the last
request (`calibration_factor`), which absorbs the tokenizer's real ratio for this
model and text.

Public API (also used by compaction and the context gauge): `estimate_tokens(text)`,
`estimate_message_tokens(message)`, `context_window(settings)` and `context_budget(...)`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from generalAgent.config.settings import GovernanceSettings, ModelSettings
from generalAgent.display import N_

CJK_TOKENS_PER_CHAR = 0.6
OTHER_TOKENS_PER_CHAR = 0.3
# Role markers and separators a chat template adds around each message.
MESSAGE_OVERHEAD = 4
# The share of the window the history may fill when MAX_CONTEXT_TOKENS is unset: the rest
# is the answer's room (reasoning included) and the error of the estimate.
WINDOW_SHARE = 0.75
# Calibration is trusted within these bounds; outside them the report is for another prompt.
MIN_FACTOR, MAX_FACTOR = 0.5, 4.0
# Where the planner leaves its estimate of a request, beside the usage the provider reports.
ESTIMATE_KEY = "prompt_token_estimate"

# Han ideographs (with extensions and compatibility forms), CJK punctuation, kana, Hangul
# and full-width forms: the characters a BPE tokenizer spends most on.
_CJK_RUN = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003134f]+"
)


def estimate_tokens(text: str) -> int:
    """Tokens of `text` as DeepSeek-like tokenizers count them: 0.6 per CJK char, 0.3 per other."""
    if not text:
        return 0
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    return math.ceil(cjk * CJK_TOKENS_PER_CHAR + (len(text) - cjk) * OTHER_TOKENS_PER_CHAR)


def estimate_message_tokens(message: BaseMessage, with_reasoning: bool = False) -> int:
    """Tokens one message takes in a request: its text, its tool calls, (its echoed reasoning)."""
    content = message.content
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    tokens = MESSAGE_OVERHEAD + estimate_tokens(text)
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            tokens += estimate_tokens(call["name"]) + estimate_tokens(
                json.dumps(call["args"], ensure_ascii=False)
            )
        for invalid in message.invalid_tool_calls:
            tokens += estimate_tokens(str(invalid.get("args") or ""))
        if with_reasoning:
            reasoning = message.additional_kwargs.get("reasoning_content")
            tokens += estimate_tokens(reasoning) if isinstance(reasoning, str) else 0
    return tokens


def estimate_payload_tokens(payload: Any) -> int:
    """Tokens of JSON the provider reads as text (tool schemas)."""
    return estimate_tokens(json.dumps(payload, ensure_ascii=False))


@dataclass(frozen=True)
class ContextWindow:
    tokens: int
    source: str  # "MODEL_CONTEXT_WINDOW", "deepseek-chat* in the deepseek table", ...
    # The source as a marked message and its fields, for the terminal's language (`describe`).
    template: str = ""
    fields: tuple[tuple[str, str], ...] = ()

    def describe(self, translate: Callable[[str], str] = str) -> str:
        """Where the window comes from, in the language of `translate` (the terminal's `_`)."""
        return translate(self.template).format(**dict(self.fields)) if self.template else self.source


def context_window(settings: ModelSettings) -> ContextWindow:
    """The model's window: MODEL_CONTEXT_WINDOW, else the dialect's table, else its default."""
    if settings.model_context_window:
        return ContextWindow(settings.model_context_window, "MODEL_CONTEXT_WINDOW")
    from generalAgent.providers.detection import choose_provider, model_known_by_name

    dialect = choose_provider(settings).dialect
    tokens, prefix = dialect.context_window(settings.model_name)
    known = model_known_by_name(settings.model_name) if prefix is None else None
    if known is not None and known[0].context_window(known[1])[1] is not None:
        # A known model behind a relay or proxy: its own provider's table has its window.
        other, name = known
        tokens, prefix = other.context_window(name)
        template = N_("{prefix}* in the {dialect} table, by the model's name")
        fields = {"prefix": str(prefix), "dialect": other.name}
    elif prefix is None:
        template = N_("{dialect}'s default for unknown models; set MODEL_CONTEXT_WINDOW to the model's")
        fields = {"dialect": dialect.name}
    else:
        template, fields = N_("{prefix}* in the {dialect} table"), {"prefix": prefix, "dialect": dialect.name}
    return ContextWindow(tokens, template.format(**fields), template, tuple(fields.items()))


def context_budget(model: ModelSettings, governance: GovernanceSettings) -> int:
    """Prompt tokens a request may hold: MAX_CONTEXT_TOKENS, else a safe share of the window."""
    if governance.max_context_tokens:
        return governance.max_context_tokens
    return int(context_window(model).tokens * WINDOW_SHARE)


def calibration_factor(history: Sequence[BaseMessage]) -> float:
    """Provider tokens per estimated token, from the last answer that carries both counts.

    The planner stores its estimate of each request on the answer (`ESTIMATE_KEY` in
    response_metadata, never sent); the provider's `input_tokens` for that request says
    how far off the estimate was. 1.0 when no answer has both yet.
    """
    for message in reversed(history):
        if not isinstance(message, AIMessage):
            continue
        estimate = message.response_metadata.get(ESTIMATE_KEY)
        reported = message.usage_metadata["input_tokens"] if message.usage_metadata else None
        if isinstance(estimate, int) and estimate > 0 and isinstance(reported, int) and reported > 0:
            return min(MAX_FACTOR, max(MIN_FACTOR, reported / estimate))
    return 1.0
