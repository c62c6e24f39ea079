"""The model client's retries as custom stream events of the run whose call retries.

The OpenAI client retries a 429, a 5xx or a dropped connection in silence; it says so only
in its log: httpx(2) logs each response's status at INFO, the client logs "Retrying request
in 2.0 seconds (retry 1 of 2)". The log records are the process's, but each is made in the
thread of the call that retries, inside the context of the run that made it (LangGraph runs
a node's work in a copy of the caller's context, the model call's thread and a sub-agent's
carry it over: graph/cancellation.py, graph/subagents.py). So one filter on those loggers
(`RetryWatcher`, installed once, holding no run's state) hands each record to the listener
in the context it was made in (tools/run_context.py's RETRY_LISTENER), and a `RetryRecords`
there turns a retry into one custom event, `{"retry": {"status", "delay", "number",
"limit"}}`, the shape agent/events.py's `event_from_custom` reads as a `RetryNotice`.

Where the event goes:
- In the user's process, agent/turns.py sets the listener for the whole turn and hands
  the event straight to the turn's view (sub-agents and summaries included).
- On a served deployment nobody did: the planner sets one for its model call that writes
  the event to the run's own stream (`streaming_retries`), so a remote client
  (agent/remote.py) reads it from the stream like any custom event, and two runs at once on
  one server each see only their own retries.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.config import get_stream_writer

from generalAgent.tools.run_context import RETRY_LISTENER

# The HTTP client logs each response; the OpenAI SDK moved from httpx to its fork httpx2.
HTTP_LOGGERS = ("httpx", "httpx2")
OPENAI_LOGGER = "openai._base_client"
RETRY_KEY = "retry"  # the custom event's key (agent/events.py reads it)


class RetryWatcher(logging.Filter):
    """Hands each record of the client's loggers to the listener of the context it was made
    in. Records below the level the user's log keeps are dropped here, so enabling INFO for
    those loggers adds nothing to the log file."""

    def __init__(self, keep_levels: dict[str, int]) -> None:
        super().__init__()
        self.keep_levels = keep_levels

    def filter(self, record: logging.LogRecord) -> bool:
        listener = RETRY_LISTENER.get()
        if listener is not None:
            listener(record)
        return record.levelno >= self.keep_levels.get(record.name, logging.WARNING)


class RetryRecords:
    """One run's reading of the client's log: each retry, with the status of the failed
    response before it, handed to `emit` as the custom event (`retry_event`)."""

    def __init__(self, emit: Callable[[dict[str, Any]], Any]) -> None:
        self.emit = emit
        self.last_status: int | None = None  # of the last failed response; None: no response

    def saw(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        message = str(record.msg)
        if record.name in HTTP_LOGGERS and message.startswith("HTTP Request") and len(args) >= 4:
            status = args[3]
            self.last_status = status if isinstance(status, int) and status >= 400 else None
        elif record.name == OPENAI_LOGGER and message.startswith("Retrying request") and len(args) >= 3:
            try:
                delay, number, limit = (float(str(value)) for value in args[:3])
            except ValueError:  # a client that words it otherwise: no notice, never an error
                return
            status, self.last_status = self.last_status, None
            self.emit(retry_event(status, delay, int(number), int(limit)))


def retry_event(status: int | None, delay: float, number: int, limit: int) -> dict[str, Any]:
    """The custom stream event of one retry (JSON: it crosses a server's wire)."""
    return {RETRY_KEY: {"status": status, "delay": delay, "number": number, "limit": limit}}


_WATCHER_LOCK = threading.Lock()


def install_retry_watcher() -> None:
    """The one filter on the client's loggers (RetryWatcher), installed on the first call.
    It holds no run's state: only the levels the user's log keeps, as they were then."""
    with _WATCHER_LOCK:
        loggers = [logging.getLogger(name) for name in (*HTTP_LOGGERS, OPENAI_LOGGER)]
        if any(isinstance(f, RetryWatcher) for logger in loggers for f in logger.filters):
            return
        watcher = RetryWatcher({logger.name: logger.getEffectiveLevel() for logger in loggers})
        for logger in loggers:
            logger.addFilter(watcher)
            logger.setLevel(min(logging.INFO, logger.getEffectiveLevel()))


@contextmanager
def listening_for_retries(emit: Callable[[dict[str, Any]], Any]) -> Iterator[None]:
    """While the block runs, each retry of a model call made in this context (and in the
    threads that copy it) is handed to `emit` as its custom event."""
    install_retry_watcher()
    token = RETRY_LISTENER.set(RetryRecords(emit).saw)
    try:
        yield
    finally:
        RETRY_LISTENER.reset(token)


@contextmanager
def streaming_retries() -> Iterator[None]:
    """For a model call of a node: when nobody listens for this run's retries already (a
    served run: the user's process listens for its own turn), they are written to the run's
    own custom stream. Outside a run (no stream writer) nothing changes."""
    if RETRY_LISTENER.get() is not None:
        yield
        return
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a runnable context
        yield
        return
    with listening_for_retries(writer):
        yield
