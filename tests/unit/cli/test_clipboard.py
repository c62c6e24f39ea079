"""The clipboard read for /paste and Ctrl-V, through Pillow's ImageGrab and a fake xclip."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from generalAgent.cli.clipboard import read_clipboard
from tests.support.clipboard import fake_xclip


@pytest.fixture
def screenshot(tmp_path: Path) -> Path:
    path = tmp_path / "shot.png"
    Image.new("RGB", (640, 480), (200, 30, 30)).save(path)
    return path


def use(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    for key in ("DISPLAY", "PATH"):
        monkeypatch.setenv(key, env[key])


def test_an_image_is_saved_once_by_its_content(
    tmp_path: Path, screenshot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, fake_xclip(tmp_path / "bin", "image", screenshot))
    first = read_clipboard(tmp_path)
    second = read_clipboard(tmp_path)
    assert first.problem == "" and first.image is not None
    assert first.image == second.image and first.image.name.startswith("clipboard-")
    with Image.open(first.image) as image:
        assert (image.format, image.size) == ("PNG", (640, 480))


@pytest.mark.parametrize(
    ("mode", "said"),
    [("empty", "There is no image on the clipboard."), ("broken", "could not be read: xclip error")],
)
def test_no_image_is_one_line_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, said: str
) -> None:
    use(monkeypatch, fake_xclip(tmp_path / "bin", mode))
    found = read_clipboard(tmp_path / "bin")
    assert said in found.problem and found.image is None and found.files == []


def test_a_clipboard_that_never_answers_is_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use(monkeypatch, fake_xclip(tmp_path / "bin", "hang"))
    found = read_clipboard(tmp_path, seconds=0.5)
    assert "did not answer in 0.5 s" in found.problem


def test_without_a_clipboard_tool_it_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert "install wl-clipboard or xclip" in read_clipboard(tmp_path).problem


def test_a_huge_image_is_refused_before_it_is_encoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("generalAgent.cli.clipboard.MAX_PIXELS", 100)
    big = tmp_path / "big.png"
    Image.new("RGB", (20, 20)).save(big)
    use(monkeypatch, fake_xclip(tmp_path / "bin", "image", big))
    found = read_clipboard(tmp_path)
    assert "too large (20×20 pixels)" in found.problem and not list(tmp_path.glob("clipboard-*"))
