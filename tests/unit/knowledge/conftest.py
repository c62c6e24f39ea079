"""A knowledge store on the test's own indexes.db."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from generalAgent.config.settings import Settings
from generalAgent.knowledge import KnowledgeStore


@pytest.fixture
def store(settings: Settings) -> Iterator[KnowledgeStore]:
    with KnowledgeStore(settings.paths.indexes_db, settings.documents) as store:
        yield store
