"""The configuration files' JSON schemas (for editors) and docs tables, written from their models.

    python -m generalAgent.tools.config_schemas          # rewrite generalAgent/schemas/ and the docs tables
    python -m generalAgent.tools.config_schemas --check  # exit 1 when either is out of date

The schemas ship in the package (`generalAgent/schemas/*.schema.json`): an editor that is
told of one (VS Code's `json.schemas`, the YAML extension's `# yaml-language-server:
$schema=` line) completes keys and marks a wrong value as you type. Each docs table sits
between a `<!-- keys: Model -->` line and `<!-- end keys -->`; tests/unit/test_file_formats.py
fails when a model changed and this was not run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from generalAgent.file_formats import keys_table
from generalAgent.hooks import HookCommand, HookGroup, HookSettings
from generalAgent.tools.mcp.config_file import MCPFile, ServerEntry
from generalAgent.tools.tools_file import OptionalTool, ToolsFile

PACKAGE = Path(__file__).resolve().parents[1]
SCHEMAS = PACKAGE / "schemas"
DOCS = PACKAGE.parent / "docs"
# Each file format: its schema's file name, and the model of the whole file.
SCHEMA_FILES: dict[str, type[BaseModel]] = {
    "tools.schema.json": ToolsFile,
    "mcp.schema.json": MCPFile,
    "settings.schema.json": HookSettings,
}
# The models whose keys docs/ lists, by the page that lists them.
DOCS_TABLES: dict[str, tuple[type[BaseModel], ...]] = {
    "configuration.md": (ToolsFile, OptionalTool),
    "mcp.md": (ServerEntry, MCPFile),
    "usage.md": (HookSettings, HookGroup, HookCommand),
}
_BLOCK = re.compile(r"(<!-- keys: (\w+) -->\n)(.*?)(<!-- end keys -->)", re.DOTALL)


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema editors read: pydantic's, by the keys as written in the file."""
    schema = model.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def schema_text(model: type[BaseModel]) -> str:
    return json.dumps(schema_of(model), indent=2, ensure_ascii=False) + "\n"


def with_tables(page: str, models: tuple[type[BaseModel], ...]) -> str:
    """`page` with each `<!-- keys: Model -->` block holding that model's table now."""
    by_name = {model.__name__: model for model in models}

    def table(match: re.Match[str]) -> str:
        model = by_name.get(match.group(2))
        if model is None:
            return match.group(0)
        return match.group(1) + keys_table(model) + match.group(4)

    return _BLOCK.sub(table, page)


def out_of_date(docs: Path = DOCS, schemas: Path = SCHEMAS) -> list[str]:
    """The schema files and docs pages that differ from what the models say now."""
    stale = [name for name, model in SCHEMA_FILES.items() if _read(schemas / name) != schema_text(model)]
    for page, models in DOCS_TABLES.items():
        text = _read(docs / page)
        if text is not None and with_tables(text, models) != text:
            stale.append(f"docs/{page}")
    return stale


def write_all(docs: Path = DOCS, schemas: Path = SCHEMAS) -> None:
    schemas.mkdir(exist_ok=True)
    for name, model in SCHEMA_FILES.items():
        (schemas / name).write_text(schema_text(model), encoding="utf-8")
    for page, models in DOCS_TABLES.items():
        path = docs / page
        path.write_text(with_tables(path.read_text(encoding="utf-8"), models), encoding="utf-8")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only say what is out of date")
    args = parser.parse_args(argv)
    if args.check:
        stale = out_of_date()
        for name in stale:
            print(f"out of date: {name} (run python -m generalAgent.tools.config_schemas)")
        return 1 if stale else 0
    write_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
