"""A PostgreSQL server for the tests that need one, a fresh schema per test.

GENERALAGENT_TEST_DATABASE_URL names the server (`.ci/run` starts a throw-away one); without
it the PostgreSQL cases skip, and fail under CI=1, where the server must be there.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

URL_ENV = "GENERALAGENT_TEST_DATABASE_URL"


def server_url() -> str:
    url = os.environ.get(URL_ENV)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"{URL_ENV} is not set: .ci/run starts PostgreSQL for these tests")
        pytest.skip(f"set {URL_ENV} to a PostgreSQL server (as .ci/run does) to run these tests")
    return url


def fresh_schema() -> Iterator[tuple[str, str]]:
    """(server url, a fresh schema name), the schema dropped afterwards (a fixture's body)."""
    url = server_url()
    import psycopg

    name = f"test_{uuid.uuid4().hex[:12]}"
    yield url, name
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def schema_url(url: str, schema: str) -> str:
    """`url` whose connections use `schema` (libpq's options: search_path), for a process
    that is given only a URL, as SEARCH_DATABASE_URL."""
    from urllib.parse import quote

    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options={quote(f'-csearch_path={schema}')}"


def fresh_schema_url() -> Iterator[str]:
    """A URL whose connections use a fresh, created schema, dropped afterwards (a fixture's
    body): SEARCH_DATABASE_URL for a process of its own."""
    import psycopg

    for url, schema in fresh_schema():
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'CREATE SCHEMA "{schema}"')
        yield schema_url(url, schema)
