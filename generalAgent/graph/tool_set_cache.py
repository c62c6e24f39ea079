"""What the planner and the tools node build per set of visible tools, kept for the sets used last.

Binding the model to a set of tools converts every tool's JSON schema, and a `ToolNode` is
built per set, so both are made once per set, not once per call. The visible set of one
session changes rarely (an @mention, an MCP server joining), but one graph serves every
session of a process (an editor, a served deployment), and each session's mentions make
sets of their own: kept without a bound, a long-lived server would keep every set any
session ever had. So the most recently used `TOOL_SET_CACHE_CAP` are kept and the least
recently used one goes; a set used again after that is built again, which costs
milliseconds, never a wrong answer (the value depends only on the set).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

# Sets kept per graph: a session uses a few (core, then core plus what it mentioned); 32
# covers many sessions switching at once, and a bound model or ToolNode is small.
TOOL_SET_CACHE_CAP = 32

V = TypeVar("V")


class ToolSetCache(Generic[V]):
    """`build(tools)` per visible-tool set (keyed by the tools' names, in order), the
    `cap` most recently used kept. Safe from the threads of several sessions at once."""

    def __init__(self, build: Callable[[Sequence[Any]], V], cap: int = TOOL_SET_CACHE_CAP) -> None:
        if cap < 1:
            raise ValueError("a tool-set cache keeps at least one set")
        self._build = build
        self._cap = cap
        self._values: OrderedDict[tuple[str, ...], V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, tools: Sequence[Any]) -> V:
        key = tuple(t.name for t in tools)
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        # Built outside the lock: another session's call need not wait for this binding.
        # Two threads building the same set at once both get a correct value; one is kept.
        value = self._build(tools)
        with self._lock:
            kept = self._values.setdefault(key, value)
            self._values.move_to_end(key)
            while len(self._values) > self._cap:
                self._values.popitem(last=False)
        return kept

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)
