"""The files a `--server` turn's #paths name, carried in the message it sends.

A served deployment's tools read the server's files, never this machine's, so what the
local chat copies into the session's uploads/ for its tools to read (agent/turn_input.py)
a client sends in the message itself. The files are found, checked and refused by the
local chat's own rules and words (agent/chat_input.py: a name that is not there, globs,
links out of the folder, the size limits per kind, old Office files), by copying them
into a scratch folder of this process that is gone after the turn is sent. Then:

- a text, code or Markdown file goes in as its text (its encoding found as read_file
  finds it), a document (PDF, Word, Excel, PowerPoint) as the text read from it;
- an image goes in as an `image_url` part (a data URL, prepared to the limits the local
  chat uses when no provider says otherwise: documents/images.py), at most
  MAX_SENT_IMAGES of them; whether the server's model takes it is the served graph's to
  decide, exactly as the local chat decides (graph/images.py's receive_sent_images:
  stored, or OCR text, or a line when the model takes no images);
- anything else cannot be read there, and is said so.

All the text attached to one message is bounded (MAX_ATTACHED_BYTES, as `-p` bounds piped
text): more is refused before anything is sent, with the way to send less. An image past
the count, or past MAX_ATTACHED_IMAGE_BYTES of images in all, is left out, said in one line.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from generalAgent.graph.images import MAX_SENT_IMAGES
from generalAgent.i18n import _, ngettext

# Text attached to one message, in UTF-8 bytes: far more than any context window holds
# (8 MiB, as `-p` allows of piped text), so a file over it is refused, not sent.
MAX_ATTACHED_BYTES = 8 * 1024 * 1024
# The data URLs of one message's images together: under the smallest per-request limit a
# provider documents (DeepSeek's 40 MB, OpenAI's 50 MB), so the server's model can take
# every image the message brings; each image is at most 5 MB as prepared (ImageLimits).
MAX_ATTACHED_IMAGE_BYTES = 30 * 1024 * 1024
MB = 1024 * 1024
SCRATCH_SESSION = "attachments"


@dataclass
class ServerMessage:
    """What to send as the user's message (`content`, with `images` as image parts), or why
    nothing is sent (`problems`)."""

    content: str
    notices: list[str] = field(default_factory=list)  # shown; the message goes
    problems: list[str] = field(default_factory=list)  # shown; nothing is sent
    attached: list[str] = field(default_factory=list)  # the files' names, as attached
    images: list[dict[str, Any]] = field(default_factory=list)  # image_url parts, in order

    def sent(self, piped: str = "") -> str | list[dict[str, Any]] | None:
        """The message's content as sent: its text (with `piped` text after a blank line),
        then its images as parts; None when nothing is attached (the typed text is sent)."""
        if not self.attached:
            return None
        text = f"{self.content}\n\n{piped}" if piped else self.content
        if not self.images:
            return text
        return [{"type": "text", "text": text}, *self.images]


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
    image_bytes = 0
    for name, kind, path in files:
        if kind == "image":
            part = _image_part(message, name, path, image_bytes)
            if part is not None:
                image_bytes += len(part["image_url"]["url"])
                message.images.append(part)
                message.attached.append(name)
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


def _image_part(message: ServerMessage, name: str, path: Path, so_far: int) -> dict[str, Any] | None:
    """The image at `path` as an image_url part named `name`, prepared to the local chat's
    limits for an unknown provider; None, with the line said, when it is left out."""
    from generalAgent.display import said_of_error
    from generalAgent.documents.images import ImageError, ImageLimits, data_url, prepare_image

    if len(message.images) >= MAX_SENT_IMAGES:
        message.notices.append(
            _("{name} was not sent: a message to the server carries at most {count} images").format(
                name=name, count=MAX_SENT_IMAGES
            )
        )
        return None
    try:
        url = data_url(prepare_image(path.read_bytes(), ImageLimits()))
    except (ImageError, OSError) as exc:
        said = said_of_error(exc)
        reason = said if isinstance(said, str) else said.shown(_, ngettext)
        message.notices.append(_("{name} was not sent: {reason}").format(name=name, reason=reason))
        return None
    if so_far + len(url) > MAX_ATTACHED_IMAGE_BYTES:
        message.notices.append(
            _("{name} was not sent: a message to the server carries at most {size} MB of images").format(
                name=name, size=MAX_ATTACHED_IMAGE_BYTES // MB
            )
        )
        return None
    return {"type": "image_url", "image_url": {"url": url}, "name": name}


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
