"""Images in a conversation: stored once per session, sent in full only in the turn that brought them.

An image attached to a user message (`#chart.png`) or shown by a tool (`view_page`) is
prepared to the provider's limits (documents/images.py) and written once to the session's
workspace under `.images/`, named by the hash of the source and the limits, so attaching
the same picture again stores nothing new. The stored message holds a one-line
placeholder and, in `additional_kwargs["images"]` (never sent on the wire), where the
prepared image lies.

`with_turn_images` builds what is sent: the messages of the *current* turn (after the
last user message, and that message itself) carry their images as `image_url` parts;
every earlier message carries only its placeholder. So a picture costs its tokens in the
turn that uses it, the later turns send a line instead, and the cached prefix moves once,
at the next turn, where the image was: the history before it stays byte-identical.

The provider's limits on one request's images (how many, how many bytes together) are
kept here too: an image past them is not sent, and a line in its place tells the model
which one and why, so it can say so instead of answering about a picture it never saw.

A tool shows images through its answer's artifact (`{"images": [...]}`); they are sent in
a user message right after the tool answers, built for the request and never stored:
OpenAI's chat completions accept only text parts in a `tool` message, and the
OpenAI-compatible providers we support follow it (docs/documents.md).
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from generalAgent.display import Message, one_line, os_error_reason, said_of_error
from generalAgent.documents.images import (
    IMAGES_KEY,
    ImageError,
    ImageLimits,
    ImageRef,
    data_url,
    data_url_bytes,
    placeholder,
    recognise_image,
    store_image,
)
from generalAgent.documents.ocr import OcrUnavailable

# Tokens an image costs, roughly: one per 28 x 28 pixel tile (Qwen-VL; OpenAI's and Kimi's
# tiles are near it), so the context budget counts an image before the provider does.
PIXELS_PER_TOKEN = 28 * 28


def images_of(message: BaseMessage) -> list[ImageRef]:
    """The images a user message brought (additional_kwargs) or a tool showed (its artifact)."""
    if isinstance(message, ToolMessage):
        artifact = message.artifact
        refs = artifact.get(IMAGES_KEY) if isinstance(artifact, dict) else None
    else:
        refs = message.additional_kwargs.get(IMAGES_KEY)
    return list(refs) if isinstance(refs, list) else []


def with_turn_images(
    history: Sequence[BaseMessage], root: Path, limits: ImageLimits | None = None
) -> list[BaseMessage]:
    """`history` with the images of the current turn as image parts (see the module doc):
    a user message's own images join its content; a tool's images follow its answers in
    one user message, since a `tool` message may carry text only. Within `limits`' count
    and bytes per request, the first images go; a line stands for each one left out."""
    start = _current_turn(history)
    if start < 0:
        return list(history)
    budget = _RequestBudget(limits or ImageLimits())
    shown: list[BaseMessage] = list(history[:start])
    waiting: list[dict[str, Any]] = []  # image parts of the tool answers just passed
    for message in history[start:]:
        if waiting and not isinstance(message, ToolMessage):
            shown.append(_tool_images_message(waiting))
            waiting = []
        if isinstance(message, ToolMessage):
            waiting.extend(_parts(images_of(message), root, budget, f"{message.name or 'the tool'} showed"))
            shown.append(message)
            continue
        parts = _parts(images_of(message), root, budget) if isinstance(message, HumanMessage) else []
        if parts:
            text = message.content if isinstance(message.content, str) else None
            content: list[Any] = (
                [{"type": "text", "text": text}] if text is not None else list(message.content)
            )
            message = message.model_copy(update={"content": [*content, *parts]})
        shown.append(message)
    if waiting:
        shown.append(_tool_images_message(waiting))
    return shown


def _current_turn(history: Sequence[BaseMessage]) -> int:
    return max((i for i, m in enumerate(history) if isinstance(m, HumanMessage)), default=-1)


@dataclass
class _RequestBudget:
    """The images of one request so far, against the provider's per-request limits."""

    limits: ImageLimits
    images: int = 0
    url_bytes: int = 0

    def refusal(self, data: bytes) -> Message | None:
        """Why this image cannot join the request (None: it can, and it is counted)."""
        size = data_url_bytes(data)
        why = self.limits.over_request(self.images + 1, self.url_bytes + size)
        if why is None:
            self.images += 1
            self.url_bytes += size
        return why


