"""A served deployment (LangGraph Server, or the Aegra replicas) as the engine of a turn.

The terminal chat and `-p` normally run the graph in their own process (agent/turns.py).
Pointed at a server (`generalagent --server URL`), they run the same graph there, through
`langgraph_sdk`, and see the same turn: the server's stream (messages, updates and custom
modes, as JSON) is turned back into LangChain messages and LangGraph interrupts here and
handed to agent/turns.py's `report_stream`, so every view receives the typed events of
agent/events.py exactly as from a local graph and nothing renders a second way. The
approval pause (graph/nodes/approval.py, `INTERRUPT_KIND`) is asked through the view's
`approve` with the engine's own `answer_approval` and answered with a resume command.

What differs from a local turn, and why:

- The server decides who the user is (graph/server_auth.py): the token (REMOTE_SERVER_TOKEN)
  goes in `Authorization: Bearer`, and a user sees and resumes only their own threads.
- Ctrl-C cancels the run on the server (and the stream asks the server to cancel it if this
  process goes away: `on_disconnect="cancel"`). The history is not repaired from here (a
  client may not write a thread's state); the served graph answers calls left open itself
  when the next run starts, and stores the part of a stopped answer the user saw, which
  the next message of the thread carries (`interrupted_answer`, graph/history.py).
- Files (`#path`) are sent in the message, as their text (agent/remote_attachments.py):
  the server's tools read the server's files, not these. Images are not sent yet.
- A failure (a bad URL, a refused token, a server gone mid-turn) is a `RemoteError` with
  one line in the UI language; what the server stored stays on the server.

Nothing here keeps state beyond one `RemoteAgent` (one HTTP client per front end).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, MutableSet, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from langchain_core.messages import BaseMessage, messages_from_dict
from langgraph.types import Interrupt

from generalAgent.agent.chat_input import parse_mentions
from generalAgent.agent.turns import TurnResult, TurnView, answer_approval, report_stream
from generalAgent.i18n import N_, _

LOGGER = logging.getLogger(__name__)
DEFAULT_GRAPH = "generalAgent"  # the graph's name in langgraph.json
STREAM_MODES = ["messages-tuple", "updates", "custom"]
TITLE_CHARS = 60
# Waiting for a server: connecting is quick or it is not there; a turn's stream may stay
# silent while a tool runs, so reading has no limit short of the model's own timeouts.
CONNECT_SECONDS = 10.0
READ_SECONDS = 600.0

NO_SERVER = N_(
    "Cannot reach the server at {url} ({reason}). Check the address given to --server and that the server is running."
)
NOT_A_URL = N_("{url} is not a server address: give one like http://localhost:2024 to --server.")
REFUSED_TOKEN = N_(
    "The server at {url} refused the token ({status}): set REMOTE_SERVER_TOKEN to a key or token it accepts (docs/deployment.md)."
)
REFUSED = N_("The server refused: {detail}")
NO_THREAD = N_("No thread {id} of yours on this server (/threads lists them).")
SERVER_GONE = N_(
    "The connection to the server was lost during the turn ({reason}). What the server stored is kept in "
    "thread {thread}: send the message again once the server is back."
)
SERVER_FAILED = N_("The server answered {status}: {detail}")
RUN_FAILED = N_("The run failed on the server: {detail}")


class RemoteError(Exception):
    """A served deployment could not be used; the message is one line in the UI language."""


@dataclass(frozen=True)
class RemoteThread:
    """One of the user's threads on the server, as /threads lists it."""

    id: str
    title: str
    updated: str  # ISO time, as the server gave it
    status: str  # idle, busy, interrupted (waiting for an approval) or error


