"""The two facts about the model's context that compaction and the context gauge rely on.

How many tokens a text is, and how large the model's window is. Both are approximations
here (characters / 4, and MAX_CONTEXT_TOKENS) until the providers package knows them per
script and per model; everything else asks these two functions, so switching is local.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langchain_core.messages.utils import count_tokens_approximately

from generalAgent.config.settings import Settings


def estimate_tokens(text: str) -> int:
    """Approximate tokens of `text` as the model would count them."""
    return count_tokens_approximately([HumanMessage(content=text)]) if text else 0


def context_window(settings: Settings) -> int:
    """Tokens the model's context can hold (what the gauge measures against)."""
    return settings.governance.max_context_tokens
