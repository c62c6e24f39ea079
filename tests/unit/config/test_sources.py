"""Where settings come from: environment > ./.env (of a trusted folder) > the user-level .env;
relative paths are relative to the file that set them; hints name the command as it was started."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from generalAgent.cli.config_commands import describe_files
from generalAgent.cli.invocation import command_hint
from generalAgent.config.settings import load_settings
from generalAgent.config.sources import user_config_dir, user_data_dir
from generalAgent.config.trust import TrustStore


@pytest.fixture
def user_env() -> Path:
    path = user_config_dir() / ".env"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "some" / "project"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def test_the_user_level_file_configures_every_folder(user_env: Path, elsewhere: Path) -> None:
    user_env.write_text(
        "MODEL_NAME=deepseek-chat\nOPENAI_API_KEY=sk-user\nDATA_DIR=state\n", encoding="utf-8"
    )
    settings = load_settings()
    assert settings.model.model_name == "deepseek-chat"
    assert settings.paths.data_dir == user_env.parent / "state"  # relative to the file, not the folder
    assert settings.sources.user == user_env and settings.sources.folder is None


def test_without_data_dir_the_user_level_file_keeps_data_in_the_user_data_folder(
    user_env: Path, elsewhere: Path
) -> None:
    user_env.write_text("MODEL_NAME=m\nOPENAI_API_KEY=k\n", encoding="utf-8")
    assert load_settings().paths.data_dir == user_data_dir()


def test_a_folder_env_overrides_the_user_level_file_and_keeps_its_data_here(
    user_env: Path, elsewhere: Path
) -> None:
    user_env.write_text("MODEL_NAME=user-model\nOPENAI_API_KEY=sk-user\nMAX_LOOPS=9\n", encoding="utf-8")
    (elsewhere / ".env").write_text("MODEL_NAME=folder-model\nDATA_DIR=local-data\n", encoding="utf-8")
    TrustStore().remember(elsewhere, True)
    settings = load_settings()
    assert settings.model.model_name == "folder-model"
    assert settings.model.openai_api_key.get_secret_value() == "sk-user"  # type: ignore[union-attr]
    assert settings.governance.max_loops == 9
    assert settings.paths.data_dir == elsewhere / "local-data"


def test_an_untrusted_folder_env_is_not_read_at_all(user_env: Path, elsewhere: Path) -> None:
    user_env.write_text("MODEL_NAME=user-model\nOPENAI_API_KEY=sk-user\n", encoding="utf-8")
    (elsewhere / ".env").write_text(
        "MODEL_NAME=folder-model\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\nDATA_DIR=local-data\n"
        "AUTO_APPROVE_TOOLS=run_bash_command\nCOMMAND_ENV=*\nTOOLS_CONFIG=t.yaml\n",
        encoding="utf-8",
    )
    for decision in (None, False):
        if decision is False:
            TrustStore().remember(elsewhere, False)
        settings = load_settings()
        assert settings.model.model_name == "user-model" and settings.model.openai_base_url is None
        assert settings.tools.auto_approved == frozenset() and "*" not in settings.tools.command_env_names
        assert settings.paths.data_dir == user_data_dir() and settings.paths.tools_config.name == "tools.yaml"
        assert settings.sources.folder is None and settings.sources.trust.ignored == (".env",)
        assert settings.source_of("MODEL_NAME").describe() == f"user file {user_env}"
        assert settings.source_of("AUTO_APPROVE_TOOLS").kind == "default"
        assert "not read (the folder is not trusted)" in describe_files(settings.sources)


def test_the_environment_overrides_both_and_its_paths_stay_relative_to_the_folder(
    user_env: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_env.write_text("MODEL_NAME=m\nOPENAI_API_KEY=k\nDATA_DIR=state\n", encoding="utf-8")
    monkeypatch.setenv("DATA_DIR", "from-env")
    monkeypatch.setenv("MODEL_NAME", "env-model")
    settings = load_settings()
    assert settings.model.model_name == "env-model"
    assert settings.paths.data_dir == Path("from-env")


def test_no_config_at_all_keeps_data_in_the_data_home(elsewhere: Path) -> None:
    assert load_settings().paths.data_dir == user_data_dir()


def test_a_start_without_a_model_creates_nothing_and_says_where_config_goes(
    elsewhere: Path, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "generalAgent", "-p", "hi"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "config init" in result.stderr and str(user_config_dir() / ".env") in result.stderr
    doctor = subprocess.run(
        [sys.executable, "-m", "generalAgent", "doctor", "--offline"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert doctor.returncode == 1 and "will be created at first use" in " ".join(doctor.stdout.split())
    assert list(elsewhere.iterdir()) == []  # no data/, no data/logs
    assert not user_data_dir().exists()  # nor the data home


def test_config_init_writes_a_private_user_level_file_once(elsewhere: Path) -> None:
    run = [sys.executable, "-m", "generalAgent", "config", "init"]
    first = subprocess.run(run, capture_output=True, text=True, timeout=60)
    target = user_config_dir() / ".env"
    assert first.returncode == 0 and target.is_file()
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    written = target.read_text(encoding="utf-8")
    # it is the user-level .env: told to copy it to .env, a user made a second file nobody read
    assert "Copy this file" not in written and written.startswith(
        "# generalAgent settings: your user-level .env"
    )
    assert "MODEL_NAME=" in written
    target.write_text("MODEL_NAME=mine\n", encoding="utf-8")
    second = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert "already exists" in second.stdout and target.read_text(encoding="utf-8") == "MODEL_NAME=mine\n"


def test_hints_name_the_command_as_it_was_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / ".venv" / "bin" / "generalagent"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert command_hint(".venv/bin/generalagent") == ".venv/bin/generalagent"  # make run
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
    assert command_hint(str(script)) == "generalagent"  # installed on PATH
    assert command_hint(str(Path(sys.modules["generalAgent"].__file__).parent / "__main__.py")) == (
        "python -m generalAgent"
    )
