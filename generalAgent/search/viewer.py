"""Whose request it is, for the search store's spaces (store.py): the `Viewer`, the
terminal's from SEARCH_USER / SEARCH_TEAMS, a served run's from the server's authentication.

Kept apart from store.py so that the graph and the shell tool can tell a served run's user
without loading the store (a `-p` run never opens it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generalAgent.config.settings import PathSettings

PRIVATE = ""  # the space of an item only its owner sees
# The space every viewer reads and none writes: the built-in knowledge, imported by the
# application itself (knowledge/builtin.py), not by a user.
PUBLIC = "*"


@dataclass(frozen=True)
class Viewer:
    """Whose request it is: the user (from the server's authentication; '' in the terminal)
    and the team spaces they are a member of."""

    user: str = ""
    teams: tuple[str, ...] = ()

    def may_write(self, owner: str, space: str) -> bool:
        return (space == PRIVATE and owner == self.user) or (space != PRIVATE and space in self.teams)

    def where(self, alias: str, mark: str) -> tuple[str, list[Any]]:
        """SQL condition on items `alias` for what this viewer sees, with `mark` placeholders."""
        condition = f"(({alias}.space = '' AND {alias}.owner = {mark}) OR {alias}.space = '{PUBLIC}'"
        params: list[Any] = [self.user]
        if self.teams:
            condition += f" OR {alias}.space IN ({', '.join([mark] * len(self.teams))})"
            params += list(self.teams)
        return condition + ")", params


TERMINAL = Viewer()


# A served run's `configurable` keys naming the user the server authenticated for the request
# (a client's own values are refused: graph/server_auth.py). LangGraph Server sets the id and
# the permissions its auth handler gave; Aegra (docs/deployment.md) the user's whole record.
AUTH_USER = "langgraph_auth_user_id"
AUTH_PERMISSIONS = "langgraph_auth_permissions"
AUTH_RECORD = "langgraph_auth_user"
TEAM_PERMISSION = "team:"  # a permission naming a team space the user is a member of


def served_identity(configurable: Any) -> tuple[str, tuple[str, ...]] | None:
    """(user, permissions) of a served run, as either server puts them in the run's
    configurable; None outside a server."""
    if not configurable:
        return None
    user, permissions = configurable.get(AUTH_USER), configurable.get(AUTH_PERMISSIONS)
    record = configurable.get(AUTH_RECORD)
    if not user and record is not None:
        try:
            user = record.get("identity")
            permissions = permissions if permissions is not None else record.get("permissions")
        except (AttributeError, KeyError, TypeError):
            return None
    if not user:
        return None
    listed = permissions if isinstance(permissions, list | tuple) else ()
    return str(user), tuple(str(p) for p in listed)


def served_viewer(configurable: Any) -> Viewer | None:
    """The viewer of a served run: the authenticated user and the teams their permissions
    name (`team:NAME`, graph/server_auth.py); None outside a server."""
    identity = served_identity(configurable)
    if identity is None:
        return None
    user, permissions = identity
    names = (p[len(TEAM_PERMISSION) :].strip() for p in permissions if p.startswith(TEAM_PERMISSION))
    return Viewer(user, tuple(dict.fromkeys(t for t in names if t and t != PUBLIC)))


def viewer_from_settings(paths: PathSettings) -> Viewer:
    """The viewer SEARCH_USER and SEARCH_TEAMS name (the terminal's: '' and none)."""
    names = (t.strip() for t in paths.search_teams.split(","))
    teams = tuple(dict.fromkeys(t for t in names if t and t != PUBLIC))
    return Viewer(paths.search_user.strip(), teams)
