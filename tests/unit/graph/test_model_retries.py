"""The model client's retries read from its log (graph/model_retries.py): one custom event per
retry with the failed response's status, only in the context that listens, and a sub-agent's
passed on to the parent's stream."""

from __future__ import annotations

import logging
import threading
from typing import Any

from generalAgent.agent.events import RetryNotice, event_from_custom
from generalAgent.graph.model_retries import listening_for_retries, streaming_retries
from generalAgent.graph.subagents import SubagentRunner
from generalAgent.tools.run_context import RETRY_LISTENER


def client_log_of_one_retry(status: int) -> None:
    """What httpx2 and the OpenAI client log around one retried request."""
    http = logging.getLogger("httpx2")
    http.info('HTTP Request: %s %s "%s %d %s"', "POST", "http://m/v1/chat", "HTTP/1.1", status, "Error")
    logging.getLogger("openai._base_client").info(
        "Retrying request in %f seconds (retry %d of %d)", 1.5, 1, 2
    )


def test_a_retry_becomes_one_event_with_the_status_before_it_in_the_listening_context_only() -> None:
    mine: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []

    def other_run() -> None:
        with listening_for_retries(theirs.append):
            client_log_of_one_retry(503)

    with listening_for_retries(mine.append):
        client_log_of_one_retry(429)
        other = threading.Thread(target=other_run)
        other.start()
        other.join()
    client_log_of_one_retry(500)  # nobody listens here
    assert [event_from_custom(e) for e in mine] == [RetryNotice(429, 1.5, 1, 2)]
    assert [event_from_custom(e) for e in theirs] == [RetryNotice(503, 1.5, 1, 2)]
    assert RETRY_LISTENER.get() is None


def test_outside_a_run_streaming_retries_changes_nothing() -> None:
    with streaming_retries():
        assert RETRY_LISTENER.get() is None
        client_log_of_one_retry(429)  # no stream to write to: no error either


def test_a_sub_agents_retry_reaches_the_parents_stream() -> None:
    written: list[Any] = []
    SubagentRunner._relay(
        "subagent-1", {"retry": {"status": 429, "delay": 1.0, "number": 1, "limit": 2}}, written.append
    )
    assert [event_from_custom(e) for e in written] == [RetryNotice(429, 1.0, 1, 2)]
