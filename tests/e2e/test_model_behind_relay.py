"""A known model behind a relay keeps what it is: its window and its images.

Relays and proxies (an address of their own in OPENAI_BASE_URL) speak the generic dialect,
and gpt-4.1-mini there was taken for an unknown model: a 128k window and images sent as OCR
text, with a line that named only OCR, never MODEL_VISION. The provider tables are now
looked up by the model's name whatever the address; an unknown model gets a line naming
MODEL_VISION and MODEL_CONTEXT_WINDOW.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.images import make_chart
from tests.support.openai_server import ImageRules, Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def relay() -> ScriptedOpenAIServer:
    with ScriptedOpenAIServer(model="gpt-4.1-mini", images=ImageRules()) as server:
        yield server


def test_gpt_4_1_mini_behind_a_relay_gets_its_window_and_images(
    relay: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    env = {**cli_env, "OPENAI_BASE_URL": relay.base_url, "MODEL_NAME": "gpt-4.1-mini"}
    doctor = run_cli(["doctor", "--offline"], env, workdir)
    shown = " ".join(doctor.stdout.split())
    assert "generic (no known provider at 127.0.0.1" in shown  # the wire dialect stays generic
    assert "context window 1,047,576 tokens (gpt-4.1* in the openai table, by the model's name)" in shown
    assert "images: sent as images" in shown
    make_chart(workdir / "chart.png", (800, 400))
    relay.add(Reply(text="Three rising bars."))
    result = run_cli(["-p", "What does it show? #chart.png"], env, workdir)
    assert result.returncode == 0, result.stderr
    assert len(relay.chat_requests[-1].image_parts) == 1


def test_an_unknown_model_is_told_to_set_model_vision_and_its_window(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    env = {**cli_env, "MODEL_NAME": "acme-chat-7"}
    doctor = run_cli(["doctor", "--offline"], env, workdir)
    shown = " ".join(doctor.stdout.split())
    assert "set MODEL_CONTEXT_WINDOW to the model's" in shown
    assert "an unknown model: MODEL_VISION=on if it takes images" in shown
    make_chart(workdir / "chart.png", (400, 200))
    openai_server.add(Reply(text="A chart."))
    result = run_cli(["-p", "What does it show? #chart.png"], env, workdir)
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "acme-chat-7 is a model generalAgent does not know" in said, said
    assert "MODEL_VISION=on" in said and "MODEL_CONTEXT_WINDOW" in said


def test_a_cmyk_jpeg_and_a_float_tiff_are_sent_not_the_end_of_the_chat(
    relay: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    # Both ended the chat: "OSError: cannot write mode CMYK as PNG" (and mode F).
    import numpy
    from PIL import Image

    Image.new("CMYK", (300, 200), (0, 255, 255, 0)).save(workdir / "print.jpg", "JPEG")
    ramp = numpy.linspace(0.0, 1.0, 200 * 100, dtype="float32").reshape(100, 200)
    Image.fromarray(ramp, mode="F").save(workdir / "depth.tif", "TIFF")
    env = {**cli_env, "OPENAI_BASE_URL": relay.base_url, "MODEL_NAME": "gpt-4.1-mini"}
    relay.add(Reply(text="A red print and a grey ramp."))
    result = run_cli(["-p", "Describe #print.jpg #depth.tif"], env, workdir)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "cannot write mode" not in result.stderr
    sent = relay.chat_requests[-1].image_parts
    assert [(image.width, image.height) for image in sent] == [(300, 200), (200, 100)]
