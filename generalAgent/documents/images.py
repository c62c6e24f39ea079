"""Images for a model's eyes: decoded, turned upright, scaled and re-encoded to a provider's limits.

Providers take images as `image_url` parts holding a base64 data URL, each within its own
limits (formats, bytes per image, pixels; docs/documents.md has the table). A phone photo
of 12 MP and 5 MB would be refused by some and cost thousands of tokens at all of them, so
every image is prepared once: the first frame, rotated as its EXIF says, scaled to fit the
longest side and pixel count allowed, then PNG when it is small enough (screenshots keep
their crisp text) else JPEG at falling quality until it fits the byte limit.

For a model that takes no images, `recognise_image` gives the text OCR reads in it.
"""

from __future__ import annotations

import hashlib
import io
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from generalAgent.config.install import install_hint
from generalAgent.display import N_, Message, carrying

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff", ".heic"})
# A decoded image larger than this is refused before it is decoded (a "pixel bomb":
# a small PNG that inflates to gigabytes). 100 MP is beyond any camera a user attaches.
MAX_SOURCE_PIXELS = 100_000_000
_JPEG_QUALITIES = (85, 75, 60)
# Prepared images live in the session's workspace, named by hash (`store_image`).
IMAGES_DIR = ".images"
# Where a message keeps its images: additional_kwargs of the user message that brought
# them, the artifact of a tool answer that showed them (graph/images.py sends them).
IMAGES_KEY = "images"


class ImageError(Exception):
    """An image that cannot be prepared; the message says why, for the user."""


def image_error(template: str, **fields: object) -> ImageError:
    """An ImageError in English whose sentence is kept as data (`said`) for the UI language."""
    return carrying(ImageError, Message(template, {name: str(value) for name, value in fields.items()}))


