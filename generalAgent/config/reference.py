"""The settings reference: .env.example and the table of docs/configuration.md, from the model.

    python -m generalAgent.config.reference > .env.example
    python -m generalAgent.config.reference --markdown   # the table between the markers

A test keeps both files and the code from drifting apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_core import PydanticUndefined

from generalAgent.config.errors import allowed_values
from generalAgent.config.paths import PROJECT_ROOT
from generalAgent.config.settings import GROUPS

_GROUP_TITLES = {
    "model": "Model: any OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen/DashScope, Kimi, GLM, vLLM, Ollama, llama.cpp)",
    "governance": "Governance: history, context and loop limits",
    "paths": "Paths, storage and logging",
    "documents": "Documents: extraction previews, chunking, Chinese segmentation, index freshness",
    "tools": "Tools: limits, and which calls ask for approval",
    "mcp": "MCP servers: tools from other programs (docs/mcp.md)",
    "interface": "Interface: the terminal's language",
    "server": "LangGraph Server: who may use a served deployment (docs/deployment.md)",
    "remote": "The terminal on a served deployment: generalagent --server URL (docs/deployment.md)",
}
_REQUIRED = {"model_name", "openai_api_key"}


def render_env_example(user_level: bool = False) -> str:
    """The text of .env.example: every setting, its description and default, by group;
    with `user_level`, the same as `config init` writes it (the file is the user-level
    .env itself, nothing to copy).

    `python -m generalAgent.config.reference > .env.example` regenerates it; a test keeps
    the file and the code from drifting apart.
    """
    head = (
        [
            "# generalAgent settings: your user-level .env, read in every folder (the .env of a",
            "# folder you trust overrides it). Fill in MODEL_NAME and OPENAI_API_KEY",
        ]
        if user_level
        else ["# generalAgent settings. Copy this file to .env and fill in MODEL_NAME and OPENAI_API_KEY"]
    )
    lines = [
        *head,
        "# (and OPENAI_BASE_URL for any provider but OpenAI); everything else is optional.",
        "# Commented lines show the defaults. Environment variables override .env.",
        "# A folder's .env is read only once you trust the folder (the chat asks; generalagent trust).",
        "",
    ]
    for name, cls in GROUPS.items():
        lines.append(f"# --- {_GROUP_TITLES[name]} ---")
        for field, info in cls.model_fields.items():
            lines.append(f"# {info.description}" + ("  (required)" if field in _REQUIRED else ""))
            value = _shown_default(info.default)
            assignment = f"{field.upper()}={value}"
            active = field in _REQUIRED or field == "openai_base_url"
            lines.append(assignment if active else f"# {assignment}")
        lines.append("")
    return "\n".join(lines)


def _shown_default(default: Any) -> str:
    if default is None or default is PydanticUndefined:  # unset, or made when read (DATA_DIR)
        return ""
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, Path) and default.is_absolute():
        try:
            return str(default.relative_to(PROJECT_ROOT))
        except ValueError:
            return str(default)
    return str(default)


def render_settings_markdown() -> str:
    """The settings table of docs/configuration.md (between its settings markers)."""
    lines = []
    for name, cls in GROUPS.items():
        lines += [
            f"### {_GROUP_TITLES[name]}",
            "",
            "| Variable | Default | Allowed | Description |",
            "|---|---|---|---|",
        ]
        for field, info in cls.model_fields.items():
            default = _shown_default(info.default) or ("required" if field in _REQUIRED else "unset")
            allowed = allowed_values(cls, field) or "text"
            lines.append(f"| `{field.upper()}` | `{default}` | {allowed} | {info.description} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def settings_table() -> list[tuple[str, str, str]]:
    """(VARIABLE, default, description) for every setting: the source of the docs' table."""
    rows = []
    for cls in GROUPS.values():
        for field, info in cls.model_fields.items():
            default = info.default
            shown = "" if default is None or default is PydanticUndefined else str(default)
            rows.append((field.upper(), shown, info.description or ""))
    return rows


if __name__ == "__main__":
    import sys

    print(render_settings_markdown() if "--markdown" in sys.argv else render_env_example(), end="")
