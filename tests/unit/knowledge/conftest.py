"""A knowledge store on each backend: the test's own indexes.db, and a fresh schema of the
PostgreSQL server GENERALAGENT_TEST_DATABASE_URL names (skipped without one, failing under
CI=1: tests/support/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.knowledge import KnowledgeStore
from generalAgent.search.store import TERMINAL, Viewer
from tests.support.postgres import fresh_schema, schema_url

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture
def pg_schema() -> Iterator[tuple[str, str]]:
    yield from fresh_schema()


def knowledge_store(
    backend: str, settings: Settings, request: pytest.FixtureRequest, viewer: Viewer = TERMINAL
) -> KnowledgeStore:
    """A store of `backend` as `viewer`; on PostgreSQL every store of one test shares its schema."""
    if backend == "sqlite":
        return KnowledgeStore(settings.paths.indexes_db, settings.documents, viewer=viewer)
    url, schema = request.getfixturevalue("pg_schema")
    return KnowledgeStore(
        settings.paths.indexes_db, settings.documents, viewer=viewer, database_url=url, schema=schema
    )


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """SEARCH_DATABASE_URL of the backend: None for indexes.db, the test's schema on PostgreSQL."""
    if backend == "sqlite":
        return None
    import psycopg

    url, schema = request.getfixturevalue("pg_schema")
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    return schema_url(url, schema)


@pytest.fixture
def settings(data_dir: Path, store_url: str | None) -> Settings:
    """The suite's settings, the knowledge base on the test's backend (SEARCH_DATABASE_URL)."""
    return load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
        paths={"data_dir": data_dir, "search_database_url": store_url},
    )


@pytest.fixture
def store(backend: str, settings: Settings, request: pytest.FixtureRequest) -> Iterator[KnowledgeStore]:
    with knowledge_store(backend, settings, request) as store:
        yield store
