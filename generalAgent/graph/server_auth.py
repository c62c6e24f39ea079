"""Who may use a LangGraph Server deployment, and whose threads each user sees.

`langgraph.json` names `auth` below as the server's custom auth (`"auth": {"path": ...}`);
LangGraph Server runs `authenticate` on every request, then the most specific `@auth.on`
handler for what the request does (docs/deployment.md):

- A request proves its user with an API key (`Authorization: Bearer KEY` or `x-api-key:
  KEY`), checked against SERVER_API_KEYS (`user:key` pairs), or with a JWT signed with
  SERVER_JWT_SECRET (HS256; its `sub` is the user). Nothing configured, no credential or
  a wrong one: 401. The server never runs unauthenticated.
- Threads (and the runs on them) and crons belong to the user who made them: creating
  or updating one stamps `metadata.owner` with the user, whatever the client sent, and
  every read, search, run or deletion is filtered to the user's own, so another user's
  thread is "not found" and never listed.
- Assistants are the deployment's graphs: every user may read and search them; nobody
  may create, change or delete them through the API.
- A run is checked before it exists (graph/served.py): a client may send a conversation,
  mentions of the tools the deployment offers and the owner's answer to an interrupt;
  one that sends approvals, a workspace, a path or any other key the graph keeps for
  itself is refused (403). Nobody writes a thread's state directly (update_state): only
  the graph's nodes do, from the owner's answers.
- The store is scoped to a namespace that starts with the user.
- Anything else is refused (403): a default-deny handler, so a resource LangGraph adds
  later is closed until someone decides otherwise.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_sdk import Auth

from generalAgent.config.settings import ServerSettings, Settings, load_settings
from generalAgent.graph.served import client_run_problem
from generalAgent.search.viewer import AUTH_PERMISSIONS, AUTH_RECORD, AUTH_USER, TEAM_PERMISSION

OWNER = "owner"
# Keys of a run's configurable that name its user (search/store.py `served_identity`).
IDENTITY_KEYS = (AUTH_USER, "user_id")
auth = Auth()


@functools.cache
def served_settings() -> Settings:
    """The server's settings, read once, the first time a request comes in (in a worker
    thread: reading files would block the server's event loop)."""
    return load_settings()


def server_settings() -> ServerSettings:
    return served_settings().server


def api_keys(settings: ServerSettings) -> dict[str, str]:
    """{key: user} from SERVER_API_KEYS (`alice:KEY1,bob:KEY2`); entries without both are ignored."""
    raw = settings.server_api_keys.get_secret_value() if settings.server_api_keys else ""
    keys: dict[str, str] = {}
    for entry in raw.split(","):
        user, _, key = entry.strip().partition(":")
        if user.strip() and key.strip():
            keys[key.strip()] = user.strip()
    return keys


def credential(headers: Mapping[Any, Any]) -> str:
    """The key or token a request carries: `Authorization: Bearer …`, else `x-api-key`."""
    found = {
        (k.decode("latin-1") if isinstance(k, bytes) else str(k)).lower(): (
            v.decode("latin-1") if isinstance(v, bytes) else str(v)
        )
        for k, v in headers.items()
    }
    scheme, _, token = found.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return found.get("x-api-key", "").strip()


def user_of(token: str, settings: ServerSettings) -> str | None:
    """The user a key or a JWT names, or None when it names nobody."""
    found = identity_of(token, settings)
    return found[0] if found is not None else None


def identity_of(token: str, settings: ServerSettings) -> tuple[str, tuple[str, ...]] | None:
    """(user, teams) a key or a JWT names, or None when it names nobody: a key's user is
    in the teams SERVER_TEAMS gives them, a token's also in its `teams` claim."""
    if not token:
        return None
    user = None
    for key, name in api_keys(settings).items():
        # Every key is compared, in constant time: how long a refusal takes tells nothing.
        if hmac.compare_digest(key.encode(), token.encode()):
            user = name
    if user is not None or settings.server_jwt_secret is None:
        return (user, settings.teams_of(user)) if user is not None else None
    import jwt  # PyJWT, a dependency of LangGraph Server itself

    try:
        claims = jwt.decode(
            token,
            settings.server_jwt_secret.get_secret_value(),
            algorithms=["HS256"],
            options={"require": ["sub"]},
        )
    except jwt.PyJWTError:
        return None
    subject = claims.get("sub")
    if not subject:
        return None
    claimed = claims.get("teams")
    teams = [str(t) for t in claimed if isinstance(t, str)] if isinstance(claimed, list) else []
    return str(subject), tuple(dict.fromkeys([*settings.teams_of(str(subject)), *teams]))


