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

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from generalAgent.display import Message, os_error_reason, said_of_error
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
    found = TurnImages()
    for shown in paths:
        if vision and limits.max_images is not None and len(found.refs) >= limits.max_images:
            why = limits.over_request(len(found.refs) + 1, 0)
            assert why is not None  # the count alone is over
            found.unread.append((shown, why))
            found.lines.append(f"[image: {shown} not attached: {why.english()}]")
            continue
        try:
            data = (root / shown).read_bytes()
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
