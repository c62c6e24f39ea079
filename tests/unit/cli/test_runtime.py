"""The agent loader: the garbage collector paused for the chat's and -p's start is always
resumed, and a load the chat has left stops (tests/e2e/test_chat_exit.py has the servers)."""

from __future__ import annotations

import gc
import threading

import pytest

from generalAgent.agent.loading import BackgroundLoader, LoadAbandoned, load_agent, pause_collector
from generalAgent.config.settings import Settings, load_settings
from generalAgent.providers.factory import ModelNotConfigured


@pytest.fixture
def unconfigured(data_dir) -> Settings:
    return load_settings(env_file=None, paths={"data_dir": data_dir})


def test_a_paused_collector_is_resumed_even_when_the_agent_cannot_load(unconfigured: Settings) -> None:
    frozen = gc.get_freeze_count()
    pause_collector()
    try:
        with pytest.raises(ModelNotConfigured):
            load_agent(unconfigured)
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen  # the start-up's objects kept out of later collections
    finally:
        gc.enable()
        gc.unfreeze()  # this test process's objects go back to the collector


def test_a_running_collector_is_left_as_it_is(unconfigured: Settings) -> None:
    """Tests and embedders that call load_agent themselves get no freeze they did not ask for."""
    frozen = gc.get_freeze_count()
    with pytest.raises(ModelNotConfigured):
        load_agent(unconfigured)
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_an_abandoned_load_stops_at_its_next_step(unconfigured: Settings) -> None:
    # Unconfigured, the load would fail building the model: it stops before, with LoadAbandoned.
    abandoned = threading.Event()
    abandoned.set()
    with pytest.raises(LoadAbandoned):
        load_agent(unconfigured, abandoned=abandoned)


def test_a_chat_that_ends_before_the_load_begins_gets_no_agent(unconfigured: Settings) -> None:
    loader = BackgroundLoader(unconfigured)
    loader.stop_servers()
    loader.start()
    with pytest.raises(LoadAbandoned):
        loader.get(timeout=60)


@pytest.mark.parametrize(("language", "skipped"), [("en", "skipped"), ("zh", "跳过")])
def test_a_skill_linked_out_of_its_folder_is_said_skipped_once(
    data_dir, tmp_path, language: str, skipped: str
) -> None:
    # The start-up notice read "Skipped: …/SKILL.md leads outside … (a symbolic link); skipped"
    # ("已跳过：…；已跳过"): the loader's prefix and the link's sentence both said it.
    from generalAgent import i18n

    (tmp_path / "secret.txt").write_text("PRIVATE", encoding="utf-8")
    (tmp_path / "skills" / "stolen").mkdir(parents=True)
    (tmp_path / "skills" / "stolen" / "SKILL.md").symlink_to(tmp_path / "secret.txt")
    settings = load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test"},
        paths={"data_dir": data_dir, "skills_dir": tmp_path / "skills"},
    )
    i18n.use_language(language)
    try:
        agent = load_agent(settings)
    finally:
        i18n.use_language("en")
    try:
        [notice] = agent.notices
    finally:
        agent.close()
    assert "stolen/SKILL.md" in notice and notice.lower().count(skipped) == 1, notice
