"""The agents of one process whose sessions are in different folders (the editor server).

What a session loads from its folder (its .env and, through it, the skills, agent
profiles and tools file it names; its mcp.json servers; its AGENTS.md) belongs to the
agent built for that folder, once the user trusts the folder. A session in a folder that
is not trusted gets the agent of the user's own configuration alone. The folder the
process started in is a folder like any other: nothing of it reaches a session elsewhere.

An agent is built once per configuration (`agent_key`: the trusted folder, or none) and
shared by every session and turn that uses it; each holds a lease. The last lease let go
closes the agent (its MCP servers, the checkpointer's connection, the tools' database
connection and background embedding), whether a session closed, moved to another
configuration when its folder's trust changed, or a turn ended on an agent its session
had left while it ran. A turn takes a lease of its own (`share`), so a change of trust
never closes the agent under a running turn.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from generalAgent.agent.loading import LoadedAgent
from generalAgent.config.settings import Settings
from generalAgent.config.trust import FolderTrust

LOGGER = logging.getLogger(__name__)

AgentKey = Path | None  # the trusted folder whose configuration an agent carries; None: the user's only


def agent_key(trust: FolderTrust) -> AgentKey:
    """Which agent a session under `trust` uses: its folder's once trusted, else the user's."""
    return trust.folder if trust.applies else None


def folder_settings(base: Settings, trust: FolderTrust) -> Settings:
    """The settings of a session under `trust`: the user's configuration, with the folder's
    .env over it when the folder is trusted; the process's --add-dir folders kept.
    Raises SettingsError for a value of the folder's .env that cannot be used."""
    from generalAgent.config.settings import load_settings

    if agent_key(trust) is None:
        settings = load_settings(trust=FolderTrust())  # no folder: none of one is read
    else:
        settings = load_settings(trust=trust, folder=trust.folder)
    return dataclasses.replace(settings, added_folders=base.added_folders)


def load_for(base: Settings) -> Callable[[FolderTrust], LoadedAgent]:
    """The loader `FolderAgents` uses: the agent of `folder_settings`."""
    from generalAgent.agent.loading import load_agent

    return lambda trust: load_agent(folder_settings(base, trust))


@dataclass
class _Entry:
    users: int = 0
    agent: LoadedAgent | None = None
    loading: threading.Lock = field(default_factory=threading.Lock)  # one load per configuration


class AgentLease:
    """One user's hold on a shared agent; `release` once it is done with it."""

    def __init__(self, pool: FolderAgents, key: AgentKey, entry: _Entry, agent: LoadedAgent) -> None:
        self.key = key
        self.agent = agent
        self._pool = pool
        self._entry = entry
        self._released = False

    def release(self) -> None:
        """Let go (once; a second call does nothing). May close the agent: call it off the
        event loop."""
        if not self._released:
            self._released = True
            self._pool._release(self.key, self._entry)


class FolderAgents:
    """The process's agents by configuration, each loaded once and closed with its last lease."""

    def __init__(self, load: Callable[[FolderTrust], LoadedAgent]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._entries: dict[AgentKey, _Entry] = {}

    def acquire(self, trust: FolderTrust) -> AgentLease:
        """A lease on the agent for a session under `trust`, loaded first if none is in use
        (blocking). A load that fails raises here, and leaves nothing behind."""
        key = agent_key(trust)
        with self._lock:
            entry = self._entries.setdefault(key, _Entry())
            entry.users += 1
        try:
            with entry.loading:
                if entry.agent is None:
                    entry.agent = self._load(trust if key is not None else FolderTrust())
                agent = entry.agent
        except BaseException:
            self._release(key, entry)
            raise
        return AgentLease(self, key, entry, agent)

    def acquire_usable(self, trust: FolderTrust) -> tuple[AgentLease, list[str]]:
        """`acquire`, and lines for the user: a trusted folder whose .env has a value that
        cannot be used gets the user's configuration alone, and the line that says why."""
        from generalAgent.config.settings import SettingsError

        try:
            return self.acquire(trust), []
        except SettingsError as exc:
            LOGGER.warning("%s", exc)
            return self.acquire(FolderTrust()), [str(exc)]

    def share(self, lease: AgentLease) -> AgentLease:
        """Another lease on `lease`'s agent (a turn's, beside its session's); at once."""
        with self._lock:
            lease._entry.users += 1
        return AgentLease(self, lease.key, lease._entry, lease.agent)

    def in_use(self) -> dict[AgentKey, int]:
        """The configurations with an agent, and how many leases each has."""
        with self._lock:
            return {key: entry.users for key, entry in self._entries.items()}

    def close(self) -> None:
        """The process ends: every agent closed, leases or not."""
        with self._lock:
            entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            with entry.loading:
                agent, entry.agent = entry.agent, None
            if agent is not None:
                agent.close()

    def _release(self, key: AgentKey, entry: _Entry) -> None:
        with self._lock:
            entry.users -= 1
            if entry.users > 0:
                return
            if self._entries.get(key) is entry:
                del self._entries[key]
            agent, entry.agent = entry.agent, None
        if agent is not None:
            agent.close()
