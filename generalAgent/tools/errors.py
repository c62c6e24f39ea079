"""The one way a tool reports failure: raise `ToolError`; the tools node answers with an error status.

The model reads the message and can act on it (fix the arguments, ask the user, try another
way); the terminal reads the ToolMessage's `status`, never the wording, to show a failure.
The message is an N_-marked template with its fields, so the model reads it in English
while a person reads it in the UI language: the tools node keeps it beside the answer
(`SHOWN_ERROR` in the ToolMessage's artifact, never sent to the model) and the terminal
and the editor show it translated (`shown_error`).
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import ToolException

from generalAgent.display import (
    N_,
    Message,
    Plural,
    Translate,
    english_plural,
    os_error_message,
    os_error_reason,
)

SHOWN_ERROR = "shown_error"  # the artifact key of a failed call's Message


class ToolError(ToolException):
    """A failure the model can act on: what happened and what to do, without an "Error:"
    prefix (the tools node answers `Error: <message>` with status "error").

    `ToolError(N_("{path} does not exist."), path=shown)`: the template is marked for the
    catalog and filled with `fields` (strings, or Messages such as an OS error's reason)."""

    def __init__(self, template: str | Message, **fields: object) -> None:
        if isinstance(template, Message):
            self.said = template
        else:
            self.said = Message(
                template, {name: v if isinstance(v, Message) else str(v) for name, v in fields.items()}
            )
        super().__init__(self.said.english())

    @classmethod
    def of(cls, exc: BaseException) -> ToolError:
        """A lower layer's error as the tool's answer, in the UI language when it carries a
        Message (`said`), an OS error in words, else as it is written."""
        said = said_of(exc)
        return cls(said) if isinstance(said, Message) else cls(N_("{problem}"), problem=said)

    @classmethod
    def from_os_error(cls, exc: OSError, path: object) -> ToolError:
        """`report.pdf cannot be opened: permission denied …` in place of `[Errno 13] …`."""
        return cls(os_error_message(exc, path))


def said_of(exc: BaseException) -> str | Message:
    """What `exc` says, as a Message when it carries one (or is an OS error), else its text."""
    said = getattr(exc, "said", None)
    if isinstance(said, Message):
        return said
    if isinstance(exc, OSError) and exc.errno:
        return os_error_message(exc, exc.filename) if exc.filename else os_error_reason(exc)
    return str(exc)


def shown_error(content: str, artifact: Any, translate: Translate, ngettext: Plural = english_plural) -> str:
    """What a person reads of a failed call: its Message in the UI language when the tools
    node kept one, else the answer as the model read it."""
    said = Message.from_data(artifact.get(SHOWN_ERROR)) if isinstance(artifact, dict) else None
    if said is None:
        return content
    return translate(N_("Error: {message}")).format(message=said.shown(translate, ngettext))
