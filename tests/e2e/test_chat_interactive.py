"""The interactive chat in a real terminal (pexpect) against the local model server."""

from __future__ import annotations

import pexpect
import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import ask, expect_prompt, plain

pytestmark = pytest.mark.e2e


def roles(request) -> list[str]:
    return [m["role"] for m in request.messages]


def test_conversation_with_tool_call_then_resume(openai_server: ScriptedOpenAIServer, spawn_chat) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("now", {"timezone": "UTC"})], prompt_tokens=1000, completion_tokens=12),
        Reply(text="It is **noon** in UTC.", prompt_tokens=1560, cached_tokens=1280, completion_tokens=8),
    )
    child = spawn_chat()
    banner = expect_prompt(child)
    assert "generalAgent" in banner and "test-model" in banner
    child.sendline("What time is it?")
    child.expect("tokens:")
    shown = plain(child.before)
    assert 'now(timezone="UTC")' in shown
    assert "noon" in shown
    after = expect_prompt(child)
    assert "cached 1,280" in after
    usage = ask(child, "/usage", "cache hits")
    assert "1 turns, 2 model calls" in usage
    assert "input  2,560 tokens, of which cached 1,280 (50.0% cache hits" in usage
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert child.wait() == 0

    openai_server.add(Reply(text="Still here."))
    resumed = spawn_chat("--resume")
    resumed.expect("Resume which session")  # the picker, the latest chosen
    resumed.send("\r")
    assert "Resumed" in expect_prompt(resumed)
    resumed.sendline("Are you there?")
    resumed.expect("Still here")
    expect_prompt(resumed)
    last = openai_server.chat_requests[-1]
    assert roles(last) == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert last.messages[1]["content"] == "What time is it?"
    resumed.sendeof()
    resumed.expect(pexpect.EOF)


def test_retry_after_a_server_error_sends_the_message_once(
    openai_server: ScriptedOpenAIServer, spawn_chat
) -> None:
    openai_server.add(Reply(status=500), Reply(text="Second time lucky."))
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("Hello there")
    child.expect("endpoint failed")
    child.expect("/retry")
    expect_prompt(child)
    child.sendline("/retry")
    child.expect("Second time lucky")
    expect_prompt(child)
    retried = openai_server.chat_requests[-1]
    assert roles(retried) == ["system", "user"]
    assert retried.messages[1]["content"] == "Hello there"
    ask(child, "/retry", "Nothing to retry")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_one_ctrl_c_on_empty_prompt_asks_and_a_second_exits(spawn_chat) -> None:
    child = spawn_chat()
    expect_prompt(child)
    child.sendcontrol("c")
    child.expect("Press Ctrl-C again to quit")
    assert child.isalive()
    child.sendline("/help")  # the chat goes on after the first one
    child.expect("this help")
    expect_prompt(child)
    child.sendcontrol("c")
    child.expect("again to quit")
    child.sendcontrol("c")
    child.expect(pexpect.EOF)
    assert child.wait() == 0


def test_multiline_input_and_sessions_list(openai_server: ScriptedOpenAIServer, spawn_chat) -> None:
    openai_server.add(Reply(text="Got both lines."))
    child = spawn_chat()
    expect_prompt(child)
    child.send("first line\\")
    child.send("\r")
    child.send("second line\r")
    child.expect("Got both lines")
    expect_prompt(child)
    assert openai_server.chat_requests[-1].messages[-1]["content"] == "first line\nsecond line"
    listing = ask(child, "/sessions", "just now")
    assert "first line" in listing
    ask(child, "/new", "New session")
    ask(child, "/bogus", "Unknown command")
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_the_chat_speaks_chinese_when_asked(openai_server: ScriptedOpenAIServer, spawn_chat, cli_env) -> None:
    openai_server.add(Reply(text="你好。"))
    child = spawn_chat(env={**cli_env, "UI_LANGUAGE": "zh"})
    expect_prompt(child)
    shown = ask(child, "/help", "本帮助")
    expect_prompt(child)
    ask(child, "/nosuch", "未知命令 /nosuch")
    expect_prompt(child)
    ask(child, "你好", "Token：")
    child.expect("输入")
    expect_prompt(child)
    child.sendline("/quit")
    child.expect("已保存。继续请运行")
    child.expect(pexpect.EOF)
    assert "Enter 发送" in plain(shown) or "Enter 发送" in plain(child.before or "")
