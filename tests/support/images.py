"""Images the tests attach: a chart larger than any provider's side limit."""

from __future__ import annotations

from pathlib import Path


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
