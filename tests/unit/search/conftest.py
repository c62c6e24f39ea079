"""The search store on both backends, for the tests of this folder: SQLite always, and
PostgreSQL when GENERALAGENT_TEST_DATABASE_URL names a server (a fresh schema per case,
dropped afterwards)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from generalAgent.config.settings import Settings
from generalAgent.search.store import SearchStore
from tests.support.postgres import fresh_schema
from tests.support.search_store import open_store


@pytest.fixture
def pg_schema() -> Iterator[tuple[str, str]]:
    """(server url, a fresh schema name), the schema dropped afterwards."""
    yield from fresh_schema()


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, settings: Settings) -> Iterator[SearchStore]:
    opened = open_store(request.param, settings, request)
    yield opened
    opened.close()
