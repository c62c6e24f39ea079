"""/paste and Ctrl-V in the real chat: the clipboard's screenshot reaches a vision model as one
image part of the next message (the clipboard is a fake xclip the test controls)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from tests.support.clipboard import fake_xclip
from tests.support.openai_server import ImageRules, Reply, ScriptedOpenAIServer
from tests.support.terminal import ask, expect_prompt

pytestmark = pytest.mark.e2e
VISION_MODEL = "qwen2.5-vl-7b-instruct"


@pytest.fixture
def vision_server() -> ScriptedOpenAIServer:
    with ScriptedOpenAIServer(model=VISION_MODEL, images=ImageRules()) as server:
        yield server


def chat_env(
    cli_env: dict[str, str], server: ScriptedOpenAIServer, clipboard: dict[str, str]
) -> dict[str, str]:
    return {
        **cli_env,
        "OPENAI_BASE_URL": server.base_url,
        "MODEL_NAME": VISION_MODEL,
        "DISPLAY": clipboard["DISPLAY"],
        "PATH": clipboard["PATH"],
    }


def test_paste_then_a_question_sends_the_screenshot_once(
    vision_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], tmp_path: Path
) -> None:
    shot = tmp_path / "shot.png"
    Image.new("RGB", (800, 600), (20, 120, 220)).save(shot)
    env = chat_env(cli_env, vision_server, fake_xclip(tmp_path / "bin", "image", shot))
    vision_server.add(Reply(text="一张蓝色的截图。"), Reply(text="好的。"))
    child = spawn_chat(env=env)
    expect_prompt(child)
    assert "📎 uploads/clipboard-" in ask(child, "/paste", "clipboard-[0-9a-f]+\\.png")
    expect_prompt(child)
    assert "一张蓝色的截图。" in ask(child, "这张图说明了什么", "一张蓝色的截图。")
    expect_prompt(child)
    ask(child, "谢谢", "好的。")
    expect_prompt(child)
    child.sendline("/quit")
    child.expect_exact(["\r\n", "$"])
    first, second = vision_server.chat_requests
    assert vision_server.refusals == []
    assert len(first.image_parts) == 1
    image = first.image_parts[0]
    assert (image.format, image.width, image.height) == ("PNG", 800, 600)
    assert first.messages[image.message]["role"] == "user"
    assert second.image_parts == []  # a placeholder from then on


def test_ctrl_v_attaches_and_an_empty_clipboard_says_so(
    vision_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], tmp_path: Path
) -> None:
    shot = tmp_path / "shot.png"
    Image.new("RGB", (300, 200), "white").save(shot)
    env = chat_env(cli_env, vision_server, fake_xclip(tmp_path / "bin", "image", shot))
    child = spawn_chat(env=env)
    expect_prompt(child)
    child.send("\x16")  # Ctrl-V
    child.expect("clipboard-[0-9a-f]+\\.png")

    empty = chat_env(cli_env, vision_server, fake_xclip(tmp_path / "empty-bin", "empty"))
    other = spawn_chat(env=empty)
    expect_prompt(other)
    ask(other, "/paste", "There is no image on the clipboard.")
    expect_prompt(other)
    assert vision_server.chat_requests == []  # a paste sends nothing by itself
