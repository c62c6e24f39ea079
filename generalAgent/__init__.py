"""generalAgent: a terminal AI agent for documents in Chinese and English."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed package's metadata the first time it is
    asked for: importlib.metadata and its scan of site-packages cost every start (and
    every fresh `index` or `-p`) a tenth of a second otherwise."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("generalagent-cli")  # config/install.py: DISTRIBUTION
    except PackageNotFoundError:  # run from a source tree that was never installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found