class RemoteAgent:
    """A served deployment of the graph, reached with `token` (None: the request carries none)."""

    def __init__(self, url: str, token: str | None = None, graph: str = DEFAULT_GRAPH) -> None:
        from langgraph_sdk.client import SyncLangGraphClient

        self.url = url.rstrip("/")
        self.graph = graph
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            http = httpx.Client(
                base_url=self.url,
                # One retry of a refused connection, not the SDK's five with back-off: a
                # wrong address is said in a second, not in eight.
                transport=httpx.HTTPTransport(retries=1),
                timeout=httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS),
                headers=headers,
                event_hooks={"response": [_no_reconnect]},
            )
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise RemoteError(_(NOT_A_URL).format(url=url)) from exc
        if http.base_url.scheme not in ("http", "https") or not http.base_url.host:
            http.close()
            raise RemoteError(_(NOT_A_URL).format(url=url))
        # The SDK's client over our own httpx client: it never reads LANGSMITH_API_KEY or
        # LANGGRAPH_API_KEY from the environment and sends them to a server of the user's.
        self.client = SyncLangGraphClient(http)
        # By thread: what the user saw of an answer they stopped, sent with the thread's
        # next message (the server stores it then; this client may not write the state).
        self._stopped_answers: dict[str, str] = {}

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> RemoteAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # threads ---------------------------------------------------------------------------
    def check(self) -> None:
        """Raise RemoteError unless the server answers and accepts the token (a search for
        one thread: the cheapest request the server's auth checks)."""
        with self._said():
            self.client.threads.search(limit=1)

    def new_thread(self, first_line: str = "") -> str:
        """A new thread of the user's, titled with the first line of its first message."""
        title = " ".join(first_line.split())[:TITLE_CHARS]
        with self._said():
            return str(self.client.threads.create(metadata={"title": title} if title else None)["thread_id"])

    def thread(self, thread_id: str) -> RemoteThread:
        """One of the user's threads by its id (another user's is "not found", as a missing one)."""
        with self._said(thread_id):
            return _thread_of(self.client.threads.get(thread_id))

    def threads(self, limit: int = 20) -> list[RemoteThread]:
        """The user's own threads, the latest first (the server's auth filters them)."""
        with self._said():
            found = self.client.threads.search(
                limit=limit,
                sort_by="updated_at",
                sort_order="desc",
                select=["thread_id", "updated_at", "status", "metadata"],
            )
        return [_thread_of(thread) for thread in found]

    # a turn ----------------------------------------------------------------------------
    def run_turn(
        self,
        thread_id: str,
        text: str,
        view: TurnView,
        approved: MutableSet[str] | None = None,
        mentions: Sequence[str] = (),
        content: str | list[dict[str, Any]] | None = None,
    ) -> TurnResult:
        """Send one user message on `thread_id` and report the turn to `view` until the run
        ends: its approvals are asked through the view and answered on the server; Ctrl-C
        cancels the run there. `approved`: tools answered "always" without asking (and every
        new "always" is added to it). `content`: the message as sent, when it carries more
        than `text` (its attached files as text, its images as parts:
        agent/remote_attachments.py). Never raises for the server's sake: a failure is the
        result's `error`."""
        result = TurnResult()
        partial: list[str] = []
        remembered: MutableSet[str] = approved if approved is not None else set()
        named = list(dict.fromkeys([*parse_mentions(text), *mentions]))
        seen = self._stopped_answers.pop(thread_id, "")
        run_input: dict[str, Any] | None = {
            "messages": [{"role": "user", "content": text if content is None else content}],
            **({"mentions": named, "new_mentions": named} if named else {}),
            **({"interrupted_answer": seen} if seen else {}),
        }
        command: dict[str, Any] | None = None
        run: dict[str, str] = {}
        try:
            while True:
                with self._said(thread_id, during_turn=True):
                    stream = self.client.runs.stream(  # type: ignore[call-overload]  # JSON, as sent
                        thread_id,
                        self.graph,
                        stream_mode=STREAM_MODES,
                        on_disconnect="cancel",
                        on_run_created=lambda created: run.update(id=str(created["run_id"])),
                        input=run_input,
                        command=command,
                    )
                    try:
                        interrupts = report_stream(stream_parts(stream, result), view, result, partial)
                    finally:
                        stream.close()  # the response too, at once (Ctrl-C)
                if not interrupts or result.error:
                    break
                run.clear()  # the run paused and ended: nothing to cancel while the user answers
                answers = {
                    item.id: answer_approval(item.value, view.approve, remembered) for item in interrupts
                }
                # One pause: its answers as they are; several (not made by this graph today):
                # by interrupt id, which LangGraph takes as a resume map.
                resume = next(iter(answers.values())) if len(answers) == 1 else answers
                run_input, command = None, {"resume": resume}
        except KeyboardInterrupt:
            result.cancelled = True
            self._cancel(thread_id, run.get("id"))
            if "".join(partial).strip():  # stopped while the answer streamed, not in a tool
                self._stopped_answers[thread_id] = "".join(partial)
        except RemoteError as exc:
            result.error = str(exc)
        view.close()
        return result

    def _cancel(self, thread_id: str, run_id: str | None) -> None:
        """Stop the run on the server (the stream is closed already); a second Ctrl-C or a
        server that does not answer leaves it to `on_disconnect`."""
        if run_id is None:
            return
        try:
            self.client.runs.cancel(thread_id, run_id, action="interrupt")
        except (httpx.HTTPError, KeyboardInterrupt) as exc:
            LOGGER.warning("could not cancel run %s on %s: %s", run_id, self.url, exc)

    @contextmanager
    def _said(self, thread_id: str | None = None, during_turn: bool = False) -> Iterator[None]:
        """What the HTTP client and the SDK raise, as one RemoteError line."""
        try:
            yield
        except httpx.HTTPError as exc:
            raise RemoteError(self._line(exc, thread_id, during_turn)) from exc

    def _line(self, exc: httpx.HTTPError, thread_id: str | None, during_turn: bool) -> str:
        url = self.url
        if isinstance(exc, httpx.HTTPStatusError):
            status = exc.response.status_code
            detail = _detail(exc)
            if status == 401:
                return _(REFUSED_TOKEN).format(url=url, status=status)
            if status == 403:
                return _(REFUSED).format(detail=detail)
            if status == 404 and thread_id:
                return _(NO_THREAD).format(id=thread_id)
            return _(SERVER_FAILED).format(status=status, detail=detail)
        if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
            return _(NOT_A_URL).format(url=url)
        reason = str(exc) or type(exc).__name__
        if during_turn and not isinstance(exc, httpx.ConnectError):
            return _(SERVER_GONE).format(reason=reason, thread=thread_id)
        return _(NO_SERVER).format(url=url, reason=reason)


