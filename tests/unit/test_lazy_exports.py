"""The documents and knowledge packages load their heavy names on first use, through one
loader (lazy_exports.py): each name is found, kept once loaded, listed by dir() before it
is loaded, and a name the package does not have is an AttributeError naming the package."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from generalAgent.lazy_exports import lazy_exports

PACKAGES = ("generalAgent.documents", "generalAgent.knowledge")

# Run in a fresh interpreter: this test process may have loaded the heavy modules already.
PROBE = """
import json, sys, importlib
package = importlib.import_module(sys.argv[1])
listed = dir(package)
before = sorted(m for m in sys.modules if m.startswith(sys.argv[1] + "."))
print(json.dumps({"all": package.__all__, "listed": listed, "loaded_before": before}))
"""


@pytest.mark.parametrize("package", PACKAGES)
def test_dir_lists_every_exported_name_before_any_is_loaded(package: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, package], capture_output=True, text=True, check=True, timeout=60
    )
    found = json.loads(result.stdout)
    assert set(found["all"]) <= set(found["listed"]), set(found["all"]) - set(found["listed"])
    # dir() only lists: the store, the index and the search stay unloaded
    heavy = {f"{package}.index", f"{package}.store", f"{package}.search"}
    assert not heavy & set(found["loaded_before"]), found["loaded_before"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_is_reachable(package: str) -> None:
    module = __import__(package, fromlist=["__all__"])
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def test_a_name_is_loaded_once_and_kept_in_the_package() -> None:
    package = types.ModuleType("example_package")
    package.__getattr__, package.__dir__ = lazy_exports(vars(package), {"dumps": "json"})
    assert "dumps" not in vars(package)
    assert package.dumps is json.dumps
    assert vars(package)["dumps"] is json.dumps  # later reads never reach __getattr__


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    import generalAgent.documents
    import generalAgent.knowledge

    with pytest.raises(AttributeError, match="'generalAgent.documents' has no attribute 'Nothing'"):
        generalAgent.documents.Nothing  # noqa: B018
    with pytest.raises(AttributeError, match="'generalAgent.knowledge' has no attribute 'Nothing'"):
        generalAgent.knowledge.Nothing  # noqa: B018
    assert not hasattr(generalAgent.knowledge, "_LAZY")  # one loader, no table of the package's own
