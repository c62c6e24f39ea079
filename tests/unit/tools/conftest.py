"""Fixtures the tool tests share with the fault cases (tests/faults/conftest.py imports them too)."""

from tests.support.tools import root  # noqa: F401 - fixture
from tests.support.web_site import site  # noqa: F401 - fixture
