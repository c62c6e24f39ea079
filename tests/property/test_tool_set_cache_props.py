"""Property: the planner's and the tools node's per-tool-set cache never holds more than its
cap, and a set used again while it is still among the last `cap` is served, not rebuilt."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from generalAgent.graph.tool_set_cache import TOOL_SET_CACHE_CAP, ToolSetCache


@dataclass(frozen=True)
class Named:
    name: str


POOL = [f"tool_{i}" for i in range(12)]
tool_sets = st.lists(st.sampled_from(POOL), unique=True, max_size=6)


@given(st.integers(min_value=1, max_value=6), st.lists(tool_sets, max_size=80))
def test_the_cache_keeps_at_most_its_cap_and_serves_a_recent_set(cap: int, uses: list[list[str]]) -> None:
    built: list[tuple[str, ...]] = []

    def build(tools: Sequence[Named]) -> object:
        built.append(tuple(t.name for t in tools))
        return object()  # a new value per build: a served set returns the same object again

    cache = ToolSetCache(build, cap=cap)
    recent: OrderedDict[tuple[str, ...], object] = OrderedDict()  # the reference: an LRU of `cap`
    for names in uses:
        key = tuple(names)
        builds = len(built)
        value = cache.get([Named(n) for n in names])
        if key in recent:
            assert len(built) == builds and value is recent[key]  # served from the cache
            recent.move_to_end(key)
        else:
            assert built[builds:] == [key]  # built once
            recent[key] = value
            if len(recent) > cap:
                recent.popitem(last=False)
        assert len(cache) == len(recent) <= cap


@given(st.lists(tool_sets, min_size=1, max_size=5))
def test_many_distinct_sets_stay_within_the_default_cap(first: list[list[str]]) -> None:
    cache = ToolSetCache(lambda tools: len(tools))
    for number in range(TOOL_SET_CACHE_CAP * 3):  # sessions each with a mention of their own
        cache.get([Named(f"mentioned_{number}")])
        assert len(cache) <= TOOL_SET_CACHE_CAP
    builds = 0

    def counted(tools: Sequence[Named]) -> int:
        nonlocal builds
        builds += 1
        return len(tools)

    cache = ToolSetCache(counted)
    for names in first * 3:  # the same few sets again and again: each built once
        cache.get([Named(n) for n in names])
    assert builds == len({tuple(names) for names in first})
