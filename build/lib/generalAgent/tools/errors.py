"""The one way a tool reports failure: raise `ToolError`; the tools node answers with an error status.

The model reads the message and can act on it (fix the arguments, ask the user, try another
way); the terminal reads the ToolMessage's `status`, never the wording, to show a failure.
"""

from __future__ import annotations

from langchain_core.tools import ToolException


class ToolError(ToolException):
    """A failure the model can act on: what happened and what to do, without an "Error:"
    prefix (the tools node answers `Error: <message>` with status "error")."""
