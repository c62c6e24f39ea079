"""The files a `--server` turn's #paths name, carried in the message it sends.

A served deployment's tools read the server's files, never this machine's, so what the
local chat copies into the session's uploads/ for its tools to read (agent/turn_input.py)
a client sends in the message itself. The files are found, checked and refused by the
local chat's own rules and words (agent/chat_input.py: a name that is not there, globs,
links out of the folder, the size limits per kind, old Office files), by copying them
into a scratch folder of this process that is gone after the turn is sent. Then:

- a text, code or Markdown file goes in as its text (its encoding found as read_file
  finds it), a document (PDF, Word, Excel, PowerPoint) as the text read from it;
- anything else cannot be read there, and is said so. Images are not sent yet: the
  server's model may take none, and the served graph would have to keep a client's
  image as it keeps the local chat's (graph/images.py) for them to be sent right.

All the text attached to one message is bounded (MAX_ATTACHED_BYTES, as `-p` bounds piped
text): more is refused before anything is sent, with the way to send less.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generalAgent.agent.chat_input import (
    DOCUMENT_TYPES,
    find_image_paths,
    find_references,
    missing_reference,
    spaced_reference,
    unescape,
    upload,
)
from generalAgent.config.settings import DocumentSettings
from generalAgent.i18n import _

# Text attached to one message, in UTF-8 bytes: far more than any context window holds
# (8 MiB, as `-p` allows of piped text), so a file over it is refused, not sent.
MAX_ATTACHED_BYTES = 8 * 1024 * 1024
MB = 1024 * 1024
SCRATCH_SESSION = "attachments"


@dataclass
class ServerMessage:
    """What to send as the user's message (`content`), or why nothing is sent (`problems`)."""

    content: str
    notices: list[str] = field(default_factory=list)  # shown; the message goes
    problems: list[str] = field(default_factory=list)  # shown; nothing is sent
    attached: list[str] = field(default_factory=list)  # the files' names, as attached


def message_for_server(text: str, cwd: Path, settings: DocumentSettings) -> ServerMessage:
    """The message for `text` typed in `cwd`: its #paths (and dragged-in images) attached."""
    found = find_references(text, cwd)
    missing = [
        spaced_reference(r.spaced) if r.spaced else missing_reference(unescape(r.typed), cwd)
        for r in found
        if r.path is None
    ]
    if missing:
        hint = _('Nothing was sent. Check the name; quote one with spaces: #"my report.pdf".')
        return ServerMessage(text, problems=[*missing, hint])
    named = [r.path for r in found if r.path]
    references = [*named, *(p for p in find_image_paths(text, cwd) if p not in named)]
    if not references:
        return ServerMessage(text)
    with tempfile.TemporaryDirectory(prefix="generalagent-attach-") as scratch:
        from generalAgent.tools.workspace import Workspace

        workspace = Workspace.for_session(Path(scratch), SCRATCH_SESSION)
        report = upload(references, workspace, cwd)
        message = ServerMessage(text, notices=list(report.notices))
        if report.problems:
            hint = _("Nothing was sent. Fix or leave out the file above and send the message again.")
            message.problems = [*report.problems, hint]
            return message
        _attach(message, [(f["name"], f["type"], workspace.root / f["path"]) for f in report.files], settings)
    return message


def _attach(
    message: ServerMessage, files: Sequence[tuple[str, str, Path]], settings: DocumentSettings
) -> None:
    blocks: list[str] = []
    sent = 0
    for name, kind, path in files:
        if kind == "image":
            # Not as an image part: the server's model may take none (a text-only model
            # fails the whole run), and the served graph keeps no image a client sends
            # the way it keeps the local chat's (graph/images.py). Said, and left out.
            message.notices.append(
                _("{name} was not sent: a server's agent is not given images from this machine yet").format(
                    name=name
                )
            )
            continue
        try:
            content = _text_of(path, kind, settings)
        except ValueError as exc:
            message.notices.append(str(exc))
            continue
        sent += len(content.encode("utf-8", "replace"))
        if sent > MAX_ATTACHED_BYTES:
            message.problems = [
                _(
                    "{name}: the attached text is over {limit} MB, more than one message can carry to the "
                    "server. Nothing was sent: attach a part of it, or put it on the server and name it there."
                ).format(name=name, limit=MAX_ATTACHED_BYTES // MB)
            ]
            return
        blocks.append(f'<attached_file name="{_attribute(name)}" type="{kind}">\n{content}\n</attached_file>')
        message.attached.append(name)
    if blocks:
        message.content = f"{message.content}\n\n" + "\n\n".join(blocks)


def _text_of(path: Path, kind: str, settings: DocumentSettings) -> str:
    """The file's text; ValueError with the line for the user when it has none to send."""
    from generalAgent.documents.reading import DocumentError

    try:
        if kind in DOCUMENT_TYPES.values():
            from generalAgent.documents.extract import extract_document

            return extract_document(path, settings).text
        if kind in ("text", "markdown", "code"):
            from generalAgent.documents.encoding import decode_text_replacing

            return decode_text_replacing(path.read_bytes(), path.name).text
    except DocumentError as exc:
        raise ValueError(
            _("{name} was not sent: {reason}").format(name=path.name, reason=exc.shown(_))
        ) from exc
    except OSError as exc:
        raise ValueError(
            _("{name} was not sent: {reason}").format(name=path.name, reason=exc.strerror or exc)
        ) from exc
    raise ValueError(
        _("{name} was not sent: the server's agent cannot read this kind of file from a message").format(
            name=path.name
        )
    )


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
