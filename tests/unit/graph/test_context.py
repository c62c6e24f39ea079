"""The prompt the planner sends: static system message, once-only reminders at the end."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from generalAgent.config.settings import Settings
from generalAgent.graph import context
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

UPLOAD = {"name": "报告.pdf", "path": "uploads/报告.pdf", "type": "pdf", "size": 123456, "pages": 12}


def test_system_message_is_identical_across_turns_and_minutes(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedChatModel(replies=[ai("", tool_call("now")), ai("one"), ai("two")])
    _, graph = build_test_agent(settings, model)
    graph.invoke(user_turn("first", settings, uploads=[UPLOAD]), thread())

    class LaterClock(datetime):
        @classmethod
        def now(cls, tz=None):  # two minutes later on the wall clock
            return datetime.now(tz or UTC) + timedelta(minutes=2)

    monkeypatch.setattr(context, "datetime", LaterClock)
    graph.invoke(user_turn("second", settings, mentions=["now"]), thread())
    systems = [r.messages[0] for r in model.requests]
    assert all(isinstance(s, SystemMessage) for s in systems)
    assert len({s.content for s in systems}) == 1
    text = systems[0].content
    assert "</system_reminder>" not in text and "报告.pdf" not in text
    assert text.rstrip().endswith("UTC</current_datetime>")


def test_upload_reminder_fires_once_and_history_is_not_modified(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("", tool_call("now")), ai("read it"), ai("next")])
    _, graph = build_test_agent(settings, model)
    state = graph.invoke(user_turn("总结 #报告.pdf", settings, uploads=[UPLOAD]), thread())
    first = model.requests[0].messages[-1]
    assert isinstance(first, HumanMessage)
    assert first.content.startswith("总结 #报告.pdf\n\n<system_reminder>")
    assert "uploads/报告.pdf (pdf, 120.6 KB, 12 pages)" in first.content
    # The second call of the same turn (after the tool) no longer carries it.
    assert all("uploads/报告.pdf" not in str(m.content) for m in model.requests[1].messages[1:])
    assert state["messages"][0].content == "总结 #报告.pdf"  # stored without reminders
    graph.invoke(user_turn("go on", settings), thread())
    assert all("uploads/报告.pdf (pdf" not in str(m.content) for m in model.requests[2].messages)


def test_reminder_goes_in_an_extra_message_when_last_is_not_human(settings: Settings) -> None:
    todos = [{"content": "read the report", "status": "in_progress", "priority": "high"}]
    model = ScriptedChatModel(replies=[ai("", tool_call("now")), ai("done")])
    _, graph = build_test_agent(settings, model)
    graph.invoke({**user_turn("plan", settings), "todos": todos}, thread())
    second = model.requests[1].messages
    assert isinstance(second[-2], ToolMessage)
    assert isinstance(second[-1], HumanMessage)
    assert "read the report" in second[-1].content
    assert "0 of 1 completed" in second[-1].content


def test_mention_reminder_fires_once(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("a"), ai("b")])
    _, graph = build_test_agent(settings, model)
    graph.invoke(
        user_turn("@agent help", settings, mentions=["agent"]),
        thread(),
    )
    graph.invoke(user_turn("again", settings), thread())
    assert "delegate_task is available" in model.requests[0].messages[-1].content
    assert "delegate_task is available" not in model.requests[1].messages[-1].content


def test_attach_to_multipart_message_keeps_the_image() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    history = [HumanMessage(content=[{"type": "text", "text": "what is this?"}, image])]
    sent = context.attach_reminders(history, [context.wrap("note")])
    assert sent[-1].content[:2] == history[0].content
    assert sent[-1].content[2] == {"type": "text", "text": "<system_reminder>\nnote\n</system_reminder>"}
    assert history[0].content[-1] == image  # the stored message is untouched


def test_todo_reminder_orders_and_counts() -> None:
    todos = [
        {"content": "low one", "status": "pending", "priority": "low"},
        {"content": "done one", "status": "completed", "priority": "high"},
        {"content": "high one", "status": "pending", "priority": "high"},
        {"content": "current", "status": "in_progress", "priority": "medium"},
    ]
    text = context.build_todo_reminder(todos)
    assert "1 of 4 completed" in text and "Finish all items" in text
    assert text.index("current") < text.index("high one") < text.index("low one")
    assert "done one" not in text
    assert context.build_todo_reminder([{"content": "x", "status": "completed", "priority": "low"}]) == ""


def test_history_warning_only_near_the_limit() -> None:
    assert context.build_history_warning(30, 40) == ""
    assert "soon be dropped" in context.build_history_warning(38, 40)


def test_attach_with_nothing_to_say_returns_history_unchanged() -> None:
    history = [HumanMessage(content="hi"), AIMessage(content="hello")]
    assert context.attach_reminders(history, ["", ""]) == history


def test_each_reminder_section_speaks_only_to_its_own_concern(settings: Settings) -> None:
    parts, _ = build_test_agent(settings, ScriptedChatModel(replies=[]))
    todo, mention, upload, warning = context.reminder_sections(
        settings.governance, parts.registry, parts.skills, parts.agents
    )
    quiet = context.ReminderInput({"messages": [HumanMessage("hi")]}, kept_messages=1)
    assert [section(quiet) for section in (todo, mention, upload, warning)] == [None] * 4
    busy = context.ReminderInput(
        {
            "messages": [HumanMessage("hi")],
            "todos": [{"content": "read the report", "status": "pending", "priority": "high"}],
            "new_mentions": ["now"],
            "new_uploaded_files": [UPLOAD],
        },
        kept_messages=settings.governance.max_message_history,
    )
    texts = [section(busy) for section in (todo, mention, upload, warning)]
    assert "read the report" in texts[0] and "报告.pdf" not in texts[0]
    assert "now" in texts[1] and "报告.pdf" not in texts[1]
    assert "报告.pdf" in texts[2] and "read the report" not in texts[2]
    assert "messages" in texts[3] and "报告.pdf" not in texts[3]
    # The planner's reminders are these texts, in this order.
    prompts = context.PromptBuilder(settings, parts.registry, parts.skills, parts.agents)
    assert prompts.reminders(busy.state, busy.kept_messages) == texts
