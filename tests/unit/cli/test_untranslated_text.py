"""No English sentence reaches the terminal without the catalog.

test_i18n.py fails on a marked message without a Chinese translation; this test fails on
the message nobody marked: a literal English phrase printed, asked, raised as a check or a
table cell by the front end without `_()`. And the built-in tools' descriptions, which the
terminal shows in /tools and the Tab menu, must all reach the catalog from tools.yaml itself.
"""

from __future__ import annotations

import ast
import gettext
import io
import re

from generalAgent.config.paths import PACKAGE_DIR
from generalAgent.i18n import LOCALE_DIR, use_language
from generalAgent.tools.registry import ToolSpec, parse_tools_yaml
from generalAgent.tools.tools_file import extract_descriptions

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


def test_every_built_in_tool_description_is_extracted_from_tools_yaml_and_translated() -> None:
    tools_yaml = PACKAGE_DIR / "config" / "tools.yaml"
    specs = parse_tools_yaml(tools_yaml)
    extracted = [
        message for _, _, message, _ in extract_descriptions(io.BytesIO(tools_yaml.read_bytes()), (), (), {})
    ]
    assert extracted == [spec.description for spec in specs]
    chinese = gettext.translation("generalagent", LOCALE_DIR, languages=["zh_CN"])
    untranslated = [text for text in extracted if chinese.gettext(text) == text]
    assert not untranslated, "run make i18n and translate these tools.yaml descriptions"


def test_tool_descriptions_are_shown_in_chinese_and_others_as_given() -> None:
    read_file = next(
        spec for spec in parse_tools_yaml(PACKAGE_DIR / "config" / "tools.yaml") if spec.name == "read_file"
    )
    own = ToolSpec(name="mine", tier="core", description="A tool of my own tools.yaml.")
    use_language("zh")
    try:
        assert read_file.shown_description != read_file.description and "文件" in read_file.shown_description
        assert own.shown_description == "A tool of my own tools.yaml."
    finally:
        use_language("en")
