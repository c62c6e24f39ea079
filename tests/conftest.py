"""Shared fixtures: isolated settings under a temporary DATA_DIR, and the local model server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from tests.support.openai_server import ScriptedOpenAIServer

# Settings come only from what a test gives: never from a developer's .env or shell.
_SETTING_PREFIXES = (
    "MODEL_",
    "OPENAI_",
    "MAX_",
    "DATA_DIR",
    "DATABASE_URL",
    "CHUNK_",
    "USE_JIEBA",
    "HISTORY_",
    "EMBEDDING_",
    "CONTENT_",
    "WHOLE_ITEM_",
    "INDEX_",
    "XLSX_",
    "FETCH_",
    "LOG_LEVEL",
    "SKILLS_DIR",
    "AGENTS_DIR",
    "KNOWLEDGE_DIR",
    "TOOLS_CONFIG",
    "MCP_",
    "UI_",
    "USER_AGENTS_FILE",
    "AGENTS_MD_",
    "COMPACT_",
    "SUMMARY_",
)


@pytest.fixture(autouse=True)
def _clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    for name in list(os.environ):
        if name.startswith(_SETTING_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    # The UI speaks English unless a test asks for another language.
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    # Nor from a developer's user-level config (~/.config/generalagent): an empty one per test.
    monkeypatch.setenv("GENERALAGENT_CONFIG_DIR", str(tmp_path_factory.mktemp("user-config")))
    # Never the developer's own ~/.config/generalagent/AGENTS.md (tests that need one write it).
    monkeypatch.setenv("USER_AGENTS_FILE", str(tmp_path / "no-user-agents.md"))


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
