"""Model calls that stop as soon as the user cancels the turn (Ctrl-C).

LangGraph lets a running node finish before an interrupt surfaces, so a model call
that is still streaming (or still waiting for its first token) would hold the terminal
until it ends. Here the call runs on a helper thread and the node returns the moment
the cancel event is set; a token callback also stops the abandoned stream at its next
token, so no further tokens are paid for.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
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

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
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


class CancellableModelCalls:
    """Runs model calls on a few long-lived daemon threads, so a node can give up on cancel.

    Long-lived rather than one thread per call: glibc gives new threads their own malloc
    arenas, and a thread per call made a long session's memory grow in steps. Daemon
    threads, so that a call abandoned on cancel (still waiting for a slow endpoint)
    never delays the program's exit.
    """

    def __init__(self, cancelled: threading.Event | None, workers: int = 4) -> None:
        self.cancelled = cancelled
        self._jobs: queue.SimpleQueue[tuple[Future, Callable[[], Any]]] = queue.SimpleQueue()
        self._workers = workers
        self._started = 0
        self._lock = threading.Lock()

    def invoke(self, runnable: Runnable, request: Any, config: RunnableConfig) -> Any:
        if self.cancelled is None:
            return runnable.invoke(request, config)
        call_config = with_callback(config, _StopOnCancel(self.cancelled))
        future: Future = Future()
        self._ensure_workers()
        self._jobs.put((future, lambda: runnable.invoke(request, call_config)))
        while True:
            try:
                return future.result(timeout=POLL_SECONDS)
            except FutureTimeout:
                if self.cancelled.is_set():
                    raise TurnCancelled from None

    def _ensure_workers(self) -> None:
        with self._lock:
            while self._started < self._workers:
                self._started += 1
                threading.Thread(target=self._work, name=f"model-call-{self._started}", daemon=True).start()

    def _work(self) -> None:
        while True:
            future, job = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # delivered to the waiting node
                future.set_exception(exc)
