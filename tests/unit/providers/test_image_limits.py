"""Each provider's image limits as its documentation states them: our dialects stay within
them, an over-limit image is shrunk before it is sent, and images past a request's count
are left out with a line saying why, so the provider (here the test server holding the
documented limits) never refuses a request for its images."""

from __future__ import annotations

import io
import os
from pathlib import Path

import openai
import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from generalAgent.documents.images import IMAGES_KEY, prepare_image
from generalAgent.graph.images import turn_images, with_turn_images
from generalAgent.providers.detection import DIALECTS
from tests.support.openai_server import DOCUMENTED_IMAGE_RULES, ImageRules, ScriptedOpenAIServer, SentImage


def noise_png(width: int, height: int) -> bytes:
    """A PNG that compresses to nothing: its size is what its pixels make it."""
    from PIL import Image

    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(out, "PNG", compress_level=1)
    return out.getvalue()


@pytest.mark.parametrize("provider", sorted(DOCUMENTED_IMAGE_RULES))
def test_every_dialect_asks_for_no_more_than_its_provider_documents(provider: str):
    ours, theirs = DIALECTS[provider].image_limits, DOCUMENTED_IMAGE_RULES[provider]
    assert {f"image/{f}" for f in ours.formats} <= set(theirs.formats)
    # our byte limit is on the data URL, larger than the image it carries
    for documented in (theirs.max_image_bytes, theirs.max_url_bytes):
        assert documented is None or ours.max_bytes <= documented
    assert theirs.max_side is None or ours.max_side <= theirs.max_side
    assert theirs.max_pixels is None or ours.max_pixels <= theirs.max_pixels
    if theirs.max_images is not None:
        assert ours.max_images is not None and ours.max_images <= theirs.max_images
    for documented in (theirs.max_request_bytes, theirs.max_request_image_bytes):
        if documented is not None:
            assert ours.max_request_bytes is not None and ours.max_request_bytes <= documented


@pytest.mark.parametrize("provider", sorted(DOCUMENTED_IMAGE_RULES))
def test_an_over_limit_image_is_shrunk_to_what_the_provider_takes(provider: str):
    import base64

    big = noise_png(6_500, 1_200)  # wider than any provider's side limit, ~23 MB of noise
    assert len(big) > 20_000_000
    prepared = prepare_image(big, DIALECTS[provider].image_limits)
    url = f"data:{prepared.mime};base64,{base64.b64encode(prepared.data).decode()}"
    sent = SentImage.decode(0, "user", {"type": "image_url", "image_url": {"url": url}})
    assert DOCUMENTED_IMAGE_RULES[provider].problems(sent) == []
    assert (prepared.original_width, prepared.original_height) == (6_500, 1_200)


def test_images_past_the_count_are_left_out_with_the_reason_and_the_request_is_accepted(tmp_path: Path):
    """GLM-4V reads at most 5 images a request: 7 attached make 5 image parts, and the
    other 2 are named in the message the model reads (and to the user, as unread)."""
    from PIL import Image

    limits = DIALECTS["glm"].image_limits
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    paths = []
    for number in range(7):
        Image.new("RGB", (300 + number, 200), (number * 30, 90, 160)).save(uploads / f"p{number}.png")
        paths.append(f"uploads/p{number}.png")
    found = turn_images(paths, tmp_path, True, limits)
    assert len(found.refs) == 5
    assert [(path, why.english()) for path, why in found.unread] == [
        (f"uploads/p{n}.png", "the model takes at most 5 images in one request") for n in (5, 6)
    ]
    assert (
        "[image: uploads/p6.png not attached: the model takes at most 5 images in one request]" in found.lines
    )
    question = HumanMessage(
        content="\n".join(["比较这些图", *found.lines]), additional_kwargs={IMAGES_KEY: found.refs}
    )
    with ScriptedOpenAIServer(model="glm-4.5v", images=DOCUMENTED_IMAGE_RULES["glm"]) as server:
        model = ChatOpenAI(model="glm-4.5v", api_key="sk-test", base_url=server.base_url, max_retries=0)
        model.invoke(with_turn_images([question], tmp_path, limits))
        assert server.refusals == []
        assert len(server.chat_requests[-1].image_parts) == 5
        # the same refs past the count at send time (a tool showed more): left out, said so
        twice = HumanMessage(content="again", additional_kwargs={IMAGES_KEY: found.refs + found.refs})
        sent = with_turn_images([twice], tmp_path, limits)
        notes = [p["text"] for p in sent[0].content if isinstance(p, dict) and p.get("type") == "text"]
        assert sum("not sent: the model takes at most 5 images in one request" in n for n in notes) == 5
        model.invoke(sent)
        assert server.refusals == [] and len(server.chat_requests[-1].image_parts) == 5


def test_the_test_server_refuses_what_the_provider_would(tmp_path: Path):
    """Without our limits, the documented ones bite: six images at GLM's endpoint are a 400."""
    import base64

    url = "data:image/png;base64," + base64.b64encode(noise_png(32, 32)).decode()
    parts = [{"type": "image_url", "image_url": {"url": url}} for _ in range(6)]
    with ScriptedOpenAIServer(model="glm-4.5v", images=DOCUMENTED_IMAGE_RULES["glm"]) as server:
        model = ChatOpenAI(model="glm-4.5v", api_key="sk-test", base_url=server.base_url, max_retries=0)
        with pytest.raises(openai.BadRequestError, match="more than the 5 a request may carry"):
            model.invoke([HumanMessage(content=[{"type": "text", "text": "看"}, *parts])])
    assert ImageRules(max_request_bytes=100).request_problems(
        [SentImage(0, "user", "image/png", "PNG", 1, 1, 80, 60)] * 2
    ) == ["the images' data URLs are over the 100-byte request limit"]
