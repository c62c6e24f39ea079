"""Each provider dialect end to end: the real CLI and client against a server as strict as the provider.

For DeepSeek, Qwen, Kimi, GLM, vLLM and Ollama: a turn with three tool calls, then two
more turns, without an error, with the reasoning shown and cache hits counted (the
server counts the exact prefix a request shares with earlier ones, so an unstable
serialisation of the history would show as a miss). DeepSeek in thinking mode also
runs 20 turns with tool calls, is resumed, and delegates to a sub-agent, all without
its 400; and a Chinese conversation near the window is cut before the provider's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.history import tool_text
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall
from tests.support.summaries import extractive_summary, is_summary_request
from tests.support.terminal import ask, expect_prompt

pytestmark = pytest.mark.e2e

THOUGHT = "先想清楚用户要什么，再决定调用哪些工具。" * 40  # 800 characters of reasoning per call
CACHED = re.compile(r"cached ([\d,]+)")
# Where each dialect must find the reasoning of turn 1's tool-calling message later on.
ECHO_FIELD = {
    "deepseek": "reasoning_content",
    "kimi": "reasoning_content",
    "glm": "reasoning_content",
    "vllm": "reasoning",
    "ollama": "reasoning",
    "qwen": None,
}


@pytest.fixture
def dialect_env(cli_env: dict[str, str]):
    servers: list[ScriptedOpenAIServer] = []

    def start(provider: str, **options: object) -> tuple[ScriptedOpenAIServer, dict[str, str]]:
        # Summaries (a cut compacts the history) are answered apart from each test's script.
        server = ScriptedOpenAIServer(
            dialect=provider,
            strict_history=True,
            prefix_cache=True,
            summaries=lambda request: Reply(text=extractive_summary(request.messages)),
            **options,  # type: ignore[arg-type]
        )
        servers.append(server.start())
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url, "MODEL_PROVIDER": provider}
        return server, env

    yield start
    for server in servers:
        server.stop()


def cached_figures(shown: str) -> list[int]:
    return [int(n.replace(",", "")) for n in CACHED.findall(shown)]


@pytest.mark.parametrize("provider", ["deepseek", "qwen", "kimi", "glm", "vllm", "ollama"])
def test_three_tool_calls_then_two_turns(provider: str, dialect_env, spawn_chat) -> None:
    server, env = dialect_env(provider)
    zones = ["Asia/Shanghai", "Europe/Berlin", "America/New_York"]
    server.add(
        Reply(reasoning=THOUGHT, tool_calls=[ToolCall("now", {"timezone": z}) for z in zones]),
        Reply(reasoning=THOUGHT, text="三个城市的时间都查到了。"),
        Reply(reasoning=THOUGHT, text="第二轮的回答。"),
        Reply(reasoning=THOUGHT, text="第三轮的回答。"),
    )
    child = spawn_chat(env=env)
    expect_prompt(child)
    first = ask(child, "上海、柏林和纽约现在几点？", "三个城市的时间都查到了")
    after_first = expect_prompt(child)
    second = ask(child, "再说一次", "第二轮的回答")
    after_second = expect_prompt(child)
    third = ask(child, "最后一次", "第三轮的回答")
    after_third = expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)

    shown = first + after_first + second + after_second + third + after_third
    assert "✗" not in shown and "refused" not in shown
    assert shown.count("thought · 800 chars") >= 4  # collapsed to one line per model call
    assert THOUGHT[:20] not in shown  # ... and not printed in full
    assert len(re.findall(r"⚙ now\([^)]*\) → ", first)) == 3
    assert server.refusals == [] and server.invalid_history_requests == []
    turns = [cached_figures(after_second), cached_figures(after_third)]
    if provider == "ollama":  # Ollama reports no cache figures at all
        assert turns == [[0], [0]]
    else:
        assert all(figures and figures[0] > 0 for figures in turns), turns

    # The last request that still sends the tool-calling turn (Ollama's small default window
    # compacts it away by the third turn).
    calling = next(
        m
        for request in reversed(server.chat_requests)
        for m in request.messages
        if m["role"] == "assistant" and m.get("tool_calls")
    )
    field = ECHO_FIELD[provider]
    if field is None:
        assert "reasoning_content" not in calling and "reasoning" not in calling
    else:
        assert calling[field] == THOUGHT


def test_deepseek_thinking_session_runs_20_turns_resumes_and_delegates(
    dialect_env, spawn_chat, workdir: Path
) -> None:
    server, env = dialect_env("deepseek")

    def respond(request: RecordedRequest) -> Reply:
        last = request.messages[-1]
        if request.messages[0]["content"].startswith("You are a sub-agent"):
            if last["role"] == "tool":
                return Reply(reasoning="子任务：时间已知。", text="It is daytime. (sub-agent report)")
            return Reply(reasoning="子任务：先查时间。", tool_calls=[ToolCall("now", {})])
        after_tool = request.messages[-2]["role"] == "tool"  # a reminder may follow the answer
        if last["role"] == "tool" or after_tool:
            content = tool_text(
                last["content"] if last["role"] == "tool" else request.messages[-2]["content"]
            )
            if content.startswith("{") and "result" in content:
                return Reply(reasoning="汇总子任务。", text="Done: " + json.loads(content)["result"])
            return Reply(reasoning=THOUGHT, text=f"第 {len(request.messages)} 条消息之后的回答。")
        if "@agent" in str(last["content"]):
            return Reply(
                reasoning="交给子代理。", tool_calls=[ToolCall("delegate_task", {"task": "Find the time."})]
            )
        return Reply(reasoning=THOUGHT, tool_calls=[ToolCall("now", {"timezone": "Asia/Shanghai"})])

    server.responder = respond
    child = spawn_chat(env=env)
    expect_prompt(child)
    shown = ""
    for turn in range(1, 21):
        shown += ask(child, f"第 {turn} 轮：现在几点？", "之后的回答")
        shown += expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "✗" not in shown and "(400)" not in shown
    assert shown.count("thought · 800 chars") >= 40  # one per model call
    figures = cached_figures(shown)
    assert len(figures) == 20 and all(f > 0 for f in figures[1:])
    assert server.refusals == []
    assert len([r for r in server.chat_requests if not is_summary_request(r.messages)]) == 40

    resumed = run_cli(["-p", "再查一次时间", "--resume", "last"], env, workdir)
    assert resumed.returncode == 0, resumed.stderr
    assert "之后的回答" in resumed.stdout and "thinking…" not in resumed.stdout
    assert "thought · 800 chars" in resumed.stderr

    delegated = run_cli(["-p", "@agent what time is it?"], env, workdir)
    assert delegated.returncode == 0, delegated.stderr
    assert "Done: It is daytime" in delegated.stdout
    assert server.refusals == []
    sub_requests = [
        r for r in server.chat_requests if r.messages[0]["content"].startswith("You are a sub-agent")
    ]
    assert sub_requests[-1].messages[-2]["reasoning_content"] == "子任务：先查时间。"


def test_a_chinese_conversation_near_the_window_is_cut_before_the_provider_refuses(
    dialect_env, workdir: Path
) -> None:
    window = 24_000
    server, env = dialect_env("deepseek", context_window=window)
    env = {**env, "MODEL_CONTEXT_WINDOW": str(window)}
    passage = (
        "第三季度营收同比增长百分之十二，主要来自企业客户，客户满意度提升到四点六分。" * 90
    )  # ~3,500 chars
    server.responder = lambda request: Reply(reasoning="读完了。", text="已读。")
    for turn in range(1, 13):  # ~25,000 Chinese tokens in all: more than the window
        resume = ["--resume", "last"] if turn > 1 else []
        result = run_cli(["-p", "-", *resume], env, workdir, stdin=f"资料 {turn}：{passage}")
        assert result.returncode == 0, result.stderr
        assert result.stdout == "已读。\n"
    assert server.refusals == []
    counted = [server.count_tokens(server.prompt_text(r.body)) for r in server.chat_requests]
    assert max(counted) <= window
    assert max(counted) > window // 2  # the conversation did come near the window
    assert len(server.chat_requests[-1].messages) < 2 * 12  # older turns were cut


def test_thinking_command_shows_reasoning_in_full(dialect_env, spawn_chat) -> None:
    server, env = dialect_env("deepseek")
    server.add(
        Reply(reasoning="用户在打招呼，简短回应即可。", text="你好！"),
        Reply(reasoning="第二次思考的内容。", text="再见！"),
    )
    child = spawn_chat(env=env)
    expect_prompt(child)
    collapsed = ask(child, "你好", "你好！")
    expect_prompt(child)
    assert "thought · 14 chars" in collapsed and "简短回应" not in collapsed
    shown = ask(child, "/thinking", "简短回应即可")  # the last turn's reasoning, in full
    expect_prompt(child)
    ask(child, "/thinking full", "shown in full from now on")
    expect_prompt(child)
    full = ask(child, "再见", "再见！")
    expect_prompt(child)
    assert "第二次思考的内容。" in full and "thinking…" not in full
    assert "用户在打招呼" in shown
    child.sendeof()
    child.expect(pexpect.EOF)
