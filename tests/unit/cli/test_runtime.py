"""The agent loader: the garbage collector paused for the chat's and -p's start is always resumed."""

from __future__ import annotations

import gc

import pytest

from generalAgent.cli.runtime import load_agent, pause_collector
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
