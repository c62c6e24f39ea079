"""graph/turn.py: one builder of a turn's input; history fields merge; old threads carry over."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from generalAgent.config.settings import Settings
from generalAgent.graph.state import merge_names, merge_uploads
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai

UPLOAD_A = {"name": "a.pdf", "path": "uploads/a.pdf", "type": "pdf", "size": 10}
UPLOAD_B = {"name": "b.md", "path": "uploads/b.md", "type": "markdown", "size": 3}


def test_mentions_and_uploads_accumulate_across_turns_while_new_ones_fire_once(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("one"), ai("two"), ai("three")])
    _, graph = build_test_agent(settings, model)
    graph.invoke(user_turn("@now read #a.pdf", settings, mentions=["now"], uploads=[UPLOAD_A]), thread())
    graph.invoke(
        user_turn("@agent and #b.md", settings, mentions=["agent", "now"], uploads=[UPLOAD_B]), thread()
    )
    state = graph.invoke(user_turn("thanks", settings), thread())
    assert state["mentions"] == ["now", "agent"]
    assert [u["path"] for u in state["uploaded_files"]] == ["uploads/a.pdf", "uploads/b.md"]
    assert state["new_mentions"] == [] and state["new_uploaded_files"] == []
    assert "uploads/b.md" in str(model.requests[1].messages[-1].content)
    assert "uploads/b.md" not in str(model.requests[2].messages[-1].content)


@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=4), max_size=5))
def test_merged_names_keep_first_seen_order_without_duplicates(turns: list[list[str]]) -> None:
    merged: list[str] = []
    for names in turns:
        merged = merge_names(merged, names)
    everything = [n for names in turns for n in names]
    assert merged == list(dict.fromkeys(everything))


def test_attaching_a_path_again_updates_it_in_place() -> None:
    newer = {**UPLOAD_A, "size": 99}
    assert merge_uploads([UPLOAD_A, UPLOAD_B], [newer]) == [newer, UPLOAD_B]
