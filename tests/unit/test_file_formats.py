"""The configuration files' models (file_formats.py): the line an error names, the message in
the UI language, and the shipped JSON schemas and docs tables held to the models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.file_formats import json_line, yaml_line
from generalAgent.hooks import parse_hooks
from generalAgent.i18n import use_language
from generalAgent.tools.config_schemas import DOCS_TABLES, SCHEMA_FILES, SCHEMAS, out_of_date, schema_of
from generalAgent.tools.mcp.config import parse_server
from generalAgent.tools.registry import ToolConfigError, parse_tools_yaml

KEYS = st.text(alphabet='abc"\\é中 ', min_size=1, max_size=4)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab":,{}[]\\\n', max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=12,
)


def paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found: list[tuple[str | int, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        found.append((*prefix, key))
        found += paths(inner, (*prefix, key))
    return found


@settings(max_examples=200, deadline=None)
@given(JSON.filter(lambda v: isinstance(v, dict)), st.sampled_from([None, 2]))
def test_json_line_finds_every_key_of_any_document(document: dict[str, Any], indent: int | None) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    lines = text.splitlines()
    for path in paths(document):
        line = json_line(text, path)
        assert line is not None
        if indent and isinstance(path[-1], str):
            # Pretty-printed, every key starts its own line.
            assert lines[line - 1].strip().startswith(json.dumps(path[-1], ensure_ascii=False) + ":")


def test_json_and_yaml_lines_stop_at_the_deepest_key_found() -> None:
    text = '{\n  "mcpServers": {\n    "a": {"command": "x"},\n    "b": {\n      "timeout": 0\n    }\n  }\n}'
    assert json_line(text, ("mcpServers", "b", "timeout")) == 5
    assert json_line(text, ("mcpServers", "b", "missing")) == 4
    assert json_line("{not json", ("a",)) is None
    assert yaml_line("core:\n  now:\n    risk: x\n", ("core", "now", "risk")) == 3
    assert yaml_line("core:\n  now:\n", ("core", "later")) == 1


def test_an_mcp_entry_error_names_file_line_key_and_what_it_accepts(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    entry = {"command": "python", "args": ["s.py"], "timeout": "2m"}
    path.write_text(json.dumps({"mcpServers": {"other": {"command": "y"}, "notes": entry}}, indent=2))
    server = parse_server("notes", entry, path, {})
    assert server.problem == (
        "mcp.json, line 11: mcpServers / notes: 'timeout' must be a number of seconds between 0 and 3600, not '2m'"
    )


def test_a_hook_error_names_its_line_and_costs_that_hook_alone(tmp_path: Path) -> None:
    data = {
        "hooks": {
            "Stop": [
                {"hooks": [{"command": "ok"}, {"command": "late", "timeout": "soon"}, {"command": "also ok"}]}
            ]
        }
    }
    text = json.dumps(data, indent=2)
    hooks, problems = parse_hooks(data, tmp_path / "settings.json", user_level=True, text=text)
    assert [hook.command for hook in hooks] == ["ok", "also ok"]
    said = problems[0].english()
    line = next(n for n, text_line in enumerate(text.splitlines(), 1) if '"soon"' in text_line)
    assert f"settings.json, line {line}: " in said
    assert "hooks / Stop / hooks: 'timeout' must be a number of seconds above 0, not 'soon'" in said


def test_a_tools_yaml_error_is_said_in_chinese(tmp_path: Path) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text("core:\n  now:\n    description: x\n    risk: extreme\n", encoding="utf-8")
    use_language("zh")
    try:
        with pytest.raises(ToolConfigError) as caught:
            parse_tools_yaml(path)
    finally:
        use_language("en")
    assert (
        str(caught.value)
        == "tools.yaml 第 4 行：core / now: 'risk' 必须是low、medium、high 之一，而不是 'extreme'"
    )


def test_shipped_schemas_and_docs_tables_are_those_of_the_models() -> None:
    assert out_of_date() == [], "run python -m generalAgent.tools.config_schemas"
    for name, model in SCHEMA_FILES.items():
        assert json.loads((SCHEMAS / name).read_text(encoding="utf-8")) == schema_of(model)
    assert set(DOCS_TABLES) <= {p.name for p in (Path(__file__).parents[2] / "docs").glob("*.md")}


def test_a_changed_model_makes_the_docs_out_of_date(tmp_path: Path) -> None:
    docs, schemas = tmp_path / "docs", tmp_path / "schemas"
    docs.mkdir()
    real = Path(__file__).parents[2] / "docs"
    for page in DOCS_TABLES:
        text = (real / page).read_text(encoding="utf-8")
        (docs / page).write_text(
            text.replace("| `trust` | true or false |", "| `trust` | yes |"), encoding="utf-8"
        )
    assert "docs/mcp.md" in out_of_date(docs, schemas)