def _parts(
    refs: list[ImageRef], root: Path, budget: _RequestBudget, caption: str = ""
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for ref in refs:
        try:
            data = (root / ref["file"]).read_bytes()
        except OSError:
            continue  # deleted from the workspace: the placeholder says what it was
        why = budget.refusal(data)
        if why is not None:
            parts.append({"type": "text", "text": f"[image {ref['path']} not sent: {why.english()}]"})
            continue
        if caption:
            parts.append({"type": "text", "text": f"{caption} {ref['path']}:"})
        parts.append({"type": "image_url", "image_url": {"url": data_url((ref["mime"], data))}})
    return parts


def _tool_images_message(parts: list[dict[str, Any]]) -> HumanMessage:
    content: list[str | dict[Any, Any]] = [*parts]
    return HumanMessage(content=content)


def image_tokens(history: Sequence[BaseMessage]) -> int:
    """Estimated tokens of the images `with_turn_images` adds to `history`."""
    start = _current_turn(history)
    if start < 0:
        return 0
    return sum(
        ref["width"] * ref["height"] // PIXELS_PER_TOKEN + 1
        for message in history[start:]
        for ref in images_of(message)
    )


@dataclass
class TurnImages:
    """What a turn's attached images become: image references for a model that sees, or
    text (OCR, or a line saying why there is none) for one that does not."""

    refs: list[ImageRef] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # appended to the user's message
    ocr: list[str] = field(default_factory=list)  # images sent as OCR text (to tell the user)
    # (path, why) of the images not sent as images: `why` said for the person (`lines` tell the model)
    unread: list[tuple[str, str | Message]] = field(default_factory=list)


def turn_images(paths: Sequence[str], root: Path, vision: bool, limits: ImageLimits) -> TurnImages:
    """The images at workspace `paths` (under `root`) prepared for this turn's message."""
    return _turn_images(
        [(shown, functools.partial(_read, root / shown)) for shown in paths], root, vision, limits
    )


def _read(path: Path) -> bytes:
    return path.read_bytes()


def _given(data: bytes) -> bytes:
    return data


def _turn_images(
    sources: Sequence[tuple[str, Callable[[], bytes]]], root: Path, vision: bool, limits: ImageLimits
) -> TurnImages:
    """`turn_images` of images named `shown` whose bytes each `load` gives (a workspace
    file, or the data a served client sent in its message)."""
    found = TurnImages()
    for shown, load in sources:
        if vision and limits.max_images is not None and len(found.refs) >= limits.max_images:
            why = limits.over_request(len(found.refs) + 1, 0)
            assert why is not None  # the count alone is over
            found.unread.append((shown, why))
            found.lines.append(f"[image: {shown} not attached: {why.english()}]")
            continue
        try:
            data = load()
        except OSError as exc:
            found.unread.append((shown, os_error_reason(exc)))
            continue
        try:
            if vision:
                ref = store_image(root, data, limits, shown)
                found.refs.append(ref)
                found.lines.append(placeholder(ref))
                continue
            text = recognise_image(data).strip()
        except ImageError as exc:
            found.unread.append((shown, said_of_error(exc)))
            found.lines.append(f"[image: {shown} could not be read: {exc}]")
            continue
        except OcrUnavailable as exc:
            found.unread.append((shown, said_of_error(exc)))
            found.lines.append(
                f"[image: {shown}; this model does not take images and OCR is not installed, so only "
                "its name is known. Tell the user to switch to a vision model or install OCR.]"
            )
            continue
        found.ocr.append(shown)
        found.lines.append(
            f"[image: {shown}; this model does not take images: the text OCR read in it follows"
            + (" (none found)]" if not text else f"]\n{text}")
        )
    return found


# Images a client may send in one message (agent/remote_attachments.py sends within these,
# the served graph reads no more): the decoded bytes of one image, as the chat's 20 MB
# limit on an attached image file (agent/chat_input.py), and how many, so a message cannot
# make a text-only model's server OCR without end.
MAX_SENT_IMAGE_BYTES = 20 * 1024 * 1024
MAX_SENT_IMAGES = 20
_DATA_URL = re.compile(r"data:image/[A-Za-z0-9.+-]+;base64,", re.ASCII)


def sent_image_parts(message: BaseMessage) -> list[dict[str, Any]]:
    """The `image_url` parts of a user message's content (what a served client sends)."""
    if not isinstance(message, HumanMessage) or not isinstance(message.content, list):
        return []
    return [p for p in message.content if isinstance(p, dict) and p.get("type") == "image_url"]


def carries_sent_images(messages: Sequence[BaseMessage]) -> bool:
    """Whether the last user message brought image parts to receive (`receive_sent_images`)."""
    start = _current_turn(messages)
    return start >= 0 and bool(sent_image_parts(messages[start]))


def receive_sent_images(
    messages: Sequence[BaseMessage], root: Path, vision: bool, limits: ImageLimits
) -> list[BaseMessage] | None:
    """The history with the images a served client sent as `image_url` parts of its last
    message (data URLs) made what the local chat makes of attached images (`turn_images`):
    stored once in the workspace under `root` and a placeholder line for a model that takes
    images (sent in full by `with_turn_images`, in this turn only), OCR text or a line saying
    why there is none for one that does not. None when the message carries none.

    Only data URLs are read (a link would make the server fetch what a client names), at
    most MAX_SENT_IMAGES of MAX_SENT_IMAGE_BYTES each; what is left out is said by a line
    the model reads, as the local path says it."""
    start = _current_turn(messages)
    if start < 0 or not sent_image_parts(messages[start]):
        return None
    message = messages[start]
    assert isinstance(message.content, list)
    texts: list[str] = []
    skipped: list[str] = []
    sources: list[tuple[str, Callable[[], bytes]]] = []
    for part in message.content:
        if isinstance(part, str):
            texts.append(part)
        elif part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif part.get("type") != "image_url":
            skipped.append(f"[a part of type {one_line(part.get('type'), 40)!r} was left out]")
        else:
            shown = _sent_name(part, len(sources) + len(skipped) + 1)
            if len(sources) >= MAX_SENT_IMAGES:  # counted before it is decoded
                skipped.append(
                    f"[image: {shown} not attached: a message carries at most {MAX_SENT_IMAGES} images]"
                )
                continue
            loaded = _sent_image(part)
            if isinstance(loaded, str):
                skipped.append(f"[image: {shown} not attached: {loaded}]")
            else:
                sources.append((shown, functools.partial(_given, loaded)))
    images = _turn_images(sources, root, vision, limits)
    lines = [*images.lines, *skipped]
    text = "\n".join(t for t in texts if t)
    received = HumanMessage(
        content=f"{text}\n\n" + "\n".join(lines) if lines else text,
        additional_kwargs={**message.additional_kwargs, IMAGES_KEY: [*images_of(message), *images.refs]},
        id=message.id,
        name=message.name,
    )
    return [*messages[:start], received, *messages[start + 1 :]]


def _sent_name(part: dict[str, Any], number: int) -> str:
    """What an image sent in a message is called: the client's name for it (its file's
    name, agent/remote_attachments.py), one line, no path and no bracket (it stands inside
    a bracketed line the model reads); else its place in the message."""
    name = re.sub(r"[/\\\[\]]", "_", one_line(part.get("name") or "", 120)).strip(". ")
    return name or f"image {number}"


def _sent_image(part: dict[str, Any]) -> bytes | str:
    """The bytes of an `image_url` part's data URL, or why there are none (for the model)."""
    inner = part.get("image_url")
    url = inner.get("url") if isinstance(inner, dict) else inner
    if not isinstance(url, str) or not _DATA_URL.match(url):
        return "only an image sent in the message (a data URL) is read, not a link"
    encoded = url[url.index(",") + 1 :]
    if len(encoded) > 4 * -(-MAX_SENT_IMAGE_BYTES // 3):  # base64 of the most it may hold
        return f"it is over {MAX_SENT_IMAGE_BYTES // (1024 * 1024)} MB"
    try:
        return base64.b64decode(encoded, validate=True)
    except ValueError:
        return "its data URL is not valid base64"
