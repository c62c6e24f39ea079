"""YAML front matter of Markdown files (SKILL.md, agent profiles, knowledge notes)."""

from __future__ import annotations

from typing import Any

import yaml


class FrontMatterError(ValueError):
    """The front matter is missing or not a YAML mapping; the message says which."""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(metadata, body) of a Markdown text that starts with a `---` delimited YAML block."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError("no front matter (the file must start with a line '---')")
    for end in range(1, len(lines)):
        if lines[end].strip() in {"---", "..."}:
            break
    else:
        raise FrontMatterError("front matter is not closed by a line '---'")
    try:
        data = yaml.safe_load("".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise FrontMatterError(
            f"front matter is not valid YAML: {' '.join(str(exc).split())[:160]}"
        ) from None
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a mapping of keys to values")
    return data, "".join(lines[end + 1 :]).lstrip("\n")
