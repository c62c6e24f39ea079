"""YAML front matter of Markdown files (SKILL.md, agent profiles, knowledge notes)."""

from __future__ import annotations

from typing import Any

import yaml


def N_(message: str) -> str:
    """Marks a message for the catalog (babel's keyword), as display.N_ does: this module
    sits beside display.py in the import layers and may not import it."""
    return message


class FrontMatterError(ValueError):
    """The front matter is missing or not a YAML mapping; the message says which.

    Its `template` (N_-marked) and `fields` are kept as data, so the loaders can say it in
    the UI language (display.said_of_error makes a Message of them)."""

    def __init__(self, template: str, **fields: str) -> None:
        super().__init__(template.format(**fields) if fields else template)
        self.template = template
        self.fields = fields


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(metadata, body) of a Markdown text that starts with a `---` delimited YAML block."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError(N_("no front matter (the file must start with a line '---')"))
    for end in range(1, len(lines)):
        if lines[end].strip() in {"---", "..."}:
            break
    else:
        raise FrontMatterError(N_("front matter is not closed by a line '---'"))
    try:
        data = yaml.safe_load("".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise FrontMatterError(
            N_("front matter is not valid YAML: {problem}"), problem=" ".join(str(exc).split())[:160]
        ) from None
    if not isinstance(data, dict):
        raise FrontMatterError(N_("front matter must be a mapping of keys to values"))
    return data, "".join(lines[end + 1 :]).lstrip("\n")
