"""Sub-agent profiles: the built-in general-purpose `agent` plus top-level `agents/<name>.md`.

A profile's front matter has `name`, `description` and optionally `tools` (an allow-list);
its body is appended to the sub-agent's static system prompt. Bad files are skipped with a
warning naming them, like skills; so is a profile that is a link leading outside the
agents folder (config/confined.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from generalAgent.config.confined import LeavesFolder, read_confined_text
from generalAgent.display import N_, Message, carrying, said_of_error
from generalAgent.front_matter import FrontMatterError, split_front_matter

GENERAL_AGENT = "agent"
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class AgentProfile:
    name: str
    description: str
    tools: tuple[str, ...] | None = None  # None: every tool a sub-agent may use
    instructions: str = ""
    description_zh: str = ""  # the front matter's, for /agents and @-completion in a Chinese UI

    def described(self, language: str) -> str:
        """The description for a person reading the UI in `language` (`en` or `zh`)."""
        return self.description_zh if language == "zh" and self.description_zh else self.description


BUILTIN_AGENT = AgentProfile(
    name=GENERAL_AGENT,
    description="General-purpose sub-agent: takes a self-contained task, works in an isolated "
    "context with the same tools, and returns a concise report.",
    description_zh="通用子智能体：接手一项自成一体的任务，在隔离的上下文中用同样的工具完成，并返回简明的报告。",
)


@dataclass(frozen=True)
class AgentCatalog:
    profiles: tuple[AgentProfile, ...]
    warnings: tuple[Message, ...] = ()  # each said in the UI language where it is shown

    def get(self, name: str) -> AgentProfile | None:
        return next((p for p in self.profiles if p.name == name), None)

    def names(self) -> list[str]:
        return [p.name for p in self.profiles]


def load_agent_profiles(agents_dir: Path) -> AgentCatalog:
    profiles = [BUILTIN_AGENT]
    warnings: list[Message] = []
    files = sorted(agents_dir.glob("*.md")) if agents_dir.is_dir() else []
    for path in files:
        if path.name.lower() == "readme.md":
            continue
        try:
            profile = _parse_profile(path, agents_dir)
        except LeavesFolder as exc:
            warnings.append(Message(N_("{problem}; profile skipped"), {"problem": said_of_error(exc)}))
            continue
        except (FrontMatterError, OSError, UnicodeDecodeError) as exc:
            warnings.append(
                Message(
                    N_("{file}: {problem}; profile skipped"),
                    {"file": str(path), "problem": said_of_error(exc)},
                )
            )
            continue
        if any(p.name == profile.name for p in profiles):
            warnings.append(
                Message(
                    N_("{file}: an agent named {name} already exists; profile skipped"),
                    {"file": str(path), "name": repr(profile.name)},
                )
            )
            continue
        profiles.append(profile)
    return AgentCatalog(tuple(profiles), tuple(warnings))


def _parse_profile(path: Path, agents_dir: Path) -> AgentProfile:
    meta, body = split_front_matter(read_confined_text(path, agents_dir))
    name = meta.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _refusal(N_("'name' must be lowercase letters, digits, '-' or '_'"))
    if name != path.stem:
        raise _refusal(
            N_("'name' is {name} but the file is {file}; they must match"), name=repr(name), file=path.name
        )
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise _refusal(N_("'description' must say in one line what the agent is for"))
    tools = meta.get("tools")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
        raise _refusal(N_("'tools' must be a list of tool names"))
    return AgentProfile(
        name=name,
        description=" ".join(description.split()),
        tools=tuple(tools) if tools is not None else None,
        instructions=body.strip(),
        description_zh=" ".join(str(meta.get("description_zh") or "").split()),
    )


def _refusal(template: str, **fields: object) -> FrontMatterError:
    """A profile the loader refuses, its sentence kept as data (`said`) for the UI."""
    return carrying(FrontMatterError, Message(template, {name: str(value) for name, value in fields.items()}))
