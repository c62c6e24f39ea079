"""Images in the chat through the real CLI: image parts for a vision model, sent in their turn
only; OCR text (or a clear line) for a text-only model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.images import make_chart
from tests.support.openai_server import ImageRules, Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e


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

    vision_server.add(Reply(text="好的。"))
    third = run_cli(["-p", "谢谢", "--resume"], env, workdir)
    assert third.returncode == 0, third.stderr
    after = vision_server.chat_requests[-1]
    # From the second turn on the history is byte-identical: the cached prefix only grows.
    # (The system message is not compared: each -p process stamps its own minute at its foot.)
    assert after.messages[1 : len(later.messages) - 1] == later.messages[1:-1]
    assert after.messages[len(later.messages) - 1]["content"].startswith("用一句话总结")


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


def make_report(path: Path, pages: int = 12) -> Path:
    """A PDF of `pages` scanned-like pages; the last holds the chart."""
    from PIL import Image, ImageDraw

    images = []
    for number in range(1, pages + 1):
        page = Image.new("RGB", (850, 1100), "white")
        ImageDraw.Draw(page).text((80, 80), f"Page {number}", fill="black", font_size=48)
        images.append(page)
    chart = make_chart(path.with_suffix(".png"), (850, 1100))
    images[-1] = Image.open(chart).convert("RGB")
    images[0].save(path, save_all=True, append_images=images[1:], resolution=100)
    return path


def test_view_page_shows_a_vision_model_the_page_after_the_tool_answer(
    vision_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    make_report(workdir / "report.pdf")
    env = {**cli_env, "OPENAI_BASE_URL": vision_server.base_url, "MODEL_NAME": "qwen2.5-vl-7b-instruct"}
    vision_server.add(
        Reply(tool_calls=[ToolCall("view_page", {"file_path": "uploads/report.pdf", "page": 12})]),
        Reply(text="第 12 页的图表显示收入逐年增长。"),
        Reply(text="好的。"),
    )
    result = run_cli(["-p", "第 12 页的图表说明了什么 #report.pdf"], env, workdir)
    assert result.returncode == 0, result.stderr
    assert vision_server.refusals == []
    after_tool = vision_server.chat_requests[1]
    images = after_tool.image_parts
    assert len(images) == 1 and images[0].role == "user"
    answer = after_tool.messages[images[0].message - 1]
    assert answer["role"] == "tool" and "uploads/report.pdf page 12 of 12" in answer["content"]
    assert max(images[0].width, images[0].height) <= 2048
    later = run_cli(["-p", "谢谢", "--resume"], env, workdir)
    assert later.returncode == 0, later.stderr
    assert vision_server.chat_requests[-1].image_parts == []


def test_view_page_gives_a_text_only_model_the_ocr_text_of_the_page(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    make_report(workdir / "report.pdf", pages=2)
    openai_server.add(
        Reply(tool_calls=[ToolCall("view_page", {"file_path": "uploads/report.pdf", "page": 2})]),
        Reply(text="图表标题是 Revenue 2024。"),
    )
    result = run_cli(["-p", "第 2 页的图表 #report.pdf"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert openai_server.refusals == []
    answer = openai_server.chat_requests[1].messages[-1]
    assert answer["role"] == "tool"
    assert "this model does not take images; the text OCR read on the page follows" in answer["content"]
    assert "Revenue" in answer["content"]
