"""Model calls that stop the moment the turn is cancelled."""

from __future__ import annotations

import threading
import time

import pytest
from langchain_core.runnables import RunnableLambda

from generalAgent.graph.cancellation import TurnCancelled, invoke_cancellable


def test_results_and_errors_come_back() -> None:
    def work(x: int) -> int:
        if x < 0:
            raise ValueError("negative")
        return x * 2

    assert invoke_cancellable(RunnableLambda(work), 21, {}, threading.Event()) == 42
    with pytest.raises(ValueError, match="negative"):
        invoke_cancellable(RunnableLambda(work), -1, {}, threading.Event())


def test_cancel_returns_at_once_while_the_call_is_still_running() -> None:
    cancelled = threading.Event()
    release = threading.Event()
    threading.Timer(0.2, cancelled.set).start()
    started = time.monotonic()
    with pytest.raises(TurnCancelled):
        invoke_cancellable(RunnableLambda(lambda _: release.wait(600)), None, {}, cancelled)
    assert time.monotonic() - started < 30  # not after the call (ten minutes); 0.2 s when idle
    release.set()


def test_a_turn_cancelled_before_the_call_sends_nothing() -> None:
    calls: list[str] = []
    cancelled = threading.Event()
    cancelled.set()  # Stop arrived while a tool was running
    with pytest.raises(TurnCancelled):
        invoke_cancellable(RunnableLambda(lambda x: calls.append(x)), "request", {}, cancelled)
    assert calls == []