@auth.authenticate
async def authenticate(headers: dict) -> Auth.types.MinimalUserDict:
    settings = await asyncio.to_thread(server_settings)
    if not api_keys(settings) and settings.server_jwt_secret is None:
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail="This server has no users: set SERVER_API_KEYS or SERVER_JWT_SECRET (docs/deployment.md).",
        )
    found = identity_of(credential(headers), settings)
    if found is None:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="Send a valid key: Authorization: Bearer KEY (or x-api-key: KEY)."
        )
    user, teams = found
    # The teams ride as permissions: the server puts them in every run's config
    # (langgraph_auth_permissions), where the tools read whose spaces a call sees
    # (search/store.py `served_viewer`); a client cannot set them.
    return {"identity": user, "permissions": [f"{TEAM_PERMISSION}{team}" for team in teams]}


@auth.on
async def deny_by_default(ctx: Auth.types.AuthContext, value: Any) -> bool:
    return False


def _owned(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Stamp what is created or changed with its owner; see only what one owns."""
    if ctx.action in {"create", "update", "create_run"} and isinstance(value, dict):
        # In place: the server keeps the dict it handed over, not the key's new value.
        if not isinstance(value.get("metadata"), dict):
            value["metadata"] = {}
        value["metadata"][OWNER] = ctx.user.identity
    return {OWNER: ctx.user.identity}


@auth.on.threads
async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    return _owned(ctx, value)


@auth.on.threads.create_run
async def own_runs(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A run on one's own thread, with nothing in it that widens what the server allows
    and no identity but the one the request proved."""
    settings = await asyncio.to_thread(served_settings)
    # LangGraph Server hands the run's arguments under `kwargs`; Aegra the request itself.
    kwargs = value.get("kwargs", value) if isinstance(value, dict) else None
    kwargs = kwargs if isinstance(kwargs, dict) else {}
    problem = client_run_problem(kwargs, settings) or identity_problem(
        kwargs, ctx.user.identity, list(ctx.permissions)
    )
    if problem is not None:
        raise Auth.exceptions.HTTPException(status_code=403, detail=f"Refused: {problem}.")
    return _owned(ctx, value)


def identity_problem(kwargs: Mapping[str, Any], user: str, permissions: Sequence[str]) -> str | None:
    """Why a run's config names another user than the request proved, or None. LangGraph
    Server writes the authenticated user over these keys before this check; Aegra keeps a
    client's `user_id` and `langgraph_auth_user`, which the tools would take for the user."""
    config = kwargs.get("config")
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping):
        return None
    claimed = {key: configurable[key] for key in IDENTITY_KEYS if key in configurable}
    record = configurable.get(AUTH_RECORD)
    if record is not None:
        try:
            claimed[AUTH_RECORD] = record.get("identity")
        except (AttributeError, TypeError):
            claimed[AUTH_RECORD] = None
    for key, named in claimed.items():
        if str(named) != user:
            return f"config key {key!r} names the user; the server decides who you are"
    given = configurable.get(AUTH_PERMISSIONS)
    if given is not None and list(given) != list(permissions):
        return f"config key {AUTH_PERMISSIONS!r} is the server's"
    return None


@auth.on.threads.update
async def update_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """One's own thread's metadata (and cancelling its runs); never its state: a state
    write (update_state) comes without metadata, and would let a client approve itself."""
    if not isinstance(value, dict) or value.get("metadata") is None:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="Refused: a thread's state is written by the graph; send a run instead."
        )
    return _owned(ctx, value)


@auth.on.crons
async def own_crons(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    return _owned(ctx, value)


@auth.on.assistants.read
async def read_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    return True


@auth.on.assistants.search
async def search_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    return True


@auth.on.store
async def own_store(ctx: Auth.types.AuthContext, value: Any) -> bool:
    namespace = tuple(value.get("namespace") or ())
    if not namespace or namespace[0] != ctx.user.identity:
        value["namespace"] = (ctx.user.identity, *namespace)
    return True
