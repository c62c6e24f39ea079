"""`generalagent -p` and `doctor` against the local OpenAI-compatible server, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e


def test_no_model_configured_prints_guidance_and_exits_2(workdir: Path, cli_env: dict[str, str]) -> None:
    env = {k: v for k, v in cli_env.items() if k not in {"MODEL_NAME", "OPENAI_API_KEY"}}
    for args in (["-p", "hello"], []):
        result = run_cli(args, env, workdir)
        assert result.returncode == 2
        assert "MODEL_NAME" in result.stderr and "OPENAI_API_KEY" in result.stderr
        assert (
            "OPENAI_BASE_URL=https://api.deepseek.com/v1" in result.stderr
        )  # the examples, not a file a pipx install lacks
        assert ".env.example" not in result.stderr
        assert "Traceback" not in result.stderr + result.stdout
        assert result.stdout == ""


def test_invalid_setting_names_the_variable(workdir: Path, cli_env: dict[str, str]) -> None:
    result = run_cli(["-p", "hi"], {**cli_env, "MAX_MESSAGE_HISTORY": "500"}, workdir)
    assert result.returncode == 2
    assert "MAX_MESSAGE_HISTORY" in result.stderr and "10..100" in result.stderr
    assert "Traceback" not in result.stderr


def test_answer_with_streamed_tool_call(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("now", {"timezone": "Asia/Shanghai"})], chunk_chars=3),
        Reply(text="现在是北京时间。", prompt_tokens=2048, cached_tokens=1536, completion_tokens=9),
    )
    result = run_cli(["-p", "现在几点？"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "现在是北京时间。\n"
    assert 'now(timezone="Asia/Shanghai")' in result.stderr
    assert "cached 1,536" in result.stderr
    requests = openai_server.chat_requests
    assert len(requests) == 2
    assert requests[0].body["stream"] is True
    assert requests[0].body["stream_options"] == {"include_usage": True}
    assert "now" in requests[0].tool_names and "run_bash_command" not in requests[0].tool_names
    tool_answer = requests[1].messages[-1]
    assert tool_answer["role"] == "tool" and "CST" in tool_answer["content"]
    assert (
        requests[1].messages[-2]["tool_calls"][0]["function"]["arguments"] == '{"timezone": "Asia/Shanghai"}'
    )


def test_prompt_from_stdin_and_resume(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(Reply(text="Noted: the code word is heron."), Reply(text="The code word was heron."))
    first = run_cli(["-p", "-"], cli_env, workdir, stdin="Remember the code word heron.\n")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Noted: the code word is heron."
    second = run_cli(["-p", "What was the code word?", "--resume"], cli_env, workdir)
    assert second.returncode == 0, second.stderr
    contents = [m["content"] for m in openai_server.chat_requests[1].messages]
    assert contents[1] == "Remember the code word heron.\n"
    assert contents[2] == "Noted: the code word is heron."
    assert contents[3] == "What was the code word?"


def test_empty_prompt_is_refused(workdir: Path, cli_env: dict[str, str]) -> None:
    result = run_cli(["-p", "-"], cli_env, workdir, stdin="  \n")
    assert result.returncode == 2
    assert "empty" in result.stderr


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            Reply(status=401, error_message="Incorrect API key provided: sk-test-SECRET-0123456789"),
            "rejected the API key (401)",
        ),
        (Reply(status=404, error_message="The model does not exist"), "not found"),
        (Reply(status=429, retry_after=0), "Rate limited"),
        (Reply(status=500), "endpoint failed (500)"),
    ],
)
def test_endpoint_errors_are_one_clear_line(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], reply: Reply, expected: str
) -> None:
    openai_server.add(reply)
    result = run_cli(["-p", "hello"], cli_env, workdir)
    assert result.returncode == 1
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert "sk-test-SECRET-0123456789" not in result.stderr + result.stdout
    assert result.stdout == ""


def test_retries_a_429_then_answers(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(Reply(status=429, retry_after=0.1), Reply(text="after the wait"))
    result = run_cli(["-p", "hello"], {**cli_env, "MODEL_MAX_RETRIES": "2"}, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "after the wait\n"
    assert len(openai_server.chat_requests) == 2


def test_hanging_endpoint_times_out(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(Reply(hang=True))
    result = run_cli(["-p", "hello"], {**cli_env, "MODEL_TIMEOUT": "1"}, workdir)
    assert result.returncode == 1
    assert "did not answer within 1 s" in result.stderr


def test_unreachable_endpoint(workdir: Path, cli_env: dict[str, str]) -> None:
    result = run_cli(["-p", "hello"], {**cli_env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, workdir)
    assert result.returncode == 1
    assert "Cannot reach the model endpoint http://127.0.0.1:9/v1" in result.stderr


def test_doctor_reports_without_leaking_the_key(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    result = run_cli(["doctor"], cli_env, workdir)
    assert "sk-test-SECRET-0123456789" not in result.stdout + result.stderr
    assert "OPENAI_API_KEY set (25 characters)" in result.stdout
    assert "answered a 1-token request" in result.stdout
    assert "FTS5 available" in result.stdout
    assert openai_server.chat_requests[-1].body.get("max_completion_tokens") == 1
    assert "provider  generic (no known provider at 127.0.0.1:" in result.stdout
    deepseek = run_cli(
        ["doctor"], {**cli_env, "MODEL_PROVIDER": "deepseek", "MODEL_NAME": "deepseek-chat"}, workdir
    )
    shown = " ".join(deepseek.stdout.split())  # the line wraps at the terminal's width
    assert "provider deepseek (MODEL_PROVIDER=deepseek)" in shown
    assert "context window 131,072 tokens (deepseek-chat* in the deepseek table)" in shown


def test_doctor_fails_clearly_when_endpoint_rejects(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(Reply(status=401))
    result = run_cli(["doctor"], cli_env, workdir)
    assert result.returncode == 1
    assert "rejected the API key" in result.stdout


def test_index_and_search_work_without_a_model(workdir: Path, cli_env: dict[str, str]) -> None:
    env = {k: v for k, v in cli_env.items() if k not in {"MODEL_NAME", "OPENAI_API_KEY"}}
    (workdir / "报告.md").write_text(
        "# 第三季度\n\n本季度营收增长 12%，客户满意度提升到 4.6 分。\n\n# Outlook\n\nBaselines hold.\n",
        encoding="utf-8",
    )
    indexed = run_cli(["index", "报告.md"], env, workdir)
    assert indexed.returncode == 0, indexed.stderr
    found = run_cli(["search", "报告.md", "营收增长", "--json"], env, workdir)
    assert found.returncode == 0, found.stderr
    assert "营收增长 12%" in found.stdout
    english = run_cli(["search", "报告.md", "baseline"], env, workdir)
    assert "Baselines hold" in english.stdout


def test_broken_tools_yaml_stops_with_one_line(workdir: Path, cli_env: dict[str, str]) -> None:
    from generalAgent.tools.registry import DEFAULT_TOOLS_YAML

    broken = workdir / "tools.yaml"
    broken.write_text(
        DEFAULT_TOOLS_YAML.read_text(encoding="utf-8").replace("  now:\n", "  nowish:\n", 1), encoding="utf-8"
    )
    result = run_cli(["-p", "hello"], {**cli_env, "TOOLS_CONFIG": str(broken)}, workdir)
    assert result.returncode == 2
    assert "unknown tool 'nowish'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_file_that_is_not_there_stops_the_prompt_with_exit_2(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    (workdir / "参考手册.pdf").write_bytes(b"%PDF-1.4")
    result = run_cli(["-p", "看看 #参考手册v2.pdf，里面讲了什么？"], cli_env, workdir)
    assert result.returncode == 2
    assert "#参考手册v2.pdf: no such file or folder" in result.stderr and "Nothing was sent" in result.stderr
    assert openai_server.chat_requests == []


def test_a_failed_call_is_explained_in_chinese_when_the_ui_speaks_it(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    openai_server.add(Reply(status=401))
    result = run_cli(["-p", "你好"], {**cli_env, "UI_LANGUAGE": "zh"}, workdir)
    assert result.returncode == 1
    shown = " ".join(result.stderr.split())
    assert "接口拒绝了 API 密钥（401）" in shown and "服务商说" in shown and "Token：" in shown


def test_the_other_file_argument_spelling_runs_on_the_first_try(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    """search_file says `file_path`, read_file `path`: a model that swaps them (DeepSeek and
    Qwen often do) gets both answered at once, with the schemas it was shown unchanged."""
    (workdir / "notes.md").write_text(
        "# Notes\n\nThe launch moved to March.\n\nBudget: 12 engineers.\n", encoding="utf-8"
    )
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall("search_file", {"path": "uploads/notes.md", "query": "launch"}),
                ToolCall("read_file", {"file_path": "uploads/notes.md", "limit": 20}),
            ],
            chunk_chars=5,
        ),
        Reply(text="The launch moved to March."),
    )
    result = run_cli(["-p", "When is the launch? #notes.md"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The launch moved to March.\n"
    requests = openai_server.chat_requests
    assert len(requests) == 2  # no round trip for "Field required"
    assert 'search_file(file_path="uploads/notes.md", query="launch")' in result.stderr  # shown renamed
    answers = [m for m in requests[1].messages if m["role"] == "tool"]
    assert len(answers) == 2
    for answer in answers:
        assert "Error" not in answer["content"] and "launch moved to March" in answer["content"]
    calls = requests[1].messages[-3]["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"file_path": "uploads/notes.md", "query": "launch"},
        {"path": "uploads/notes.md", "limit": 20},
    ]
    # The schemas shown are the same in both requests and keep their own spelling.
    assert requests[0].body["tools"] == requests[1].body["tools"]
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in requests[0].body["tools"]}
    assert (
        "file_path" in schemas["search_file"]["required"]
        and "path" not in schemas["search_file"]["properties"]
    )
    assert (
        "path" in schemas["read_file"]["required"] and "file_path" not in schemas["read_file"]["properties"]
    )


def test_doctor_advises_running_it_again_not_a_chat_command(workdir: Path, cli_env: dict[str, str]) -> None:
    # doctor told a user to "/retry", a command of the chat, after a failed probe.
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = {**cli_env, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"}  # nothing listens there
    result = run_cli(["doctor"], env, workdir)
    shown = " ".join(result.stdout.split())
    assert result.returncode == 1 and "Cannot reach the model endpoint" in shown, shown
    assert "/retry" not in shown


def test_the_readmes_say_how_to_continue_the_last_session() -> None:
    # The README said `--resume` continues the last session; it opens a picker, `-c` continues.
    root = Path(__file__).resolve().parents[2]
    for name in ("README.md", "README.zh-CN.md"):
        text = " ".join((root / name).read_text(encoding="utf-8").split())
        assert "`generalagent --resume` continues" not in text and "`generalagent --resume` 继续" not in text
        assert "`generalagent -c`" in text
