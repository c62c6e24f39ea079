"""Where a local embedding model is found: a folder, or an installed package that ships one."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import load_settings
from generalAgent.search.embeddings import embeddings_from_settings, model_folder, provider_embedding_model


def test_a_package_that_is_the_model_folder_is_used_as_it_is(tmp_path: Path):
    (tmp_path / "modules.json").write_text("[]")
    assert model_folder(tmp_path) == tmp_path


def test_a_package_that_ships_its_model_in_a_subfolder_is_looked_into(tmp_path: Path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "modules.json").write_text("[]")
    (tmp_path / "cli").mkdir()
    assert model_folder(tmp_path) == tmp_path / "model"


def test_without_one_clear_model_folder_the_package_itself_is_tried(tmp_path: Path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "modules.json").write_text("[]")
    assert model_folder(tmp_path) == tmp_path


@pytest.mark.parametrize(
    ("base_url", "model"),
    [
        (None, "text-embedding-3-small"),
        ("https://api.openai.com/v1", "text-embedding-3-small"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "text-embedding-v4"),
        ("https://open.bigmodel.cn/api/paas/v4", "embedding-3"),
        ("https://api.deepseek.com", None),
        ("https://api.moonshot.cn/v1", None),
        ("http://127.0.0.1:11434/v1", None),  # Ollama: the user names the model they serve
    ],
)
def test_auto_picks_the_providers_embedding_model(data_dir: Path, base_url: str | None, model: str | None):
    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test", "openai_base_url": base_url},
        paths={"data_dir": data_dir},
        documents={"embedding_model": "auto"},
    )
    assert provider_embedding_model(base_url) == model
    embedder = embeddings_from_settings(settings)
    assert (embedder.model if embedder is not None else None) == model


def test_a_named_model_is_used_as_named(data_dir: Path):
    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test", "openai_base_url": "https://api.deepseek.com"},
        paths={"data_dir": data_dir},
        documents={"embedding_model": "bge-m3", "embedding_base_url": "http://127.0.0.1:11434/v1"},
    )
    embedder = embeddings_from_settings(settings)
    assert embedder is not None and embedder.model == "bge-m3"
