"""Images for vision models: prepared to a provider's limits, stored once, sent in their turn only."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from generalAgent.config.settings import load_settings
from generalAgent.documents.images import IMAGES_KEY, ImageError, ImageLimits, prepare_image, store_image
from generalAgent.graph.images import image_tokens, with_turn_images
from generalAgent.providers.vision import takes_images


def png(size: tuple[int, int], mode: str = "RGB", noise: bool = False) -> bytes:
    from PIL import Image

    if noise:
        import os

        image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        image = Image.new(mode, size, (200, 30, 30, 128) if mode == "RGBA" else (200, 30, 30))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_a_large_image_is_scaled_to_the_side_and_pixel_limits():
    prepared = prepare_image(png((4000, 1000)), ImageLimits(max_side=2048, max_pixels=1_000_000))
    assert max(prepared.width, prepared.height) <= 2048
    assert prepared.width * prepared.height <= 1_000_000
    assert (prepared.original_width, prepared.original_height) == (4000, 1000)
    assert prepared.mime == "image/png"


def test_an_image_over_the_byte_limit_becomes_a_smaller_jpeg():
    limits = ImageLimits(max_side=1024, max_pixels=1024 * 1024, max_bytes=300_000)
    prepared = prepare_image(png((1024, 1024), noise=True), limits)
    assert prepared.mime == "image/jpeg"
    assert len(prepared.data) * 4 / 3 < 300_000


def test_exif_rotation_is_applied():
    from PIL import Image

    image = Image.new("RGB", (400, 100), "white")
    exif = image.getexif()
    exif[0x0112] = 6  # rotate 90 degrees when shown
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif)
    prepared = prepare_image(out.getvalue(), ImageLimits())
    assert (prepared.width, prepared.height) == (100, 400)


def test_what_is_not_an_image_is_refused_clearly():
    with pytest.raises(ImageError, match="not an image"):
        prepare_image(b"%PDF-1.7 not a picture", ImageLimits())


def test_an_image_is_stored_once_per_source_and_limits(tmp_path: Path):
    data = png((300, 200))
    first = store_image(tmp_path, data, ImageLimits(), "uploads/a.png")
    again = store_image(tmp_path, data, ImageLimits(), "uploads/copy-of-a.png")
    assert first["file"] == again["file"] and again["path"] == "uploads/copy-of-a.png"
    assert len(list((tmp_path / ".images").iterdir())) == 1
    assert (first["width"], first["height"]) == (300, 200)


def test_only_the_current_turn_carries_image_parts(tmp_path: Path):
    ref = store_image(tmp_path, png((64, 64)), ImageLimits(), "uploads/a.png")
    old = HumanMessage(content="look #a.png\n[image: uploads/a.png]", additional_kwargs={IMAGES_KEY: [ref]})
    page = store_image(tmp_path, png((80, 100)), ImageLimits(), "uploads/r.pdf page 2")
    history = [
        old,
        AIMessage(content="a red square"),
        HumanMessage(content="and page 2?"),
        AIMessage(content="", tool_calls=[{"id": "c1", "name": "view_page", "args": {}}]),
        ToolMessage(
            content="page 2 [image]", tool_call_id="c1", name="view_page", artifact={IMAGES_KEY: [page]}
        ),
    ]
    shown = with_turn_images(history, tmp_path)
    assert shown[0] is old and isinstance(shown[0].content, str)  # an earlier turn: the placeholder only
    assert isinstance(shown[4], ToolMessage) and isinstance(shown[4].content, str)
    follow = shown[5]
    assert isinstance(follow, HumanMessage)
    kinds = [part["type"] for part in follow.content]
    assert (
        kinds == ["text", "image_url"]
        and "view_page showed uploads/r.pdf page 2" in follow.content[0]["text"]
    )
    assert image_tokens(history) == 80 * 100 // 784 + 1
    current = with_turn_images(history[:1], tmp_path)[0]
    assert [part["type"] for part in current.content] == ["text", "image_url"]


@pytest.mark.parametrize(
    ("base_url", "model", "vision", "expected"),
    [
        (None, "gpt-4.1-mini", "auto", True),
        (None, "o3-mini", "auto", False),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-vl-max", "auto", True),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus", "auto", False),
        ("https://open.bigmodel.cn/api/paas/v4", "glm-4v-plus", "auto", True),
        ("https://api.moonshot.cn/v1", "moonshot-v1-8k-vision-preview", "auto", True),
        ("https://api.deepseek.com", "deepseek-chat", "auto", False),
        ("http://127.0.0.1:11434/v1", "qwen2.5vl:7b", "auto", True),
        ("https://openrouter.ai/api/v1", "openai/gpt-4o", "auto", True),
        ("http://127.0.0.1:8000/v1", "my-finetune", "auto", False),
        ("http://127.0.0.1:8000/v1", "my-finetune", "on", True),
        (None, "gpt-4.1", "off", False),
    ],
)
def test_the_provider_table_knows_vision_models_and_the_setting_overrides_it(
    base_url, model, vision, expected
):
    settings = load_settings(
        env_file=None, model={"model_name": model, "openai_base_url": base_url, "model_vision": vision}
    )
    assert takes_images(settings.model) is expected


def sent(text: str, *parts: dict) -> HumanMessage:
    return HumanMessage(content=[{"type": "text", "text": text}, *parts], id="m1")


def image_part(data: bytes, name: str = "shot.png") -> dict:
    import base64

    return {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()},
        "name": name,
    }


def test_images_a_served_client_sent_are_stored_as_the_local_chat_stores_them(tmp_path: Path):
    """A --server client's image parts (data URLs in the message) become what an attached
    image becomes locally: stored once in the workspace, a placeholder line in the stored
    message, sent in full in this turn only (with_turn_images)."""
    from generalAgent.graph.images import carries_sent_images, receive_sent_images

    history = [AIMessage(content="earlier"), sent("What is this?", image_part(png((40, 30))))]
    assert carries_sent_images(history)
    received = receive_sent_images(history, tmp_path, True, ImageLimits())
    assert received is not None and not carries_sent_images(received)
    message = received[-1]
    assert message.id == "m1" and isinstance(message.content, str)
    assert message.content.startswith("What is this?\n\n[image: shot.png (40×30)")
    [ref] = message.additional_kwargs[IMAGES_KEY]
    assert (tmp_path / ref["file"]).is_file() and "base64" not in str(message)
    [part] = [p for p in with_turn_images(received, tmp_path)[-1].content if p["type"] == "image_url"]
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    assert receive_sent_images([HumanMessage(content="no image")], tmp_path, True, ImageLimits()) is None


def test_a_text_model_gets_the_line_a_local_chat_gives_and_links_are_not_fetched(tmp_path: Path, monkeypatch):
    import generalAgent.graph.images as images
    from generalAgent.documents.ocr import OcrUnavailable
    from generalAgent.graph.images import MAX_SENT_IMAGES, receive_sent_images

    def no_ocr(data: bytes) -> str:
        raise OcrUnavailable("OCR is not installed")

    monkeypatch.setattr(images, "recognise_image", no_ocr)
    link = {
        "type": "image_url",
        "image_url": {"url": "http://127.0.0.1:9/secret.png"},
        "name": "../../etc/x.png",
    }
    parts = [image_part(png((10, 10)), f"tile-{n}.png") for n in range(MAX_SENT_IMAGES + 1)]
    received = receive_sent_images([sent("Look", link, *parts)], tmp_path, False, ImageLimits())
    assert received is not None
    text = received[-1].content
    assert "[image: tile-0.png; this model does not take images and OCR is not installed" in text
    assert (
        "[image: _.._etc_x.png not attached: only an image sent in the message (a data URL) is read" in text
    )
    last = f"tile-{MAX_SENT_IMAGES}.png"
    assert f"[image: {last} not attached: a message carries at most {MAX_SENT_IMAGES} images]" in text
    assert received[-1].additional_kwargs.get(IMAGES_KEY) == [] and not (tmp_path / ".images").exists()