def _no_reconnect(response: httpx.Response) -> None:
    """A run's stream without the address the SDK would reconnect to when it drops. The run
    is cancelled when its stream goes away (`on_disconnect="cancel"`: nobody would be there
    to answer its approvals), so there is nothing to reconnect to; and a server that is
    gone is said at once instead of after the SDK's five attempts (about 30 s)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        response.headers.pop("location", None)


def _detail(exc: httpx.HTTPStatusError) -> str:
    """The server's own words for a refusal (its JSON `detail`), else the status text."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping) and body.get("detail"):
        return " ".join(str(body["detail"]).split())[:300]
    try:
        found = exc.response.json()
    except (ValueError, httpx.ResponseNotRead):
        found = None
    if isinstance(found, Mapping) and found.get("detail"):
        return " ".join(str(found["detail"]).split())[:300]
    return exc.response.reason_phrase or str(exc.response.status_code)


def stream_parts(stream: Iterator[Any], result: TurnResult) -> Iterator[tuple[str, Any]]:
    """The server's stream as the (mode, data) parts a local graph yields: JSON messages
    made LangChain messages again, interrupts made `Interrupt`s; a part that does not
    parse is skipped (it comes from the network), an `error` part ends the turn with it.

    LangGraph Server sends a pause as an `updates` part; Aegra (0.6) as a `values` part
    (`{"__interrupt__": [...]}`, though the values mode was not asked for): both are the
    pause, each interrupt taken once."""
    paused: set[str] = set()
    for part in stream:
        event, data = part.event, part.data
        if event == "error":
            detail = data.get("message") or data.get("error") if isinstance(data, Mapping) else data
            result.error = _(RUN_FAILED).format(detail=" ".join(str(detail).split())[:300])
            return
        if event == "messages" and isinstance(data, Sequence) and len(data) == 2:
            message = _message(data[0])
            if message is not None and isinstance(data[1], Mapping):
                yield "messages", (message, data[1])
        elif event == "custom":
            yield "custom", data
        elif event in ("updates", "values") and isinstance(data, Mapping):
            nodes = data if event == "updates" else {k: v for k, v in data.items() if k == "__interrupt__"}
            update = {node: _update(node, value) for node, value in nodes.items()}
            if "__interrupt__" in update:
                fresh = [item for item in update["__interrupt__"] if item.id not in paused]
                paused.update(item.id for item in fresh)
                update["__interrupt__"] = fresh
                if not fresh:
                    del update["__interrupt__"]
            if update:
                yield "updates", update


def _update(node: str, update: Any) -> Any:
    if node == "__interrupt__":
        items = update if isinstance(update, list) else []
        return [
            Interrupt(value=item.get("value"), id=str(item.get("id") or ""))
            for item in items
            if isinstance(item, Mapping)
        ]
    if isinstance(update, Mapping) and isinstance(update.get("messages"), list):
        messages = [_message(m) for m in update["messages"]]
        return {**update, "messages": [m for m in messages if m is not None]}
    return update


def _message(data: Any) -> BaseMessage | None:
    if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
        return None
    try:
        return messages_from_dict([{"type": data["type"], "data": dict(data)}])[0]
    except (ValueError, TypeError, KeyError) as exc:  # pydantic's ValidationError is a ValueError
        LOGGER.debug("skipped a message the server sent: %s", exc)
        return None


def _thread_of(thread: Mapping[str, Any]) -> RemoteThread:
    metadata = thread.get("metadata") if isinstance(thread.get("metadata"), Mapping) else {}
    return RemoteThread(
        id=str(thread.get("thread_id") or ""),
        title=str((metadata or {}).get("title") or ""),
        updated=str(thread.get("updated_at") or ""),
        status=str(thread.get("status") or ""),
    )
