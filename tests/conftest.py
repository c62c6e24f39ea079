"""Shared fixtures: isolated settings under a temporary DATA_DIR, and the local model server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from generalAgent.config.settings import Settings, load_settings
from generalAgent.config.trust import STORE_NAME, TrustStore
from tests.support.environment import agent_variables
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.pgvector import pgvector_url  # noqa: F401  (a session fixture: PostgreSQL with pgvector)

# Hypothesis times each example (200 ms by default) and fails a test whose data takes long to
# generate: on a machine as busy as CI's (three workers on two cores) both fail correct tests.
# What a property proves does not depend on speed. (A test's own @settings keeps the rest.)
hypothesis_settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("suite")


def _without_the_shells_settings(monkeypatch: pytest.MonkeyPatch, user_config: Path) -> None:
    """Settings come only from what a test gives: never from a developer's .env or shell."""
    for name in agent_variables(os.environ):
        monkeypatch.delenv(name, raising=False)
    # The UI speaks English unless a test asks for another language.
    monkeypatch.setenv("LANG", "C.UTF-8")
    # Nor from a developer's user-level config (~/.config/generalagent): an empty one.
    monkeypatch.setenv("GENERALAGENT_CONFIG_DIR", str(user_config))
    # EMBEDDING_MODEL=auto (the default) would send chunks to api.openai.com whenever a test
    # sets a key without a base URL: semantic search is off unless a test turns it on.
    monkeypatch.setenv("EMBEDDING_MODEL", "")


@pytest.fixture(scope="session", autouse=True)
def _clean_session_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Module-scoped fixtures build agents before any per-test fixture runs: they too must
    # not see `AUTO_APPROVE_TOOLS=run_bash_command` from the shell.
    with pytest.MonkeyPatch.context() as monkeypatch:
        _without_the_shells_settings(monkeypatch, tmp_path_factory.mktemp("session-user-config"))
        yield


@pytest.fixture(autouse=True)
def _clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    # Again per test, so what one test set cannot reach the next; an empty config each.
    user_config = tmp_path_factory.mktemp("user-config")
    _without_the_shells_settings(monkeypatch, user_config)
    # The chat asks about any folder not decided yet; the repository, where the CLI runs
    # when a test names no folder, is one the user already declined (nothing changes: it
    # carries no configuration). Tests of the question use folders of their own.
    TrustStore(user_config / STORE_NAME).remember(Path.cwd(), False)
    # Never the developer's own ~/.config/generalagent/AGENTS.md (tests that need one write it).
    monkeypatch.setenv("USER_AGENTS_FILE", str(tmp_path / "no-user-agents.md"))


@pytest.fixture(autouse=True)
def _checkpoints_packed_as_langgraph_writes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every checkpoint the pruning saver packs is compared with what LangGraph's own
    serializer writes for it. The packer reuses a message's bytes from the thread's last
    save (graph/checkpoints.py: MessagePacker): a message changed in place after that save
    would be stored stale, and a test of whatever changed it fails here."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from generalAgent.graph.checkpoints import MessagePacker

    packed_once = MessagePacker.dumps
    serde = JsonPlusSerializer()

    def dumps(self: MessagePacker, thread: tuple[str, str], checkpoint: Any) -> tuple[str, bytes]:
        # LangGraph saves in the background while the next step runs, and the step's input
        # (the `__start__` channel) can change meanwhile: the reducer gives its message an id
        # in place (seen in about one run in ten of test_checkpoints.py). The packer is right
        # if it matches a plain packing made just before or just after it; a stale message
        # matches neither (both see the changed message).
        before = serde.dumps_typed(checkpoint)
        packed = packed_once(self, thread, checkpoint)
        if packed != before:
            assert packed == serde.dumps_typed(checkpoint), f"a stale message was saved in thread {thread}"
        return packed

    monkeypatch.setattr(MessagePacker, "dumps", dumps)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    return load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
        paths={"data_dir": data_dir},
    )


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server
