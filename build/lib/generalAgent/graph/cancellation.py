"""Model calls that stop as soon as the user cancels the turn (Ctrl-C).

LangGraph lets a running node finish before an interrupt surfaces, so a model call
that is still streaming (or still waiting for its first token) would hold the terminal
until it ends. Here the call runs in a helper thread and the node returns the moment
the cancel event is set; a token callback also stops the abandoned stream at its next
token, so no further tokens are paid for.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import Runnable, RunnableConfig

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
    runnable: Runnable, request: Any, config: RunnableConfig, cancelled: threading.Event | None
) -> Any:
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

    worker = threading.Thread(target=call, name="model-call", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(POLL_SECONDS)
        if cancelled.is_set():
            raise TurnCancelled
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
