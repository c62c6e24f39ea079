"""Images in the chat through the real CLI: image parts for a vision model, sent in their turn
only; OCR text (or a clear line) for a text-only model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import ImageRules, Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e


def make_chart(path: Path, size: tuple[int, int] = (3000, 1500)) -> Path:
    """A wide bar chart with a title, larger than any provider's side limit."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    for i, height in enumerate((300, 700, 1100)):
        draw.rectangle(
            (300 + i * 800, size[1] - 100 - height, 700 + i * 800, size[1] - 100), fill=(40, 90, 200)
        )
    draw.text((100, 50), "Revenue 2024", fill="black", font_size=120)
    image.save(path)
    return path


@pytest.fixture
def vision_server() -> ScriptedOpenAIServer:
    with ScriptedOpenAIServer(model="qwen2.5-vl-7b-instruct", images=ImageRules()) as server:
        yield server


def test_a_vision_model_gets_one_image_part_in_its_turn_and_a_placeholder_after(
    vision_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    make_chart(workdir / "chart.png")
    env = {**cli_env, "OPENAI_BASE_URL": vision_server.base_url, "MODEL_NAME": "qwen2.5-vl-7b-instruct"}
    vision_server.add(
        Reply(tool_calls=[ToolCall("now", {})]),
        Reply(text="三根柱子逐年升高。"),
        Reply(text="收入逐年增长。"),
    )
    first = run_cli(["-p", "这张图说明了什么 #chart.png"], env, workdir)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "三根柱子逐年升高。"
    assert vision_server.refusals == []
    turn = vision_server.chat_requests
    assert len(turn) == 2  # a tool call, then the answer: the image stays for the whole turn
    for request in turn:
        images = request.image_parts
        assert len(images) == 1
        image = images[0]
        assert image.role == "user" and request.messages[image.message]["content"][0]["type"] == "text"
        assert image.format in ("PNG", "JPEG") and max(image.width, image.height) == 2048
        assert (image.width, image.height) == (2048, 1024)  # the 3000 x 1500 chart, scaled to fit

    second = run_cli(["-p", "用一句话总结", "--resume"], env, workdir)
    assert second.returncode == 0, second.stderr
    later = vision_server.chat_requests[-1]
    assert later.image_parts == []  # never re-sent
    earlier_question = next(m for m in later.messages if m["role"] == "user")
    assert isinstance(earlier_question["content"], str)
    assert "这张图说明了什么 #chart.png" in earlier_question["content"]
    assert "[image: uploads/chart.png (2048×1024)" in earlier_question["content"]
    stored = list((Path(env["DATA_DIR"]) / "workspaces").glob("*/.images/*"))
    assert len(stored) == 1  # stored once, by hash


def test_a_text_only_model_gets_the_text_ocr_reads_and_a_line_saying_so(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    make_chart(workdir / "chart.png", (1200, 600))
    openai_server.add(Reply(text="图里写着 Revenue 2024。"))
    result = run_cli(["-p", "这张图说明了什么 #chart.png"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert openai_server.refusals == []  # the text-only endpoint refuses image parts: none was sent
    request = openai_server.chat_requests[0]
    assert request.image_parts == []
    question = request.messages[-1]["content"]
    assert "[image: uploads/chart.png; this model does not take images" in question
    assert "Revenue" in question  # what OCR read
    assert "does not take images" in result.stderr  # the user is told too
