"""tools.yaml as a pydantic model: the three tiers, each tool's settings, and what each key accepts.

The model is the one definition of the file: it validates (tools/registry.py reads through
it), words a bad value (file_formats.py), writes the docs table (docs/configuration.md) and
the JSON schema editors use (generalAgent/schemas/tools.schema.json). The built-in file's
descriptions are the UI's text of each tool: `make i18n` carries them into the catalog
through `extract_descriptions` (babel.cfg), and /tools shows them translated. The model
reads each tool's own English docstring, never these.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from generalAgent.file_formats import accepts, problem
from generalAgent.i18n import N_

Risk = Literal["low", "medium", "high"]
RISKS: tuple[Risk, ...] = ("low", "medium", "high")
# The key of a built tool's metadata that carries its tools.yaml risk to the approval question
# (tools/judge.py); a tool of an MCP server has none and is asked as "medium".
RISK = "risk"


class CoreTool(BaseModel):
    """A tool of the `core` tier: always visible to the model."""

    # strict: YAML's `yes`, "true" or 1 is not a boolean here, as before the model.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    description: str = Field(
        description="What /tools and the Tab menu say the tool does (the model reads the tool's own docstring)",
        json_schema_extra=accepts(N_("a one-line description"), minLength=1),
    )
    risk: Risk = Field(
        default="low",
        description="How the approval question is shown when the tool asks: high in red with a warning, "
        "medium in yellow, low plainly; also the /tools column",
        json_schema_extra=accepts(N_("one of low, medium, high")),
    )
    available_to_subagent: bool = Field(
        default=True,
        description="`false` keeps the tool from sub-agents",
        json_schema_extra=accepts(N_("true or false")),
    )
    category: str | None = Field(
        default=None,
        description="Ignored: read by 0.1.0 and never used, still accepted so its files load",
        json_schema_extra=accepts(N_("any text (ignored)")),
    )

    @field_validator("description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if not value.strip():
            raise problem(N_("the description is empty; give a one-line description"))
        return value.strip()


class OptionalTool(CoreTool):
    """A tool of the `optional` tier: loaded at start (`enabled: true`) or on @mention."""

    enabled: bool = Field(
        description="`true`: loaded at start and visible; `false`: visible only after the user @mentions it",
        json_schema_extra=accepts(N_("true or false")),
    )


class ToolsFile(BaseModel):
    """tools.yaml: the tools of each tier, by the name of their module in tools/builtin/."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    core: dict[str, CoreTool] = Field(
        default_factory=dict,
        description="Tools always visible: name → settings",
        json_schema_extra=accepts(N_("a mapping of tool names to their settings")),
    )
    optional: dict[str, OptionalTool] = Field(
        default_factory=dict,
        description="Tools loaded at start or on @mention (`enabled`): name → settings",
        json_schema_extra=accepts(N_("a mapping of tool names to their settings")),
    )

    @field_validator("core", "optional", mode="before")
    @classmethod
    def _entries(cls, value: Any) -> Any:
        """`core:` with nothing under it is an empty tier; `now:` alone, a tool with no settings."""
        if value is None:
            return {}
        if isinstance(value, dict):
            return {str(name): {} if entry is None else entry for name, entry in value.items()}
        return value

    @model_validator(mode="after")
    def _each_tool_once(self) -> ToolsFile:
        twice = sorted(set(self.core) & set(self.optional))
        if twice:
            raise problem(N_("tool {name!r} is listed twice"), name=twice[0])
        return self

    def tools(self) -> Iterator[tuple[str, Literal["core", "optional"], CoreTool]]:
        """Every tool in file order: core first, then optional."""
        for name, tool in self.core.items():
            yield name, "core", tool
        for name, optional in self.optional.items():
            yield name, "optional", optional


def extract_descriptions(
    fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: Any
) -> Iterator[tuple[int, str, str, list[str]]]:
    """Babel's extraction method for tools.yaml (babel.cfg): each tool's description, with
    its line, as a message of the catalog."""
    text = fileobj.read().decode("utf-8")
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    for tier in root.value if isinstance(root, yaml.MappingNode) else ():
        for _name, settings in tier[1].value if isinstance(tier[1], yaml.MappingNode) else ():
            for key, value in settings.value if isinstance(settings, yaml.MappingNode) else ():
                if key.value == "description":
                    yield value.start_mark.line + 1, "N_", str(value.value).strip(), []
