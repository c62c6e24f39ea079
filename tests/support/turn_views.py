"""A turn view for tests: it keeps every event and answers each question as told."""

from __future__ import annotations

from collections.abc import Callable

from generalAgent.agent.events import ApprovalRequest, TurnEvent


class RecordingView:
    """A TurnView that keeps every event and answers each question with `answer(request)`."""

    def __init__(self, answer: Callable[[ApprovalRequest], str] = lambda request: "no") -> None:
        self.events: list[TurnEvent] = []
        self.asked: list[ApprovalRequest] = []
        self.answer = answer
        self.closed = False

    def on_event(self, event: TurnEvent) -> None:
        self.events.append(event)

    def approve(self, request: ApprovalRequest) -> str:
        self.asked.append(request)
        return self.answer(request)

    def close(self) -> None:
        self.closed = True

    def of(self, kind: type) -> list[TurnEvent]:
        return [e for e in self.events if isinstance(e, kind)]
