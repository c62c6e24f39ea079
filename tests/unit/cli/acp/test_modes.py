"""The editor's approval modes: what each lets run without a question, and what it refuses.

The read-only mode goes through the real graph (`run_turn`, as an editor's turn does):
a call of a tool outside READ_ONLY_TOOLS is refused without a question and never runs,
while a reading call of the same message runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

import generalAgent.config
from generalAgent import i18n
from generalAgent.agent.session import TurnRules
from generalAgent.agent.turns import run_turn
from generalAgent.cli.acp.modes import (
    ACCEPT_EDITS,
    ASK,
    EDIT_TOOLS,
    MODES,
    READ_ONLY,
    READ_ONLY_TOOLS,
    mode_state,
    restored_mode,
    turn_rules,
)
from generalAgent.cli.acp.view import TOOL_KINDS, AcpView, replay_updates
from generalAgent.config.settings import load_settings
from generalAgent.knowledge import open_store
from generalAgent.sessions import SessionCatalog
from generalAgent.tools.approval import OUTSIDE_ONLY_TOOLS
from generalAgent.tools.registry import parse_tools_yaml
from generalAgent.tools.run_context import RunContext, SessionScope
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

TOOLS_YAML = Path(generalAgent.config.__file__).parent / "tools.yaml"


def test_no_mode_skips_a_question_other_than_a_file_change() -> None:
    assert turn_rules(ASK).approved == turn_rules(READ_ONLY).approved == frozenset()
    assert turn_rules(ACCEPT_EDITS).approved == {"write_file", "edit_file"} == EDIT_TOOLS
    assert turn_rules(ASK).only_tools is None and turn_rules(ACCEPT_EDITS).only_tools is None


def test_read_only_allows_only_tools_that_read() -> None:
    known = {spec.name for spec in parse_tools_yaml(TOOLS_YAML)}
    assert known >= READ_ONLY_TOOLS  # no name that could be a typo
    assert turn_rules(READ_ONLY).only_tools == READ_ONLY_TOOLS
    changing = {name for name, kind in TOOL_KINDS.items() if kind in ("edit", "delete", "execute")}
    assert changing and not (READ_ONLY_TOOLS & changing)
    assert "delegate_task" not in READ_ONLY_TOOLS  # a sub-agent could change what the mode protects


def test_a_stored_mode_comes_back_and_one_this_release_lacks_falls_back_to_ask(tmp_path: Path) -> None:
    """The mode is read back from the catalog as it was stored; a mode a later (or earlier)
    release had, a damaged value or none at all gives Ask, which limits and skips nothing."""
    catalog = SessionCatalog(tmp_path / "sessions.db")
    try:
        for mode in MODES:
            catalog.open_session(f"s-{mode.id}", "hi", tmp_path, approval_mode=mode.id)
        catalog.open_session("s-gone", "hi", tmp_path, approval_mode="read-only")
        catalog.set_approval_mode("s-gone", "plan")
        catalog.open_session("s-terminal", "hi", tmp_path)
        stored = {info.id: info.approval_mode for info in catalog.recent()}
    finally:
        catalog.close()
    assert {restored_mode(stored[f"s-{mode.id}"]) for mode in MODES} == {ASK, ACCEPT_EDITS, READ_ONLY}
    assert stored["s-gone"] == "plan" and stored["s-terminal"] is None
    for unknown in (stored["s-gone"], stored["s-terminal"], "", "READ-ONLY", "read-only "):
        assert restored_mode(unknown) == ASK
    assert turn_rules(restored_mode("plan")) == TurnRules(mode=ASK)  # no approval added, no tool refused


def test_the_editor_is_offered_every_mode() -> None:
    state = mode_state(ASK)
    assert state.current_mode_id == ASK
    assert [m.id for m in state.available_modes] == [m.id for m in MODES] == [ASK, ACCEPT_EDITS, READ_ONLY]
    assert all(m.name and m.description for m in state.available_modes)


def test_in_read_only_mode_a_changing_call_is_refused_without_a_question(tmp_path: Path) -> None:
    settings = load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
        paths={"data_dir": tmp_path / "data"},
    )
    model = ScriptedChatModel()
    graph = build_test_agent(settings, model)[1]
    note = {"title": "not in read-only", "content": "x"}
    model.replies = [ai("", tool_call("add_knowledge", note, "w"), tool_call("now", {}, "r")), ai("done")]
    asked: list[Any] = []
    sent: list[Any] = []
    view = AcpView(sent.append, lambda call, options: asked.append(call) or "allow-once", tmp_path)
    config = thread("ro")
    context = RunContext(scope=SessionScope("ro", tmp_path), only_tools=READ_ONLY_TOOLS)
    result = run_turn(
        graph, config, user_turn("go", settings, session_id="ro"), view, lambda exc: None, context=context
    )
    assert result.ok and result.answer == "done", result.error
    assert asked == []
    with open_store(settings) as store:
        assert not [i for i in store.list_knowledge(limit=100) if i.title == "not in read-only"]
    answers = {m.tool_call_id: m for m in graph.get_state(config).values["messages"] if m.type == "tool"}
    assert answers["w"].status == "error" and "this session is read-only" in answers["w"].content
    # The user was never asked: the model must not think they said no to this call.
    assert "refused by the user" not in answers["w"].content
    assert "Ask or Accept edits" in answers["w"].content
    assert answers["r"].status != "error"
    shown = {(u.tool_call_id, u.status) for u in sent if u.session_update == "tool_call_update"}
    assert shown == {("w", "failed"), ("r", "completed")}
    failed = next(u for u in sent if u.session_update == "tool_call_update" and u.tool_call_id == "w")
    assert failed.content[0].content.text == (
        "Not run: this session is in Read only mode. Switch it to Ask or Accept edits to let add_knowledge run."
    )


def test_the_editor_says_a_read_only_refusal_in_the_ui_language(tmp_path: Path) -> None:
    refused = ToolMessage(
        OUTSIDE_ONLY_TOOLS.format(tool="run_bash_command"),
        tool_call_id="c1",
        name="run_bash_command",
        status="error",
    )
    said_by_a_hook = ToolMessage(
        "Error: blocked by a hook", tool_call_id="c2", name="write_file", status="error"
    )
    conversation = [
        AIMessage("", tool_calls=[tool_call("run_bash_command", {"command": "make"}, "c1")]),
        refused,
        said_by_a_hook,
    ]
    try:
        i18n.use_language("zh")
        replayed = [
            u for u in replay_updates(conversation, tmp_path) if u.session_update == "tool_call_update"
        ]
    finally:
        i18n.use_language("en")
    texts = {u.tool_call_id: u.content[0].content.text for u in replayed}
    assert "只读" in texts["c1"] and "run_bash_command" in texts["c1"] and "Read only" not in texts["c1"]
    assert texts["c2"] == "Error: blocked by a hook"  # any other answer as the model got it
