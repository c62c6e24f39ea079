"""The tool registry: reads the three tiers of tools.yaml and builds tools when needed.

`core` tools and `optional` tools with `enabled: true` are built at start-up (the
persistent set). Discovered tools (`enabled: false`) are only *known* at start-up: their
module is imported and the tool built by `load_on_demand` the first time a user
@mentions one, so a dangerous or heavy tool costs nothing until it is asked for.

Tools of MCP servers are not in tools.yaml: the registry reaches them through the
process's `MCPServerManager` (`attach_mcp`), which knows which servers are loaded.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import ValidationError

from generalAgent.config.confined import LeavesFolder, read_confined_text
from generalAgent.display import N_, Message, one_line, os_error_reason, said_of_error
from generalAgent.file_formats import AT_LINE, describe_errors, yaml_line
from generalAgent.i18n import _
from generalAgent.tools.tools_file import RISK, Risk, ToolsFile

if TYPE_CHECKING:
    from collections.abc import Iterable

    from langchain_core.tools import BaseTool

    from generalAgent.tools.environment import ToolEnvironment
    from generalAgent.tools.mcp.manager import MCPServerManager

Tier = Literal["core", "enabled", "discovered"]
TIERS: tuple[Tier, ...] = ("core", "enabled", "discovered")
BUILTIN_PACKAGE = "generalAgent.tools.builtin"
DEFAULT_TOOLS_YAML = Path(__file__).resolve().parents[1] / "config" / "tools.yaml"


class ToolConfigError(Exception):
    """tools.yaml cannot be used; the message names the file and the problem in one line."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    tier: Tier
    description: str
    risk: Risk = "low"
    available_to_subagent: bool = True

    @property
    def module(self) -> str:
        return f"{BUILTIN_PACKAGE}.{self.name}"

    @property
    def shown_description(self) -> str:
        """The description in the UI language: the built-in file's are in the catalog
        (`make i18n` reads them from tools.yaml); a user's own file's are shown as written."""
        return _(self.description)


class ToolRegistry:
    def __init__(self, specs: list[ToolSpec], env: ToolEnvironment) -> None:
        self._specs = {spec.name: spec for spec in specs}
        self._env = env
        self._loaded: dict[str, BaseTool] = {}
        self.mcp: MCPServerManager | None = None

    @classmethod
    def from_yaml(cls, env: ToolEnvironment, path: Path = DEFAULT_TOOLS_YAML) -> ToolRegistry:
        """Validate tools.yaml and build the persistent tools; raises `ToolConfigError`."""
        registry = cls(parse_tools_yaml(path), env)
        for spec in registry.specs():
            if spec.tier == "enabled" and not registry._set_up(spec):
                # Offered on every turn, it could only fail (web_search with no backend): it
                # waits for an @mention, whose answer says what to set.
                registry._specs[spec.name] = replace(spec, tier="discovered")
            elif spec.tier != "discovered":
                registry.load_on_demand(spec.name)
        return registry

    def _set_up(self, spec: ToolSpec) -> bool:
        """Whether the settings give `spec`'s tool what it needs: a tool module may say so
        with `is_set_up(settings) -> bool` (none says no: a tool of a tools file)."""
        try:
            module = importlib.import_module(spec.module)
        except ImportError:
            return True  # load_on_demand names the problem
        check = getattr(module, "is_set_up", None)
        return check is None or bool(check(self._env.settings))

    # -- lookup ---------------------------------------------------------------------
    def specs(self, tier: Tier | None = None) -> list[ToolSpec]:
        return [s for s in self._specs.values() if tier is None or s.tier == tier]

    def spec(self, name: str) -> ToolSpec:
        return self._specs[name]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    def get(self, name: str) -> BaseTool:
        """A tool that is already built; `KeyError` if it is unknown or not loaded yet."""
        return self._loaded[name]

    def is_loaded(self, name: str) -> bool:
        return name in self._loaded

    def persistent_tools(self) -> list[BaseTool]:
        """Core and enabled tools, in tools.yaml order."""
        return [self._loaded[s.name] for s in self._specs.values() if s.tier != "discovered"]

    def load_on_demand(self, name: str) -> BaseTool:
        """Build (once) and return the tool `name`; `KeyError` if tools.yaml does not know it."""
        if name in self._loaded:
            return self._loaded[name]
        spec = self._specs[name]
        module = importlib.import_module(spec.module)
        tool = module.create_tool(self._env)
        if tool.name != name:
            raise ToolConfigError(
                _("{module}.create_tool built {built}, expected {name}").format(
                    module=spec.module, built=repr(tool.name), name=repr(name)
                )
            )
        tool.metadata = {**(tool.metadata or {}), RISK: spec.risk}  # how its approval question looks
        self._loaded[name] = tool
        return tool

    def attach_mcp(self, manager: MCPServerManager) -> None:
        """The MCP servers whose tools this registry offers (their tools join per session)."""
        self.mcp = manager

    def mcp_handles(self) -> list[str]:
        """The configured MCP servers, by the name they are @mentioned with."""
        return self.mcp.handles() if self.mcp is not None else []

    def mcp_tools(self, handles: Iterable[str]) -> list[BaseTool]:
        """The tools of these MCP servers that are loaded, in a fixed order."""
        return self.mcp.tools_of(handles) if self.mcp is not None else []


def parse_tools_yaml(path: Path) -> list[ToolSpec]:
    """The specs of tools.yaml in file order; `ToolConfigError` on the first problem.

    The file's shape is the `ToolsFile` model (tools/tools_file.py); what is left here is
    reading it and that each tool has its module."""
    where = path.name
    try:
        # Never through a link that leaves the file's folder (config/confined.py).
        text = read_confined_text(path, path.parent)
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506
    except LeavesFolder as exc:
        problem = Message(
            N_("{problem}; point TOOLS_CONFIG at the file itself"), {"problem": said_of_error(exc)}
        )
        raise ToolConfigError(problem.shown(_)) from None
    except OSError as exc:
        reason = os_error_reason(exc)
        raise ToolConfigError(
            _("{where}: cannot read it ({reason})").format(
                where=where, reason=reason.shown(_) if isinstance(reason, Message) else reason
            )
        ) from None
    except yaml.YAMLError as exc:
        # The parser's own words stay as they are (they quote the file); the sentence around them is ours.
        raise ToolConfigError(
            _("{where}: not valid YAML ({problem})").format(where=where, problem=one_line(exc))
        ) from None
    try:
        tools_file = ToolsFile.model_validate(data)
    except ValidationError as exc:
        said = describe_errors(exc, ToolsFile, where, partial(yaml_line, text))
        raise ToolConfigError(said[0]) from None
    specs = [
        ToolSpec(
            name=name,
            tier="core" if tier == "core" else "enabled" if getattr(tool, "enabled", False) else "discovered",
            description=tool.description,
            risk=tool.risk,
            available_to_subagent=tool.available_to_subagent,
        )
        for name, tier, tool in tools_file.tools()
    ]
    for spec in specs:
        if importlib.util.find_spec(spec.module) is None:
            line = yaml_line(text, ("core" if spec.tier == "core" else "optional", spec.name))
            at = _(AT_LINE).format(file=where, line=line) if line else where
            raise ToolConfigError(
                _("{where}: unknown tool {name!r} (no module {module})").format(
                    where=at, name=spec.name, module=spec.module
                )
            )
    return specs


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects a key given twice in one mapping (YAML would keep the last)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice", key_node.start_mark
            )
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)
