"""The served deployment's auth: which credential names which user (graph/server_auth.py)."""

from __future__ import annotations

import asyncio
import time

import jwt
import pytest

from generalAgent.config.settings import ServerSettings
from generalAgent.graph.server_auth import api_keys, credential, user_of

SECRET = "jwt-secret-for-tests-0123456789abcdef"


def server(**values: str) -> ServerSettings:
    return ServerSettings(**values)


def test_keys_are_user_key_pairs_and_malformed_entries_are_ignored() -> None:
    settings = server(server_api_keys=" alice:k-1 , bob:k:2 ,nobody, :k-3, carol: ")
    assert api_keys(settings) == {"k-1": "alice", "k:2": "bob"}


def test_the_credential_is_a_bearer_token_or_an_api_key_header() -> None:
    assert credential({b"authorization": b"Bearer abc"}) == "abc"
    assert credential({"Authorization": "bearer  abc "}) == "abc"
    assert credential({b"x-api-key": b"xyz"}) == "xyz"
    assert credential({b"authorization": b"Basic dTpw", b"x-api-key": b"xyz"}) == "xyz"
    assert credential({}) == ""


def test_a_key_names_its_user_and_anything_else_names_nobody() -> None:
    settings = server(server_api_keys="alice:key-a,bob:key-b")
    assert user_of("key-b", settings) == "bob"
    assert user_of("key-c", settings) is None
    assert user_of("", settings) is None


def test_a_jwt_names_its_subject_when_signed_with_the_secret_and_not_expired() -> None:
    settings = server(server_jwt_secret=SECRET)
    good = jwt.encode({"sub": "dana", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    assert user_of(good, settings) == "dana"
    forged = jwt.encode({"sub": "dana"}, "another-secret-of-enough-length-0123", algorithm="HS256")
    expired = jwt.encode({"sub": "dana", "exp": int(time.time()) - 60}, SECRET, algorithm="HS256")
    anonymous = jwt.encode({"name": "dana"}, SECRET, algorithm="HS256")
    unsigned = jwt.encode({"sub": "dana"}, None, algorithm="none")
    for token in (forged, expired, anonymous, unsigned, "not-a-token"):
        assert user_of(token, settings) is None, token


def test_a_server_without_users_refuses_every_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_sdk import Auth

    from generalAgent.graph import server_auth

    monkeypatch.setattr(server_auth, "server_settings", lambda: server())
    with pytest.raises(Auth.exceptions.HTTPException) as refused:
        asyncio.run(server_auth.authenticate({b"x-api-key": b"anything"}))
    assert refused.value.status_code == 401 and "SERVER_API_KEYS" in str(refused.value.detail)
