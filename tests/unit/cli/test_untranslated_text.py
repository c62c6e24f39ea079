"""No English sentence reaches the terminal without the catalog.

test_i18n.py fails on a marked message without a Chinese translation; this test fails on
the message nobody marked: a literal English phrase printed, asked, raised as a check or a
table cell by the front end without `_()`. And the built-in tools' descriptions, which the
terminal shows in /tools and the Tab menu, must all be in the catalog's list.
"""

from __future__ import annotations

import ast
import re

import yaml

from generalAgent.agent.tool_descriptions import TOOL_DESCRIPTIONS, shown_description
from generalAgent.config.paths import PACKAGE_DIR
from generalAgent.i18n import use_language

# Calls whose text a person reads.
SHOWN = {"print", "input", "echo", "Text", "Check", "_fail", "Panel", "add_row", "Exit"}
# Two English words in a row, once rich markup is taken out.
PHRASE = re.compile(r"[A-Za-z]{2,}[^\[\]]*\s+[A-Za-z]{2,}")
MARKUP = re.compile(r"\[/?[a-z ]*\]")


def literal_text(node: ast.AST) -> str | None:
    """The literal part of a string argument: a constant, an f-string's text, a sum of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return (literal_text(node.left) or "") + (literal_text(node.right) or "")
    return None


def test_the_front_end_shows_no_unmarked_english_phrase() -> None:
    unmarked = []
    for path in sorted((PACKAGE_DIR / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", "")
            if name not in SHOWN:
                continue
            for argument in node.args:
                text = literal_text(argument)
                if text and PHRASE.search(MARKUP.sub("", text)):
                    unmarked.append(f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}: {text[:70]!r}")
    assert unmarked == [], "wrap these in _() and run make i18n"


def test_every_built_in_tool_description_is_in_the_catalog_list() -> None:
    tiers = yaml.safe_load((PACKAGE_DIR / "config" / "tools.yaml").read_text(encoding="utf-8"))
    found: dict[str, str] = {}

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, dict) and "description" in value:
                    found[key] = value["description"].strip()
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(tiers)
    assert found == TOOL_DESCRIPTIONS, "list the new or changed description in agent/tool_descriptions.py"


def test_tool_descriptions_are_shown_in_chinese_and_others_as_given() -> None:
    use_language("zh")
    try:
        shown = shown_description(TOOL_DESCRIPTIONS["read_file"])
        assert shown != TOOL_DESCRIPTIONS["read_file"] and "文件" in shown
        assert shown_description("A tool of an MCP server.") == "A tool of an MCP server."
    finally:
        use_language("en")
