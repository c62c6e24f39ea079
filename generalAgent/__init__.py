"""generalAgent: a terminal AI agent for documents in Chinese and English."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("generalAgent")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
