"""The recap of a resumed session and the picker's lines."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from generalAgent.cli.session_resume import last_turns, picker_line
from generalAgent.sessions import SessionCatalog


def test_the_last_turns_pair_each_question_with_its_final_answer() -> None:
    messages = [
        HumanMessage("one"),
        AIMessage("", tool_calls=[{"name": "now", "args": {}, "id": "c1"}]),
        ToolMessage("12:00", tool_call_id="c1"),
        AIMessage("It is noon."),
        HumanMessage("two"),  # cancelled: no answer
        HumanMessage("three"),
        AIMessage("Three."),
    ]
    assert last_turns(messages, 2) == [("two", ""), ("three", "Three.")]
    assert last_turns(messages)[0] == ("one", "It is noon.")
    assert last_turns([]) == []


def test_rename_and_the_picker_line_show_the_chosen_title_safely(tmp_path: Path) -> None:
    catalog = SessionCatalog(tmp_path / "sessions.db")
    catalog.open_session("20261126-0300-abcd", "first line")
    catalog.rename("20261126-0300-abcd", "  Quarterly\x1b[2J   notes ")
    info = catalog.get("20261126-0300-abcd")
    assert info is not None
    line = picker_line(info, str(Path.home() / "work"))
    assert "Quarterly" in line and "\x1b" not in line and "~/work" in line and "0 turns" in line
    catalog.close()
