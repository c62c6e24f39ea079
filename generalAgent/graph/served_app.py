"""The served deployment's start-up (LangGraph Server's custom app, `langgraph.json` "http").

It has no routes of its own; its lifespan runs before the server takes a request:
graph/served.py's `check_served_settings` withholds the keys from every child process and
refuses to start a deployment that offers a shell without a sandbox, with one line naming
the settings (the server exits; the graph factory is only called at the first request, too
late to refuse).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette

from generalAgent.config.settings import load_settings
from generalAgent.graph.served import check_served_settings


@asynccontextmanager
async def checked_start(app: Starlette) -> AsyncIterator[None]:
    # In a worker thread: reading the settings and trying the sandbox would block the loop.
    await asyncio.to_thread(lambda: check_served_settings(load_settings()))
    yield


app = Starlette(lifespan=checked_start)