@dataclass(frozen=True)
class ImageLimits:
    """What a provider accepts of one image and of one request's images, from its
    documentation (each provider module cites the page; docs/documents.md has the table)."""

    max_side: int = 2_048  # longest side, pixels
    max_pixels: int = 2_048 * 2_048
    max_bytes: int = 5 * 1024 * 1024  # of the base64 data URL, as it travels
    formats: tuple[str, ...] = ("png", "jpeg")  # what we may send (subtypes of image/)
    # Image parts in one request, and the data URLs of all of them together, where the
    # provider documents a limit (None: none documented; the per-image limits still hold).
    max_images: int | None = None
    max_request_bytes: int | None = None

    def over_request(self, images: int, url_bytes: int) -> Message | None:
        """Why one more image, making `images` images of `url_bytes` in all, cannot go in
        the same request (English for the model, the UI language for a person); None when it can."""
        if self.max_images is not None and images > self.max_images:
            return Message(
                N_("the model takes at most {count} images in one request"), {"count": str(self.max_images)}
            )
        if self.max_request_bytes is not None and url_bytes > self.max_request_bytes:
            return Message(
                N_("the model takes at most {size} MB of images in one request"),
                {"size": str(self.max_request_bytes // (1024 * 1024))},
            )
        return None


@dataclass(frozen=True)
class PreparedImage:
    data: bytes
    mime: str  # image/png or image/jpeg
    width: int
    height: int
    original_width: int
    original_height: int


def prepare_image(data: bytes, limits: ImageLimits) -> PreparedImage:
    """`data` (any format Pillow reads) as an image within `limits`; `ImageError` if unreadable."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # the size is checked just below, against our own limit
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(data))
        with opened:
            width, height = opened.size
            if width * height > MAX_SOURCE_PIXELS:
                raise image_error(
                    N_("the image is {width}×{height} pixels, more than {limit} MP"),
                    width=width,
                    height=height,
                    limit=MAX_SOURCE_PIXELS // 1_000_000,
                )
            opened.seek(0)  # the first frame of a GIF or a multi-page TIFF
            image = ImageOps.exif_transpose(opened)
            image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise image_error(N_("not an image Pillow can read ({kind})"), kind=type(exc).__name__) from None
    image = _displayable(image)
    width, height = image.size
    scale = min(1.0, limits.max_side / max(width, height), math.sqrt(limits.max_pixels / (width * height)))
    transparent = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    while True:
        size = (max(1, int(width * scale)), max(1, int(height * scale)))
        scaled = image.resize(size, Image.Resampling.LANCZOS) if size != image.size else image
        for mime, encoded in _encodings(scaled, limits, transparent):
            if data_url_bytes(encoded) <= limits.max_bytes:
                return PreparedImage(encoded, mime, size[0], size[1], width, height)
        if max(size) <= 64:
            raise image_error(N_("the image cannot be made small enough for the model"))
        scale *= 0.75


# Modes PNG and JPEG take as they are (P keeps its palette and transparency for PNG).
_ENCODABLE_MODES = frozenset({"RGB", "RGBA", "L", "LA", "P"})


def _displayable(image: Any) -> Any:
    """`image` in a mode PNG can hold: a CMYK or YCbCr JPEG and a LAB or HSV image as RGB, a
    16-bit or float TIFF stretched from its own range to 8-bit grey, a 1-bit one as grey.
    Encoding any other mode raised ("cannot write mode CMYK as PNG") and ended the chat."""
    if image.mode in _ENCODABLE_MODES:
        return image
    if image.mode == "1":
        return image.convert("L")
    if image.mode == "F" or image.mode.startswith("I"):
        values = image.convert("F")
        low, high = values.getextrema()
        if not (high > low):  # flat, or NaN: one grey
            return values.point(lambda _v: 0).convert("L")
        scale = 255.0 / (high - low)
        return values.point(lambda v: (v - low) * scale).convert("L")
    return image.convert("RGB")


def _encodings(image: Any, limits: ImageLimits, transparent: bool) -> Iterator[tuple[str, bytes]]:
    """(mime, bytes) candidates in order of preference: PNG, then JPEG at falling quality."""
    if "png" in limits.formats:
        out = io.BytesIO()
        image.save(out, "PNG", optimize=False, compress_level=6)
        yield "image/png", out.getvalue()
    if "jpeg" in limits.formats:
        flat = image
        if transparent or image.mode not in ("RGB", "L"):
            rgba = image.convert("RGBA")
            flat = _on_white(rgba)
        for quality in _JPEG_QUALITIES:
            out = io.BytesIO()
            flat.save(out, "JPEG", quality=quality, optimize=True)
            yield "image/jpeg", out.getvalue()


def _on_white(image: Any) -> Any:
    from PIL import Image

    background = Image.new("RGB", image.size, (255, 255, 255))
    background.paste(image, mask=image.getchannel("A"))
    return background


def data_url_bytes(data: bytes) -> int:
    return 4 * math.ceil(len(data) / 3) + len("data:image/jpeg;base64,")


def data_url(image: PreparedImage | tuple[str, bytes]) -> str:
    import base64

    mime, data = (image.mime, image.data) if isinstance(image, PreparedImage) else image
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


class ImageRef(TypedDict):
    path: str  # what the user or tool named: uploads/chart.png, uploads/report.pdf page 12
    file: str  # the prepared image, relative to the workspace root: .images/<hash>.png
    mime: str
    width: int
    height: int


def store_image(root: Path, data: bytes, limits: ImageLimits, shown_as: str) -> ImageRef:
    """The image `data` prepared to `limits` and stored under the workspace `root` once;
    `ImageError` when it cannot be read."""
    key = hashlib.sha256(data + repr(limits).encode()).hexdigest()[:32]
    folder = root / IMAGES_DIR
    for existing in folder.glob(f"{key}-*"):
        width, height, mime = _described(existing.name)
        return ImageRef(
            path=shown_as, file=f"{IMAGES_DIR}/{existing.name}", mime=mime, width=width, height=height
        )
    prepared: PreparedImage = prepare_image(data, limits)
    folder.mkdir(parents=True, exist_ok=True)
    suffix = "png" if prepared.mime == "image/png" else "jpg"
    name = f"{key}-{prepared.width}x{prepared.height}.{suffix}"
    partial = folder / f".{name}.part"
    partial.write_bytes(prepared.data)
    partial.replace(folder / name)  # never a half-written image under its real name
    return ImageRef(
        path=shown_as,
        file=f"{IMAGES_DIR}/{name}",
        mime=prepared.mime,
        width=prepared.width,
        height=prepared.height,
    )


def _described(name: str) -> tuple[int, int, str]:
    stem, _, suffix = name.rpartition(".")
    width, _, height = stem.rpartition("-")[2].partition("x")
    return int(width), int(height), "image/png" if suffix == "png" else "image/jpeg"


def placeholder(ref: ImageRef) -> str:
    """The line that stands for an image in the stored history."""
    return (
        f"[image: {ref['path']} ({ref['width']}×{ref['height']}); shown to the model in the turn it was "
        "attached, a placeholder since]"
    )


def recognise_image(data: bytes) -> str:
    """The text OCR reads in an image (documents/ocr.py's engine); `OcrUnavailable` when
    OCR is not installed, `ImageError` when the image cannot be read."""
    import numpy

    from generalAgent.documents.ocr import (
        ENGINE,
        OcrFailed,
        OcrUnavailable,
        lines_in_reading_order,
        ocr_installed,
    )

    if not ocr_installed():
        raise carrying(
            OcrUnavailable, Message(N_("OCR is not installed: {install}"), {"install": install_hint("ocr")})
        )

    prepared = prepare_image(data, ImageLimits(max_side=2_500, max_pixels=4_000_000, max_bytes=1 << 40))
    from PIL import Image

    with Image.open(io.BytesIO(prepared.data)) as image:
        pixels = numpy.asarray(image.convert("L"))
    try:
        return lines_in_reading_order(ENGINE.read(pixels))
    except OcrFailed as exc:  # the engine's process died: the image stays unread, the turn goes on
        raise image_error(N_("OCR failed: {problem}"), problem=str(exc)) from None
