"""Fixtures the unit tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from generalAgent import i18n


@pytest.fixture
def chinese() -> Iterator[None]:
    """The UI in Chinese for one test, English again after it whatever the test did."""
    i18n.use_language("zh")
    try:
        yield
    finally:
        i18n.use_language("en")
