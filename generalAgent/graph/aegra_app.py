"""What `aegra.json` points Aegra at: the graph factory and the served deployment's front door.

- `make_graph`: builder.py's factory. Aegra loads a graph from a file path, executing the
  file as a module it does not register, where a dataclass cannot be defined (dataclasses
  look their module up): this file only re-exports it.
- `app`: the FastAPI application Aegra requires of a custom app (FastAPI comes with the
  `aegra` extra), with served_app.py's start-up checks. Aegra builds its own routes on it,
  so its middleware sees every request first: `RunRequestCheck` refuses what a client may
  not send in a run (graph/served.py `client_run_problem`, server_auth.py
  `identity_problem`) and any direct state write. LangGraph Server asks the auth handler
  (`threads.create_run`) for every run; Aegra 0.6 asks it only for POST /threads/{id}/runs,
  not for the /runs/wait and /runs/stream the SDK uses, and keeps a client's `user_id` and
  `langgraph_auth_user` in the run's config: without this check a user could approve his
  own commands or pass for another.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI

from generalAgent.graph.builder import make_graph
from generalAgent.graph.served import client_run_problem
from generalAgent.graph.served_app import checked_start
from generalAgent.graph.server_auth import credential, identity_of, identity_problem, served_settings
from generalAgent.search.viewer import TEAM_PERMISSION

__all__ = ["RunRequestCheck", "app", "make_graph"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Requests that start a run (on a thread or stateless; streamed, waited for, or a cron).
RUN_PATHS = re.compile(r"^/(threads/[^/]+/)?runs(/stream|/wait|/crons)?/?$")
# A thread's state is written by the graph's nodes only (threads.update_state).
STATE_PATHS = re.compile(r"^/threads/[^/]+/state(/[^/]+)?/?$")
MAX_RUN_REQUEST_BYTES = 16 << 20  # a run request is a message and its options, not a file


class RunRequestCheck:
    """ASGI middleware: a run request that widens what the server allows, or names another
    user, is refused (403) before Aegra reads it; so is a state write."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        path = str(scope["path"])
        if STATE_PATHS.match(path):
            await _refuse(send, "a thread's state is written by the graph, from its owner's answers")
            return
        if not RUN_PATHS.match(path):
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_RUN_REQUEST_BYTES:
                await _refuse(send, "the run request is too large", status=413)
                return
            if not message.get("more_body"):
                break
        problem = await asyncio.to_thread(_run_problem, dict(scope.get("headers") or []), body)
        if problem is not None:
            await _refuse(send, problem)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _run_problem(headers: dict[Any, Any], body: bytes) -> str | None:
    """Why the run request must be refused, or None (an unknown user or a malformed body
    is Aegra's to answer: 401, 422)."""
    settings = served_settings()
    found = identity_of(credential(headers), settings.server)
    if found is None:
        return None
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return None
    if not isinstance(request, dict):
        return None
    user, teams = found
    permissions = [f"{TEAM_PERMISSION}{team}" for team in teams]
    return client_run_problem(request, settings) or identity_problem(request, user, permissions)


async def _refuse(send: Send, problem: str, status: int = 403) -> None:
    body = json.dumps({"detail": f"Refused: {problem}."}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


app = FastAPI(lifespan=checked_start)
app.add_middleware(RunRequestCheck)
