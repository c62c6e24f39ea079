"""The editor server's agents by folder configuration: loaded once, shared, closed with the last lease."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from generalAgent.agent.folder_agents import FolderAgents, agent_key
from generalAgent.config.trust import FolderTrust


class Agent:
    """Stands for a LoadedAgent: only whether it was closed matters here."""

    def __init__(self, trust: FolderTrust) -> None:
        self.trust = trust
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def pool() -> tuple[FolderAgents, list[Agent]]:
    loaded: list[Agent] = []

    def load(trust: FolderTrust) -> Any:
        loaded.append(Agent(trust))
        return loaded[-1]

    return FolderAgents(load), loaded


TRUSTED = FolderTrust(Path("/projects/one"), (), True)
REFUSED = FolderTrust(Path("/projects/two"), (), False)
UNDECIDED = FolderTrust(Path("/projects/three"), (), None)


def test_untrusted_folders_share_the_users_agent_and_a_trusted_one_has_its_own() -> None:
    agents, loaded = pool()
    leases = [agents.acquire(trust) for trust in (TRUSTED, TRUSTED, REFUSED, UNDECIDED)]
    assert len(loaded) == 2
    assert leases[0].agent is leases[1].agent and leases[2].agent is leases[3].agent
    assert loaded[1].trust == FolderTrust()  # nothing of the untrusted folder is passed on
    assert agents.in_use() == {agent_key(TRUSTED): 2, None: 2}


def test_the_last_lease_closes_the_agent_and_a_turns_lease_keeps_it_open() -> None:
    agents, loaded = pool()
    session = agents.acquire(TRUSTED)
    turn = agents.share(session)
    session.release()
    session.release()  # a second release does nothing
    assert loaded[0].closed == 0  # the turn still runs on it
    turn.release()
    assert loaded[0].closed == 1 and agents.in_use() == {}
    again = agents.acquire(TRUSTED)  # a later session loads it anew
    assert again.agent is loaded[1] and len(loaded) == 2


def test_a_load_that_fails_leaves_nothing_and_the_next_one_loads() -> None:
    calls = []

    def load(trust: FolderTrust) -> Any:
        calls.append(trust)
        if len(calls) == 1:
            raise RuntimeError("the folder's tools file is broken")
        return Agent(trust)

    agents = FolderAgents(load)
    with pytest.raises(RuntimeError):
        agents.acquire(TRUSTED)
    assert agents.in_use() == {}
    assert agents.acquire(TRUSTED).agent is not None


def test_sessions_opening_at_once_in_one_folder_load_its_agent_once() -> None:
    agents, loaded = pool()
    leases = []
    threads = [threading.Thread(target=lambda: leases.append(agents.acquire(TRUSTED))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loaded) == 1 and agents.in_use() == {agent_key(TRUSTED): 8}
    agents.close()
    assert loaded[0].closed == 1 and agents.in_use() == {}
