"""Settings: defaults, the .env file, and one clear line for every invalid value."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.reference import render_env_example, render_settings_markdown, settings_table
from generalAgent.config.settings import SettingsError, load_settings
from generalAgent.config.sources import user_data_dir

pytestmark = pytest.mark.smoke


def test_defaults_follow_the_design() -> None:
    settings = load_settings(env_file=None)
    assert settings.governance.max_message_history == 40
    assert settings.documents.chunk_max_size == 400
    assert settings.documents.chunk_overlap == 80
    assert settings.documents.chunk_min_size == 50
    assert settings.documents.index_stale_threshold_hours == 24
    assert settings.paths.data_dir == user_data_dir()  # one data home, whatever .env is found
    assert settings.model.missing() == ["MODEL_NAME", "OPENAI_API_KEY"]


def test_env_file_and_environment_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("MODEL_NAME=deepseek-chat\nOPENAI_API_KEY=sk-abc\nMAX_LOOPS=7\n", encoding="utf-8")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.deepseek.com/v1")
    settings = load_settings(env_file=env_file)
    assert settings.model.model_name == "deepseek-chat"
    assert settings.model.openai_api_key is not None
    assert settings.model.openai_api_key.get_secret_value() == "sk-abc"
    assert settings.model.openai_base_url == "https://api.deepseek.com/v1"
    assert settings.governance.max_loops == 7
    assert settings.model.missing() == []


def test_blank_values_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL_NAME", "  ")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert load_settings(env_file=None).model.missing() == ["MODEL_NAME", "OPENAI_API_KEY"]


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("MAX_MESSAGE_HISTORY", "5", "(allowed: 10..100)"),
        ("MAX_MESSAGE_HISTORY", "abc", "(allowed: 10..100)"),
        ("MODEL_MAX_RETRIES", "-1", "(allowed: 0..10)"),
        ("USE_JIEBA", "maybe", "(allowed: true or false)"),
        ("CHUNK_OVERLAP", "300", "less than half of CHUNK_MAX_SIZE"),
        ("LOG_LEVEL", "LOUD", "LOG_LEVEL"),
    ],
)
def test_invalid_value_is_one_line_naming_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as caught:
        load_settings(env_file=None)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"Invalid setting {variable}=")
    assert expected in message


def test_env_example_lists_every_setting_as_the_code_defines_it() -> None:
    example = (Path(__file__).resolve().parents[3] / ".env.example").read_text(encoding="utf-8")
    assert example == render_env_example(), (
        "regenerate: python -m generalAgent.config.reference > .env.example"
    )
    for variable, _default, description in settings_table():
        assert description, f"{variable} has no description"
        assert f"{variable}=" in example


def test_configuration_doc_table_matches_the_code() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "configuration.md").read_text(encoding="utf-8")
    block = text.split("<!-- settings:start -->\n", 1)[1].split("<!-- settings:end -->", 1)[0]
    assert block == render_settings_markdown(), (
        "regenerate: python -m generalAgent.config.reference --markdown"
    )


def test_every_documented_setting_is_read_by_the_code() -> None:
    """A setting in .env.example that no code reads is a promise nobody keeps."""
    import ast

    from generalAgent.config.settings import GROUPS

    package = Path(__file__).resolve().parents[3] / "generalAgent"
    read: set[str] = set()
    for module in package.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            # `settings.documents.chunk_max_size`, `self.model_name`, `getattr(x, "name")` ...
            if isinstance(node, ast.Attribute) and not (
                isinstance(node.ctx, ast.Store) and module.name == "settings.py"
            ):
                read.add(node.attr)
    unread = [
        f"{name.upper()} ({group})"
        for group, cls in GROUPS.items()
        for name in cls.model_fields
        if name not in read
    ]
    assert unread == []
