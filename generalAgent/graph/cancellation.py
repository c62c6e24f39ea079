"""Model calls that stop as soon as the user cancels the turn (Ctrl-C).

LangGraph lets a running node finish before an interrupt surfaces, so a model call
that is still streaming (or still waiting for its first token) would hold the terminal
until it ends. Here the call runs in a helper thread and the node returns the moment
the cancel event is set; a token callback also stops the abandoned stream at its next
token, so no further tokens are paid for.
"""

from __future__ import annotations

import contextvars
import threading
import time
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import Runnable, RunnableConfig

from generalAgent.providers.errors import AnswerLimitExceeded

POLL_SECONDS = 0.05


class TurnCancelled(Exception):
    """The user cancelled the turn while the model was answering."""


class _StopOnCancel(BaseCallbackHandler):
    raise_error = True  # an exception here must abort the stream, not be logged and ignored

    def __init__(self, cancelled: threading.Event) -> None:
        self.cancelled = cancelled

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        if self.cancelled.is_set():
            raise TurnCancelled


class AnswerLimits(BaseCallbackHandler):
    """Stops a model call whose streamed answer (text, reasoning, tool-call arguments) passes
    `max_chars` characters or streams for more than `max_seconds`: a relay that streams
    forever, or a 150 MB answer, is cut while it arrives instead of held and stored."""

    raise_error = True

    def __init__(self, max_chars: int, max_seconds: float) -> None:
        self.max_chars = max_chars
        self.max_seconds = max_seconds
        self.chars = 0
        self.started = time.monotonic()

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        self.chars += len(token) if isinstance(token, str) else 0
        message = getattr(kwargs.get("chunk"), "message", None)
        for call in getattr(message, "tool_call_chunks", None) or []:
            self.chars += len(call.get("args") or "")
        reasoning = getattr(message, "additional_kwargs", {}).get("reasoning_content")
        self.chars += len(reasoning) if isinstance(reasoning, str) else 0
        if self.chars > self.max_chars:
            raise AnswerLimitExceeded("MODEL_ANSWER_MAX_CHARS", self.max_chars)
        if time.monotonic() - self.started > self.max_seconds:
            raise AnswerLimitExceeded("MODEL_CALL_MAX_SECONDS", self.max_seconds)


def with_callback(config: RunnableConfig, handler: BaseCallbackHandler) -> RunnableConfig:
    """`config` with one more callback handler, whatever form its callbacks take."""
    callbacks = config.get("callbacks")
    if callbacks is None:
        callbacks = [handler]
    elif isinstance(callbacks, list):
        callbacks = [*callbacks, handler]
    else:  # a callback manager
        callbacks = callbacks.copy()
        callbacks.add_handler(handler, inherit=True)
    return {**config, "callbacks": callbacks}


def invoke_cancellable(
    runnable: Runnable,
    request: Any,
    config: RunnableConfig,
    cancelled: threading.Event | None,
    limits: AnswerLimits | None = None,
) -> Any:
    """`runnable.invoke`, stopped by `cancelled` (Ctrl-C) and by `limits` (a fresh
    AnswerLimits per call: its clock starts when it is made)."""
    if limits is not None:
        config = with_callback(config, limits)
    if cancelled is None:
        return runnable.invoke(request, config)
    if cancelled.is_set():  # cancelled while a tool ran: the next request is never sent
        raise TurnCancelled
    call_config = with_callback(config, _StopOnCancel(cancelled))
    outcome: dict[str, Any] = {}

    def call() -> None:
        try:
            outcome["value"] = runnable.invoke(request, call_config)
        except BaseException as exc:  # re-raised in the node's thread below
            outcome["error"] = exc

    # In the node's context (a copy): what the turn keeps there (the run's config, the turn
    # a retry of this call is reported to: tools/run_context.py) holds in the call too.
    worker = threading.Thread(
        target=contextvars.copy_context().run, args=(call,), name="model-call", daemon=True
    )
    worker.start()
    while worker.is_alive():
        worker.join(POLL_SECONDS)
        if cancelled.is_set():
            raise TurnCancelled
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
