"""Compaction through the real CLI and client: facts from the first turns are still sent after
many cuts, every compaction shows its line, and /compact and /clear do what they say."""

from __future__ import annotations

import pexpect
import pytest

from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.summaries import extractive_summary, is_summary_request
from tests.support.terminal import ask, expect_prompt, plain

pytestmark = pytest.mark.e2e
FACTS = ("KESTREL-7", "4,200 EUR")


def answer(request: RecordedRequest) -> Reply:
    """Summaries when asked; otherwise a tool call for every question, then a short answer."""
    if is_summary_request(request.messages):
        return Reply(text=extractive_summary(request.messages), prompt_tokens=900, completion_tokens=40)
    if "tool" in [m["role"] for m in request.messages[-2:]]:  # a reminder may follow the tool's answer
        return Reply(text="Done, noted.", prompt_tokens=2400, completion_tokens=6)
    return Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})], prompt_tokens=2300, completion_tokens=9)


def test_facts_of_the_first_turns_survive_many_cuts(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str]
) -> None:
    openai_server.responder = answer
    child = spawn_chat(env={**cli_env, "MAX_MESSAGE_HISTORY": "10"})
    expect_prompt(child)
    shown = ask(child, "Remember: the project code name is KESTREL-7.", "tokens:")
    assert "context 2.4k/128k (2%)" in plain(child.before + child.after + child.readline())
    expect_prompt(child)
    shown += ask(child, "Remember: the budget is 4,200 EUR.", "tokens:")
    expect_prompt(child)
    for turn in range(3, 15):
        shown += ask(child, f"Turn {turn}: what time is it now?", "tokens:")
        shown += expect_prompt(child)
    shown += ask(child, "What were the code name and the budget?", "tokens:")
    expect_prompt(child)
    child.sendline("/quit")
    child.expect(pexpect.EOF)

    summaries = [r for r in openai_server.chat_requests if is_summary_request(r.messages)]
    assert len(summaries) >= 4  # many cuts, each summarised
    assert "tools" not in summaries[0].body  # the summary request binds no tools
    assert shown.count("compacted ") == len(summaries)  # every compaction is shown
    last = openai_server.chat_requests[-1]
    assert not is_summary_request(last.messages)
    sent = [m.get("content") or "" for m in last.messages]
    assert "<conversation_summary>" in sent[1]
    assert all(fact in sent[1] for fact in FACTS)  # still sent, in the summary at the head
    assert not any("KESTREL-7" in text for text in sent[2:])  # the turn itself left long ago
    assert openai_server.invalid_history_requests == []


def test_compact_and_clear_commands(openai_server: ScriptedOpenAIServer, spawn_chat) -> None:
    openai_server.responder = answer
    child = spawn_chat()
    expect_prompt(child)
    ask(child, "Remember: the project code name is KESTREL-7.", "tokens:")
    expect_prompt(child)
    compacted = ask(child, "/compact the code name", "token summary")
    assert "compacted 4 messages into a" in compacted
    expect_prompt(child)
    focus_request = [r for r in openai_server.chat_requests if is_summary_request(r.messages)][-1]
    assert "Above all, keep what concerns: the code name" in focus_request.messages[0]["content"]
    ask(child, "Turn 2: and now?", "tokens:")
    expect_prompt(child)
    after_compact = [r for r in openai_server.chat_requests if not is_summary_request(r.messages)][-2]
    assert "KESTREL-7" in after_compact.messages[1]["content"]
    # The summary is an assistant note, not the user's voice (docs/security.md).
    assert [m["role"] for m in after_compact.messages] == ["system", "assistant", "user"]

    cleared = ask(child, "/clear", "uploads are kept")
    assert "context cleared" in cleared
    expect_prompt(child)
    ask(child, "hello again", "tokens:")
    expect_prompt(child)
    fresh = [r for r in openai_server.chat_requests if not is_summary_request(r.messages)][-2]
    assert [m["role"] for m in fresh.messages] == ["system", "user"]
    assert "KESTREL-7" not in str(fresh.messages)
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_clear_right_after_compact_drops_the_summary(openai_server: ScriptedOpenAIServer, spawn_chat) -> None:
    openai_server.responder = answer
    child = spawn_chat()
    expect_prompt(child)
    ask(child, "Remember: the project code name is KESTREL-7.", "tokens:")
    expect_prompt(child)
    ask(child, "/compact", "token summary")
    expect_prompt(child)
    assert "context cleared" in ask(child, "/clear", "uploads are kept")
    expect_prompt(child)
    ask(child, "hello again", "tokens:")
    expect_prompt(child)
    fresh = [r for r in openai_server.chat_requests if not is_summary_request(r.messages)][-2]
    assert [m["role"] for m in fresh.messages] == ["system", "user"]
    assert "<conversation_summary>" not in str(fresh.messages) and "KESTREL-7" not in str(fresh.messages)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
