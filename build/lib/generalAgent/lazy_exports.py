"""A package's names loaded from their modules on first use (PEP 562), listed by `dir()`.

`documents` and `knowledge` export classes whose modules pull in the extractors, the index,
the store and the embeddings. Importing one light module of either package (the image
limits, the knowledge records) must not load those, which `generalagent -p` and the chat's
first request may never need (tests/e2e/test_print_imports.py). Such a package lists the
names and where each lives, and takes its module `__getattr__` and `__dir__` from here:

    __getattr__, __dir__ = lazy_exports(globals(), {"SearchIndex": "generalAgent.documents.index"})

Type checkers do not run `__getattr__`: the package imports the same names under
`if TYPE_CHECKING:` so they see each one's real type.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_exports(
    namespace: MutableMapping[str, Any], sources: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of the package whose `globals()` is `namespace`:
    a name of `sources` is imported from the module named there when first read, then kept
    in the namespace (later reads do not come back here); any other name is an
    AttributeError, as for a module without `__getattr__`."""
    package = namespace["__name__"]
    table = dict(sources)

    def __getattr__(name: str) -> Any:
        source = table.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *table})

    return __getattr__, __dir__
