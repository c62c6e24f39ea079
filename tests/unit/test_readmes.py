"""README.md and README.zh-CN.md say the same things: the same commands, options and settings.

A translation that falls behind is worse than none: a reader of the Chinese README would
miss a command or use a setting that is gone. What a user types is compared, not prose.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = ("README.md", "README.zh-CN.md")

TYPED = {
    # MODEL_NAME, OPENAI_API_KEY, …: every setting has an underscore
    "settings": re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"),
    # /retry, /usage (not the /v1 of a URL or the /usage.md of a link)
    "slash commands": re.compile(r"(?:^|[\s`(（])(/[a-z]+)\b(?![./])", re.MULTILINE),
    # --resume, --output-format, -p, -c
    "options": re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)(?![\w.])"),
    # generalagent doctor, generalagent config init, make run
    "commands": re.compile(r"\b((?:generalagent|make) [a-z][a-z-]*(?: [a-z]+)?)\b"),
}


def typed(name: str, kind: str) -> set[str]:
    text = (ROOT / name).read_text(encoding="utf-8")
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets are paths, not things to type
    return set(TYPED[kind].findall(text))


@pytest.mark.parametrize("kind", sorted(TYPED))
def test_both_readmes_name_the_same(kind: str) -> None:
    english, chinese = (typed(name, kind) for name in READMES)
    assert english, f"nothing of kind {kind} found: the pattern is wrong"
    assert english - chinese == set(), f"README.zh-CN.md lacks these {kind}"
    assert chinese - english == set(), f"README.md lacks these {kind}"


def test_the_readmes_link_to_each_other() -> None:
    assert "(README.zh-CN.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(README.md)" in (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
