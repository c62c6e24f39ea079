"""/model switches among MODEL_CHOICES in a running chat, and the cost line follows MODEL_PRICES."""

from __future__ import annotations

import pexpect
import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.terminal import ask, expect_prompt, plain

pytestmark = pytest.mark.e2e
USAGE = {"prompt_tokens": 200_000, "cached_tokens": 100_000, "completion_tokens": 10_000}


def test_switching_models_keeps_the_conversation_and_prices_each_turn(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str]
) -> None:
    openai_server.add(Reply(text="First answer.", **USAGE), Reply(text="Second answer.", **USAGE))
    env = {
        **cli_env,
        "MODEL_NAME": "test-model",
        "MODEL_CHOICES": "other-model, test-model",
        "MODEL_PRICES": "test-model=2/0.5/8,other-model=4/1/16",
        "MODEL_PRICE_CURRENCY": "¥",
    }
    child = spawn_chat(env=env)
    expect_prompt(child)
    first = ask(child, "hello", "tokens:")
    first += plain(child.readline())
    assert "≈ ¥0.3300" in first  # 100k fresh × 2 + 100k cached × 0.5 + 10k out × 8, per million
    expect_prompt(child)
    listed = ask(child, "/model", "other-model")
    listed += plain(child.readline())
    assert "test-model" in listed and "¥4 in · 1 cached · 16 out per M tokens" in listed
    expect_prompt(child)
    unlisted = ask(child, "/model gpt-9", "Not in MODEL_CHOICES")  # any id: the list only suggests
    assert "Now using gpt-9" in unlisted
    expect_prompt(child)
    ask(child, "/model other-model", "Now using other-model")
    expect_prompt(child)
    second = ask(child, "and now?", "tokens:")
    second += plain(child.readline())
    assert "≈ ¥0.6600" in second
    expect_prompt(child)
    child.sendeof()
    child.expect(pexpect.EOF)

    first_request, second_request = openai_server.chat_requests
    assert first_request.body["model"] == "test-model"
    assert second_request.body["model"] == "other-model"
    # The conversation went on: the first turn is in the second model's request.
    assert [m["content"] for m in second_request.messages if m["role"] == "user"][:1] == ["hello"]


def test_a_malformed_price_table_stops_the_start_with_one_line(cli_env: dict[str, str], workdir) -> None:
    from tests.e2e.conftest import run_cli

    result = run_cli(["-p", "hi"], {**cli_env, "MODEL_PRICES": "test-model=2/0.5"}, workdir)
    assert result.returncode != 0
    assert "MODEL_PRICES" in result.stderr and "deepseek-chat=2/0.5/8" in result.stderr
    assert "Traceback" not in result.stderr
